"""A signal to a Python process inside wafersim.run (or a simulated
wafersim.sweep): SIGINT raises KeyboardInterrupt at once (the run is not
waited for), and however the process ends (SIGINT, SIGTERM, SIGKILL) the
simulation's processes end with it.

The run is the quickstart's with 2,000 decoded tokens: its prefill alone is
tens of seconds in a child of the simulation's process, the decode about
half an hour. The signal is sent while that prefill child runs, so the
bound on the exit (a minute, DEADLINE_S) is a small part of what the run would
take even on a quiet machine, and far more than stopping takes under load."""
import os
import pathlib
import signal
import subprocess
import sys
import textwrap
import time
import unittest

SOURCE = pathlib.Path(os.environ["WAFERSIM_SOURCE_DIR"])
QUICKSTART = SOURCE / "workloads/experiments/quickstart.yaml"
DEADLINE_S = 60  # from the signal to the end of the process and of every process it started

SCRIPT = textwrap.dedent("""
    import sys
    import wafersim
    cfg = wafersim.config(sys.argv[1], workload__decode_tokens=2000)
    try:
        wafersim.run(cfg)
    except KeyboardInterrupt:
        print("KeyboardInterrupt", flush=True)
        sys.exit(130)
    print("finished", flush=True)
""")


# Two such runs at once, as points of a simulated sweep.
SWEEP_SCRIPT = textwrap.dedent("""
    import sys
    import wafersim
    base = wafersim.config(sys.argv[1], workload__decode_tokens=2000)
    try:
        wafersim.sweep(base, {"workload.seed": [1, 2, 3]}, engine="sim", jobs=2)
    except KeyboardInterrupt:
        print("KeyboardInterrupt", flush=True)
        sys.exit(130)
    print("finished", flush=True)
""")


def processes():
    """{pid: (parent pid, start time, state)} of every process."""
    table = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        table[int(entry)] = (int(fields[1]), fields[19], fields[0])
    return table


def descendants(pid):
    """[(pid, start time)] of the processes below `pid`, nearest first: a pid with its start time names one process."""
    table = processes()
    found, parents = [], [pid]
    while parents:
        parent = parents.pop(0)
        for child, (ppid, start, _) in table.items():
            if ppid == parent:
                found.append((child, start))
                parents.append(child)
    return found


def alive(processes_found):
    """The ones of `processes_found` still running (a zombie has ended)."""
    table = processes()
    return [(pid, start) for pid, start in processes_found
            if pid in table and table[pid][1] == start and table[pid][2] != "Z"]


class SignalDuringRun(unittest.TestCase):
    def start(self, script=SCRIPT, below=2):
        """The Python process, once `below` processes run under it (a simulation's process and its prefill
        child each); and those processes."""
        # A session of its own: Ctrl-C at a terminal signals the whole group, this test's runner left out.
        process = subprocess.Popen([sys.executable, "-c", script, str(QUICKSTART)], stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True, start_new_session=True)
        self.addCleanup(self.stop, process)
        # No wall-clock bound: only the run ending first fails.
        while len(descendants(process.pid)) < below:
            if process.poll() is not None:
                self.fail(f"the run ended before its prefill child was seen: {process.communicate()}")
            time.sleep(0.05)
        return process, descendants(process.pid)

    def stop(self, process):
        for pid, _ in alive(descendants(process.pid)):
            os.kill(pid, signal.SIGKILL)
        if process.poll() is None:
            process.kill()
        process.communicate()

    def ends(self, process, below, signal_number, group=False):
        if group:
            os.killpg(process.pid, signal_number)
        else:
            process.send_signal(signal_number)
        try:
            out, err = process.communicate(timeout=DEADLINE_S)
        except subprocess.TimeoutExpired:
            self.fail(f"still running {DEADLINE_S} s after signal {signal_number}")
        deadline = time.monotonic() + DEADLINE_S
        while alive(below) and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertEqual(alive(below), [], "processes of the run outlived it")
        self.assertNotIn("finished", out)
        return out, err

    def test_sigint_raises_keyboard_interrupt_and_ends_the_simulation(self):
        process, below = self.start()
        out, err = self.ends(process, below, signal.SIGINT)
        self.assertEqual(process.returncode, 130, err)
        self.assertEqual(out, "KeyboardInterrupt\n")

    def test_ctrl_c_raises_keyboard_interrupt_and_ends_the_simulation(self):
        # The terminal's SIGINT reaches the simulation's processes too: the Python process decides.
        process, below = self.start()
        out, err = self.ends(process, below, signal.SIGINT, group=True)
        self.assertEqual(process.returncode, 130, err)
        self.assertEqual(out, "KeyboardInterrupt\n")

    def test_ctrl_c_stops_a_simulated_sweep_and_every_run_of_it(self):
        # Its runs wait in worker threads, where Python runs no signal handler: the sweep stops them.
        process, below = self.start(SWEEP_SCRIPT, below=4)
        out, err = self.ends(process, below, signal.SIGINT, group=True)
        self.assertEqual(process.returncode, 130, err)
        self.assertEqual(out, "KeyboardInterrupt\n")

    def test_sigterm_ends_the_process_and_the_simulation(self):
        process, below = self.start()
        self.ends(process, below, signal.SIGTERM)
        self.assertEqual(process.returncode, -signal.SIGTERM)

    def test_sigkill_ends_the_process_and_the_simulation(self):
        process, below = self.start()
        self.ends(process, below, signal.SIGKILL)
        self.assertEqual(process.returncode, -signal.SIGKILL)


if __name__ == "__main__":
    unittest.main()
