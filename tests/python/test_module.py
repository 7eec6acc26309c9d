"""The wafersim Python module, imported from the build tree: the same documents
as the CLI, errors as exceptions, and the simulation run twice in one process."""
import contextlib
import fcntl
import io
import json
import os
import pathlib
import subprocess
import tempfile
import unittest

import wafersim

SOURCE = pathlib.Path(os.environ["WAFERSIM_SOURCE_DIR"])
BINARY = os.environ["WAFERSIM"]
QUICKSTART = SOURCE / "workloads/experiments/quickstart.yaml"
TINY_DENSE = SOURCE / "tests/data/experiments/tiny-dense.yaml"


def cli_json(*args):
    completed = subprocess.run([BINARY, *map(str, args), "--quiet", "--json", "-"], capture_output=True, text=True)
    if completed.returncode != 0:
        raise AssertionError(f"wafersim {' '.join(map(str, args))}: exit {completed.returncode}: {completed.stderr}")
    return json.loads(completed.stdout)


def machine_dependent_paths():
    declared = json.loads(subprocess.run([BINARY, "describe", "metrics", "--json", "-"], capture_output=True,
                                         text=True, check=True).stdout)["metrics"]
    return [metric["path"] for metric in declared if metric["machine_dependent"]]


def without(document, paths):
    """The document less the figures of the machine it ran on (wall time, memory)."""
    document = json.loads(json.dumps(document))
    for path in paths:
        *parents, last = path.split(".")
        node = document
        for key in parents:
            node = node[key]
        del node[last]
    return document


class AgainstTheCli(unittest.TestCase):
    def test_analytic_of_the_quickstart_is_the_cli_document(self):
        paths = machine_dependent_paths()
        ours = wafersim.analytic(wafersim.load(QUICKSTART))
        theirs = cli_json("analytic", QUICKSTART)
        self.assertEqual(set(ours), set(theirs))
        self.assertEqual(without(ours, paths), without(theirs, paths))
        self.assertGreater(ours["metrics"]["tokens_per_second"], 100)
        # The energy model too: a full 8B decode on a WSE-3 within a CS-3's rating.
        energy = ours["metrics"]["energy"]
        self.assertGreater(energy["joules_per_token"], 0)
        self.assertEqual(set(energy["breakdown"]), {"compute", "sram", "fabric", "offwafer", "static"})
        self.assertAlmostEqual(sum(energy["breakdown"].values()), energy["total_joules"])
        self.assertLess(energy["peak_power_watts"], energy["rated_power_watts"])
        self.assertFalse(energy["exceeds_rated_power"])
        self.assertIn("energy", ours["metrics"]["prefill"])

    def test_overrides_match_set(self):
        cfg = wafersim.config(QUICKSTART, **{"hardware.fabric.hop_latency_cycles": 2}, workload__batch=2)
        theirs = cli_json("validate", QUICKSTART, "--set", "hardware.fabric.hop_latency_cycles=2",
                          "--set", "workload.batch=2")
        self.assertEqual(cfg.hash, theirs["config_hash"])
        self.assertEqual(wafersim.validate(cfg), dict(theirs, file=str(QUICKSTART)))
        self.assertIn("hop_latency_cycles: 2", str(cfg))

    def test_map_and_describe_model_are_the_cli_documents(self):
        ours = wafersim.map(TINY_DENSE)
        theirs = cli_json("map", TINY_DENSE)
        del ours["compile_seconds"], theirs["compile_seconds"]
        self.assertEqual(ours, theirs)
        self.assertEqual(wafersim.describe_model("tiny-dense"), cli_json("describe", "model", "tiny-dense"))
        self.assertEqual(wafersim.describe_model(), cli_json("describe", "model"))

    def test_config_without_a_base_is_the_cli_s_built_in_default(self):
        quickstart = os.path.join(SOURCE, "workloads", "experiments", "quickstart.yaml")
        self.assertEqual(wafersim.config(), wafersim.load(quickstart))
        self.assertEqual(wafersim.config().name, wafersim.DEFAULT_NAME)
        self.assertEqual(wafersim.config(model="qwen3-32b").preset("model"), "qwen3-32b")

    def test_compare_is_the_cli_document_and_refuses_as_the_cli_does(self):
        ours = wafersim.compare(TINY_DENSE, "h100x2")
        self.assertEqual(ours, cli_json("compare", TINY_DENSE, "--against", "h100x2"))  # no wall-clock figure in it
        self.assertEqual(ours["wafer"]["backend"], "analytic")
        with self.assertRaises(wafersim.Error):
            wafersim.compare(TINY_DENSE, "h100x0")
        with self.assertRaises(wafersim.DoesNotFit):
            wafersim.compare(wafersim.config(TINY_DENSE, model="llama3.1-405b"), "h100x1")

    def test_serve_is_the_cli_document(self):
        tiny_serve = SOURCE / "tests/data/serving/tiny-serve.yaml"
        self.assertEqual(wafersim.serve(wafersim.load(tiny_serve)), cli_json("serve", tiny_serve))

    def test_the_module_gives_its_version_and_exports_only_its_own_names(self):
        self.assertEqual(wafersim.__version__, wafersim.version())
        self.assertEqual(wafersim.__version__, subprocess.run([BINARY, "--version"], capture_output=True, text=True,
                                                               check=True).stdout.split()[-1])
        for name in ("json", "os", "itertools", "concurrent"):
            self.assertFalse(hasattr(wafersim, name), name)

    def test_a_config_prints_as_yaml_that_loads_back_to_the_same_hash(self):
        cfg = wafersim.config({"hardware": "tiny", "model": "tiny-dense"}, hardware__fabric__colors=16)
        again = wafersim.loads(str(cfg))
        self.assertEqual(cfg.hash, again.hash)
        self.assertEqual(cfg, again)
        self.assertEqual(len(cfg.hash), 16)

    def test_a_section_given_as_a_dict_is_the_same_section_in_a_file(self):
        in_file = wafersim.loads("hardware: {preset: tiny, wafers: 2}\nmodel: tiny-dense\n")
        as_base = wafersim.config({"hardware": {"preset": "tiny", "wafers": 2}, "model": "tiny-dense"})
        as_override = wafersim.config({"hardware": "wse3", "model": "tiny-dense"},
                                      hardware={"preset": "tiny", "wafers": 2})
        self.assertEqual(as_base, in_file)
        self.assertEqual(as_override, in_file)
        self.assertEqual(as_override.preset("hardware"), "tiny")
        self.assertIn("wafers: 2", str(as_override))
        ours = wafersim.config(TINY_DENSE, hardware={"preset": "tiny", "wafers": 2})
        theirs = cli_json("validate", TINY_DENSE, "--set", "hardware={preset: tiny, wafers: 2}")
        self.assertEqual(ours.hash, theirs["config_hash"])
        with self.assertRaises(wafersim.ConfigError) as caught:
            wafersim.config(TINY_DENSE, hardware={"preset": "tiny", "wafer": 2})
        self.assertIn("unknown key 'wafer' in hardware", caught.exception.message)


class Errors(unittest.TestCase):
    def test_a_bad_config_raises_config_error_with_its_line(self):
        with tempfile.TemporaryDirectory() as folder:
            path = pathlib.Path(folder) / "bad.yaml"
            path.write_text("hardware: tiny\nmodel: tiny-dense\nworkload:\n  bach: 2\n")
            with self.assertRaises(wafersim.ConfigError) as caught:
                wafersim.load(path)
        error = caught.exception
        self.assertEqual((error.file, error.line, error.column), (str(path), 4, 3))
        self.assertIn("did you mean 'batch'", error.message)
        self.assertTrue(str(error).startswith(f"{path}:4:3: "))
        self.assertIsInstance(error, wafersim.Error)

    def test_a_bad_override_raises_config_error(self):
        with self.assertRaises(wafersim.ConfigError) as caught:
            wafersim.config(TINY_DENSE, **{"workload.batch": 0})
        self.assertEqual(caught.exception.key, "workload.batch")
        self.assertEqual(caught.exception.override, "workload.batch=0")
        self.assertEqual(caught.exception.file, "")
        self.assertIn("--set workload.batch=0", str(caught.exception))
        with self.assertRaises(wafersim.ConfigError):
            wafersim.config(TINY_DENSE, **{"hardware.fabric.hop_latency": 1})
        with self.assertRaises(wafersim.ConfigError) as in_file:
            wafersim.loads("hardware: tiny\nmodel: tiny-dense\nworkload: {bach: 4}\n", name="bad.yaml")
        self.assertEqual((in_file.exception.file, in_file.exception.override), ("bad.yaml", ""))

    def test_a_model_too_large_raises_does_not_fit_with_the_cli_record(self):
        cfg = wafersim.config({"hardware": "tiny", "model": "llama3.1-8b"}, hardware__wafers=1)
        for evaluate in (wafersim.analytic, wafersim.map, wafersim.run):
            with self.assertRaises(wafersim.DoesNotFit) as caught:
                evaluate(cfg)
            self.assertFalse(caught.exception.record["fits"])
            self.assertEqual(caught.exception.record["config_hash"], cfg.hash)

    def test_validate_raises_what_serve_and_analytic_raise(self):
        # A trace file serve cannot read, and a functional check analytic cannot make: validate's ConfigError too.
        cases = [({"serving.trace_file": "missing.csv"}, wafersim.serve),
                 ({"sim.functional": True, "model.weight_dtype": "int4"}, wafersim.analytic)]
        for overrides, evaluate in cases:
            with self.subTest(overrides=overrides):
                cfg = wafersim.config(TINY_DENSE, **overrides)
                with self.assertRaises(wafersim.ConfigError) as evaluated:
                    evaluate(cfg)
                with self.assertRaises(wafersim.ConfigError) as validated:
                    wafersim.validate(cfg)
                self.assertEqual(str(validated.exception), str(evaluated.exception))

    def test_other_errors_raise_error(self):
        with self.assertRaises(wafersim.Error):
            wafersim.describe_model("no-such-model")
        with self.assertRaises(wafersim.Error):
            wafersim.sweep(TINY_DENSE, {"workload.batch": [1]}, engine="nope")


class Simulation(unittest.TestCase):
    def test_run_twice_in_one_process(self):
        cfg = wafersim.load(TINY_DENSE)
        first = wafersim.run(cfg)
        second = wafersim.run(wafersim.config(cfg, workload__batch=2))
        third = wafersim.run(cfg)
        self.assertEqual(first["engine"], "sim")
        self.assertEqual(first["metrics"]["tokens"], 4)
        self.assertEqual(second["metrics"]["tokens"], 8)
        paths = machine_dependent_paths()
        self.assertEqual(without(first, paths), without(third, paths))
        self.assertEqual(without(first, paths), without(cli_json("run", TINY_DENSE), paths))


class Sweeps(unittest.TestCase):
    def test_grid_first_axis_slowest(self):
        points = wafersim.sweep(TINY_DENSE, {"workload.batch": [1, 2], "hardware.fabric.hop_latency_cycles": [1, 3]},
                                jobs=2)
        self.assertEqual([p["point"] for p in points],
                         [{"workload.batch": 1, "hardware.fabric.hop_latency_cycles": 1},
                          {"workload.batch": 1, "hardware.fabric.hop_latency_cycles": 3},
                          {"workload.batch": 2, "hardware.fabric.hop_latency_cycles": 1},
                          {"workload.batch": 2, "hardware.fabric.hop_latency_cycles": 3}])
        self.assertEqual([p["experiment"]["batch"] for p in points], [1, 1, 2, 2])
        slower = wafersim.analytic(wafersim.config(TINY_DENSE, **{"hardware.fabric.hop_latency_cycles": 3}))
        self.assertEqual(points[1]["metrics"], slower["metrics"])
        self.assertGreater(points[1]["metrics"]["total_cycles"], points[0]["metrics"]["total_cycles"])

    def test_a_point_that_does_not_fit_is_recorded(self):
        points = wafersim.sweep({"hardware": "tiny", "model": "tiny-dense"},
                                {"model": ["tiny-dense", "llama3.1-8b"]}, engine="map", mode="zip")
        self.assertEqual([p["fits"] for p in points], [True, False])

    def test_sim_sweep(self):
        points = wafersim.sweep(TINY_DENSE, {"workload.batch": [1, 2]}, engine="sim", jobs=2)
        self.assertEqual([p["metrics"]["tokens"] for p in points], [4, 8])


class SweepFolders(unittest.TestCase):
    """sweep(out=DIR) keeps each finished point in DIR (the CLI's sweep folder)
    and reads back what is there instead of running it again."""

    AXES = {"workload.batch": [1, 2, 3]}

    def setUp(self):
        self.scratch = tempfile.TemporaryDirectory()
        self.folder = pathlib.Path(self.scratch.name) / "sweep"

    def tearDown(self):
        self.scratch.cleanup()

    def record_path(self, batch):
        return self.folder / "points" / (wafersim.config(TINY_DENSE, workload__batch=batch).hash + ".json")

    def sweep(self, **options):
        """The sweep and the progress events of the points it ran (not read back)."""
        events = []
        points = wafersim.sweep(TINY_DENSE, self.AXES, out=self.folder, progress=events.append, **options)
        self.assertEqual([event["done"] for event in events], list(range(1, len(points) + 1)))
        return points, [event for event in events if not event["cached"]]

    def test_a_second_sweep_runs_nothing_and_returns_the_same_documents(self):
        first, ran = self.sweep(jobs=2)
        self.assertEqual(sorted(event["index"] for event in ran), [0, 1, 2])
        for batch, point in zip(self.AXES["workload.batch"], first):
            record = json.loads(self.record_path(batch).read_text())
            self.assertEqual((record["engine"], record["status"], record["axes"]),
                             ("analytic", "ok", {"workload.batch": batch}))
            self.assertEqual(record["result"], {key: value for key, value in point.items() if key != "point"})
        again, ran_again = self.sweep()
        self.assertEqual(ran_again, [])
        self.assertEqual(json.dumps(again), json.dumps(first))  # byte for byte
        # The same figures as a sweep that keeps nothing.
        paths = [path for path in machine_dependent_paths() if path.split(".")[0] in first[0]]
        fresh = wafersim.sweep(TINY_DENSE, self.AXES)
        self.assertEqual([without(p, paths) for p in fresh], [without(p, paths) for p in first])

    def test_an_interrupted_sweep_runs_only_the_points_it_lacks(self):
        first, _ = self.sweep()
        self.record_path(2).unlink()  # as if the sweep had stopped before point 2 finished
        resumed, ran = self.sweep()
        self.assertEqual([(event["index"], event["point"]) for event in ran], [(1, {"workload.batch": 2})])
        self.assertTrue(self.record_path(2).exists())
        paths = [path for path in machine_dependent_paths() if path.split(".")[0] in first[0]]
        self.assertEqual([without(p, paths) for p in resumed], [without(p, paths) for p in first])
        self.assertEqual(json.dumps(resumed[0]), json.dumps(first[0]))
        # A record of another engine is not this sweep's result: every point runs.
        _, ran_map = self.sweep(engine="map")
        self.assertEqual(len(ran_map), 3)

    def test_a_point_that_does_not_fit_is_kept_as_such(self):
        axes = {"model": ["tiny-dense", "llama3.1-8b"]}
        base = {"hardware": "tiny", "model": "tiny-dense"}
        first = wafersim.sweep(base, axes, engine="map", out=self.folder)
        events = []
        again = wafersim.sweep(base, axes, engine="map", out=self.folder, progress=events.append)
        self.assertEqual([(e["status"], e["cached"]) for e in events], [("ok", True), ("does_not_fit", True)])
        self.assertEqual(again, first)
        self.assertEqual([p["fits"] for p in again], [True, False])

    def test_progress_prints_a_line_per_finished_point(self):
        lines = io.StringIO()
        with contextlib.redirect_stderr(lines):
            wafersim.sweep(TINY_DENSE, self.AXES, out=self.folder, progress=True)
            self.record_path(3).unlink()
            wafersim.sweep(TINY_DENSE, self.AXES, out=self.folder, progress=True)
        printed = lines.getvalue().splitlines()
        self.assertEqual(len(printed), 6)
        self.assertTrue(printed[0].startswith("sweep: 1/3 done; point "), printed[0])
        self.assertIn("point 3 of 3 (workload.batch=3): ok in ", printed[5])
        self.assertEqual(sum("kept from" in line for line in printed[3:]), 2)
        quiet = io.StringIO()
        with contextlib.redirect_stderr(quiet):  # silent by default
            wafersim.sweep(TINY_DENSE, {"workload.batch": [4]}, out=self.folder)
        self.assertEqual(quiet.getvalue(), "")

    def test_the_cli_and_python_resume_each_other_s_folders(self):
        sweep_file = pathlib.Path(self.scratch.name) / "batch.yaml"
        sweep_file.write_text(f"base: {TINY_DENSE}\nengine: analytic\naxes:\n  workload.batch: [1, 2, 3]\n")
        cli = subprocess.run([BINARY, "sweep", sweep_file, "--out", self.folder, "--jobs", "1"], capture_output=True,
                             text=True)
        self.assertEqual(cli.returncode, 0, cli.stderr)
        points, ran = self.sweep()
        self.assertEqual(ran, [])
        for batch, point in zip(self.AXES["workload.batch"], points):
            self.assertEqual(json.loads(self.record_path(batch).read_text())["result"],
                             {key: value for key, value in point.items() if key != "point"})

        ours = pathlib.Path(self.scratch.name) / "python"
        wafersim.sweep(TINY_DENSE, self.AXES, out=ours)
        records = {path.name: path.read_bytes() for path in (ours / "points").glob("*.json")}
        self.assertEqual(len(records), 3)
        cli = subprocess.run([BINARY, "sweep", sweep_file, "--out", ours, "--resume"], capture_output=True, text=True)
        self.assertEqual(cli.returncode, 0, cli.stderr)
        self.assertEqual({path.name: path.read_bytes() for path in (ours / "points").glob("*.json")}, records)
        self.assertEqual(len((ours / "results.csv").read_text().splitlines()), 1 + 3)

    def test_a_folder_another_sweep_is_writing_is_refused(self):
        self.folder.mkdir()
        with open(self.folder / "sweep.lock", "w") as held:
            fcntl.flock(held, fcntl.LOCK_EX)
            with self.assertRaises(wafersim.Error) as caught:
                wafersim.sweep(TINY_DENSE, self.AXES, out=self.folder)
        self.assertIn("another wafersim sweep is writing to", str(caught.exception))


if __name__ == "__main__":
    unittest.main()
