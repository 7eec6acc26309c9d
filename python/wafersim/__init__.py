"""wafersim from Python: configurations, the closed form, the compiler's plan
and the SystemC simulation, returning the same JSON documents as the CLI.

    import wafersim
    cfg = wafersim.load("workloads/experiments/quickstart.yaml")
    faster = wafersim.config(cfg, **{"hardware.fabric.hop_latency_cycles": 2})
    print(wafersim.analytic(faster)["metrics"]["tokens_per_second"])

docs/PYTHON.md documents every function."""
import concurrent.futures as _futures
import itertools as _itertools
import json as _json
import os as _os
import sys as _sys
import threading as _threading
import time as _time

from . import _sweep_folder
from ._errors import ConfigError, DoesNotFit, Error

try:
    from . import _core
except ImportError as _error:  # another interpreter than the one _core was built for, most often
    import sys as _sys
    from ._build_info import PYTHON_EXECUTABLE as _BUILT_FOR, PYTHON_VERSION as _BUILT_VERSION

    _this = f"{_sys.version_info.major}.{_sys.version_info.minor}"
    raise ImportError(
        f"wafersim's compiled module was built for Python {_BUILT_VERSION} ({_BUILT_FOR}); this is Python {_this} "
        f"({_sys.executable}). Run it with {_BUILT_FOR}, or build it for this interpreter: cmake -S . -B build "
        f"-DPython_EXECUTABLE={_sys.executable} && cmake --build build") from _error

__all__ = ["Config", "ConfigError", "DoesNotFit", "Error", "analytic", "compare", "config", "describe_model",
           "load", "loads", "map", "run", "serve", "sweep", "validate", "version"]

# The experiment `config()` starts from when given no base: the built-in
# default that the CLI runs without a file (workloads/experiments/quickstart.yaml,
# compiled into the module), so the two cannot part.
DEFAULT_NAME = "workloads/experiments/quickstart.yaml (built in)"


class Config:
    """A loaded, validated experiment: every parameter resolved. str() is the
    resolved YAML (`wafersim validate --print`), `hash` its configuration hash."""

    def __init__(self, source, name, overrides):
        self._source = source  # ("path", path) or ("text", yaml_text)
        self.name = name  # the file name errors and `validate` give
        self._overrides = list(overrides)
        if source[0] == "path":
            self._core = _core.load_path(source[1], self._overrides)
        else:
            self._core = _core.load_text(source[1], name, self._overrides)

    @property
    def hash(self):
        return self._core.hash()

    @property
    def overrides(self):
        """The overrides applied after loading, as `--set` would take them."""
        return list(self._overrides)

    def to_yaml(self):
        return self._core.to_yaml()

    def preset(self, section):
        """The preset a section was built from ("wse3"), or "" for none."""
        return self._core.preset(section)

    def __str__(self):
        return self.to_yaml()

    def __repr__(self):
        return f"<wafersim.Config {self.name} hash {self.hash}>"

    def __eq__(self, other):
        return isinstance(other, Config) and self.hash == other.hash

    def __hash__(self):
        return hash(self.hash)


def _yaml_value(value):
    """An override's value as `--set` takes it: strings as written, the rest as
    JSON, which is YAML (true, 2, [1, 2], {preset: wse3} as {"preset": "wse3"})."""
    if isinstance(value, str):
        return value
    if isinstance(value, range):
        value = list(value)
    return _json.dumps(value)


def _override_list(overrides):
    """{"hardware.fabric.colors": 16} or {"hardware__fabric__colors": 16} -> ["hardware.fabric.colors=16"].
    Whole sections go first, as in a sweep point: `model` and `model.n_layers` combine."""
    items = [(path.replace("__", "."), value) for path, value in overrides.items()]
    items.sort(key=lambda item: item[0].count("."))
    return [f"{path}={_yaml_value(value)}" for path, value in items]


def load(path, **overrides):
    """Loads an experiment file (or "-" for standard input), with overrides."""
    return Config(("path", _os.fspath(path)), "<stdin>" if path == "-" else _os.fspath(path),
                  _override_list(overrides))


def loads(yaml_text, name="<text>", **overrides):
    """Loads an experiment from YAML text; `name` stands for the file in errors."""
    return Config(("text", yaml_text), name, _override_list(overrides))


def config(base=None, **overrides):
    """A configuration from `base` with overrides applied. `base` is None
    (the built-in default experiment), a Config, a file path, or a dict of sections (YAML's
    structure: {"hardware": "wse3", "workload": {"batch": 4}}). Overrides are
    keyword arguments with `__` for the dots (hardware__wafers=2) or, through
    **{...}, dotted paths ("hardware.fabric.hop_latency_cycles": 2)."""
    extra = _override_list(overrides)
    if base is None:
        return Config(("path", ""), DEFAULT_NAME, extra)  # the empty path: the built-in default
    if isinstance(base, Config):
        return Config(base._source, base.name, base._overrides + extra)
    if isinstance(base, dict):
        return Config(("text", _json.dumps(base)), "<dict>", extra)
    if isinstance(base, (str, _os.PathLike)):
        return Config(("path", _os.fspath(base)), _os.fspath(base), extra)
    raise TypeError(f"config(): base must be None, a Config, a path or a dict, not {type(base).__name__}")


def _as_config(cfg):
    return cfg if isinstance(cfg, Config) else config(cfg)


def analytic(cfg):
    """`wafersim analytic`: the closed form, in process. Returns the CLI's JSON document as a dict."""
    return _json.loads(_core.analytic(_as_config(cfg)._core))


def compare(cfg, against):
    """`wafersim compare --against GPUxN` (h100xN, b200xN, a100xN): the closed form beside the
    GPU reference of the same model and workload, in process. Returns the CLI's JSON document as a dict."""
    return _json.loads(_core.compare(_as_config(cfg)._core, str(against)))


def map(cfg):  # noqa: A001 - named after the command
    """`wafersim map`: the compiler's plan, in process. Returns the CLI's JSON document as a dict."""
    return _json.loads(_core.map(_as_config(cfg)._core))


def validate(cfg):
    """`wafersim validate`: the checks run, analytic and serve make on their input before compiling;
    raises the ConfigError they would."""
    cfg = _as_config(cfg)
    return _json.loads(_core.validate(cfg._core, cfg.name))


def describe_model(name=None, context=0, batch=1):
    """`wafersim describe model [NAME]`: a zoo name or a model file; without a name, the zoo."""
    return _json.loads(_core.describe_model(_os.fspath(name) if name else "", int(context), int(batch)))


def run(cfg):
    """`wafersim run`: the SystemC simulation. SystemC elaborates one design per
    process, so each call runs in a child process; returns the same dict as the CLI.
    Ctrl-C raises KeyboardInterrupt at once and ends the child."""
    return _run(cfg, None)


def _run(cfg, cancel):
    """run(cfg); once `cancel` (a threading.Event) is set, the child is killed and Error raised."""
    outcome = _json.loads(_core.run(_as_config(cfg)._core, cancel))
    if "result" in outcome:
        return outcome["result"]
    if "config_error" in outcome:
        e = outcome["config_error"]
        raise ConfigError(e["what"], e["file"], e["line"], e["column"], e["key"])
    if "command_error" in outcome:
        e = outcome["command_error"]
        if e["exit_code"] == 3:
            record = _json.loads(e["what"])
            raise DoesNotFit(record["error"], record)
        raise Error(e["what"])
    raise Error("internal error: " + outcome.get("internal_error", "no result"))


def serve(cfg):
    """`wafersim serve`: the experiment's serving section over the closed form of
    its plan (the CLI's default backend), in process. Returns the CLI's JSON document as a dict."""
    return _json.loads(_core.serve(_as_config(cfg)._core))


def version():
    return _core.version()


__version__ = _core.version()


ENGINES = {"analytic": analytic, "sim": run, "map": map}


class SweepResult(list):
    """One dict per point, in order: the engine's JSON document (a point that
    does not fit has {"fits": false, "error": ...}) with the point's values
    under "point"."""

    def frame(self):
        """The points as a pandas DataFrame, one column per dotted path (needs pandas)."""
        try:
            import pandas
        except ImportError as error:
            raise Error("SweepResult.frame() needs pandas, which is not installed") from error
        return pandas.DataFrame([_flatten(point) for point in self])


def _flatten(document, prefix=""):
    flat = {}
    for key, value in document.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict):
            flat.update(_flatten(value, path + "."))
        elif not isinstance(value, list):
            flat[path] = value
    return flat


def _point_label(index, total, point):
    """"point 3 of 12 (workload.batch=4)", as the CLI's sweep names a point."""
    where = f"point {index + 1} of {total}"
    if not point:
        return where
    values = ", ".join(f"{path}={_yaml_value(value)}" for path, value in point.items())
    return f"{where} ({values})"


def _progress_reporter(progress, total):
    """progress: False (silent), True (a line per finished point on stderr) or
    a callable taking one event dict per finished point."""
    if callable(progress):
        return progress
    if not progress:
        return lambda event: None

    def print_line(event):
        done = f"sweep: {event['done']}/{total} done"
        if event["cached"]:
            line = f"{done}; {_point_label(event['index'], total, event['point'])}: {event['status']}, kept from " \
                   f"{event['folder']}"
        else:
            line = f"{done}; {_point_label(event['index'], total, event['point'])}: {event['status']} in " \
                   f"{event['seconds']:.2f} s"
        print(line, file=_sys.stderr, flush=True)

    return print_line


def sweep(base, axes, engine="analytic", jobs=1, mode="grid", out=None, progress=False):
    """Every point of `axes` ({override path: [values]}) applied to `base`
    (anything config() takes), evaluated with `engine` ("analytic", "sim" or
    "map") on `jobs` threads. mode "grid": every combination, the first axis
    varying slowest; "zip": the i-th value of every axis together. Every point
    is loaded before any runs, so a bad value raises ConfigError first.

    out: a folder (`wafersim sweep --out`'s format) where each finished point
    is kept as points/<config hash>.json; a point already there (run by the
    same engine, from Python or the CLI) is read back instead of run, so a
    sweep interrupted or extended runs only what the folder lacks.
    progress: True prints a line per finished point on stderr; a callable is
    called with a dict per finished point: done, total, index, point, status
    ("ok" or "does_not_fit"), cached (read from `out`), seconds, folder."""
    if engine not in ENGINES:
        raise Error(f"unknown engine {engine!r} (engines: {', '.join(ENGINES)})")
    base = _as_config(base)
    paths = list(axes)
    values = [list(axes[path]) for path in paths]
    if mode == "grid":
        combos = list(_itertools.product(*values))
    elif mode == "zip":
        if len({len(v) for v in values}) > 1:
            raise Error("sweep(mode='zip') needs every axis to have the same number of values")
        combos = list(zip(*values))
    else:
        raise Error(f"unknown sweep mode {mode!r} (modes: grid, zip)")
    points = [dict(zip(paths, combo)) for combo in combos]
    configs = [config(base, **point) for point in points]
    # Set when the sweep stops early (Ctrl-C, a point's error): no point starts, running simulations end.
    cancel = _threading.Event()
    evaluate = (lambda cfg: _run(cfg, cancel)) if engine == "sim" else ENGINES[engine]
    report = _progress_reporter(progress, len(points))
    folder = _sweep_folder.Folder(out) if out is not None else None
    try:
        return _sweep_points(points, configs, engine, evaluate, max(1, int(jobs)), folder, report, cancel)
    finally:
        if folder is not None:
            folder.close()


def _sweep_points(points, configs, engine, evaluate, jobs, folder, report, cancel):
    total = len(points)
    documents = [None] * total
    done = 0

    def finished(index, status, cached, seconds):
        nonlocal done
        done += 1
        report({"done": done, "total": total, "index": index, "point": points[index], "status": status,
                "cached": cached, "seconds": seconds, "folder": folder.points if folder else None})

    # The folder's records first; then each distinct experiment once (points
    # that resolve to the same configuration share a record, as in the CLI).
    runs = {}  # config hash -> indices of its points
    for index, cfg in enumerate(configs):
        record = folder.finished(cfg.hash, engine) if folder else None
        if record is not None:
            documents[index] = record["result"]
            finished(index, record["status"], True, 0.0)
        else:
            runs.setdefault(cfg.hash if folder else index, []).append(index)

    def one(index):
        if cancel.is_set():
            raise Error("the sweep stopped before this point")
        start = _time.monotonic()
        try:
            document, fits = evaluate(configs[index]), True
        except DoesNotFit as refused:
            document, fits = dict(refused.record), False
        seconds = _time.monotonic() - start
        if folder:
            folder.keep(configs[index], engine, points[index], document, not fits, seconds)
        return document, fits, seconds

    with _futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        pending = {pool.submit(one, indices[0]): indices for indices in runs.values()}
        try:
            for future in _futures.as_completed(pending):
                document, fits, seconds = future.result()
                for k, index in enumerate(pending[future]):
                    documents[index] = document if k == 0 else _json.loads(_json.dumps(document))  # its own dict
                    finished(index, "ok" if fits else "does_not_fit", False, seconds)
        except BaseException:
            cancel.set()  # running simulations end; what has not started does not start
            for future in pending:
                future.cancel()
            raise
    result = SweepResult()
    for index, document in enumerate(documents):
        document = dict(document)
        document["point"] = points[index]
        result.append(document)
    return result
