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

__all__ = ["Config", "ConfigError", "DoesNotFit", "Error", "analytic", "config", "describe_model", "load",
           "loads", "map", "run", "serve", "sweep", "validate", "version"]

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


def map(cfg):  # noqa: A001 - named after the command
    """`wafersim map`: the compiler's plan, in process. Returns the CLI's JSON document as a dict."""
    return _json.loads(_core.map(_as_config(cfg)._core))


def validate(cfg):
    """`wafersim validate`: runs the cross-field checks too; raises ConfigError when they fail."""
    cfg = _as_config(cfg)
    return _json.loads(_core.validate(cfg._core, cfg.name))


def describe_model(name=None, context=0, batch=1):
    """`wafersim describe model [NAME]`: a zoo name or a model file; without a name, the zoo."""
    return _json.loads(_core.describe_model(_os.fspath(name) if name else "", int(context), int(batch)))


def run(cfg):
    """`wafersim run`: the SystemC simulation. SystemC elaborates one design per
    process, so each call runs in a child process; returns the same dict as the CLI."""
    outcome = _json.loads(_core.run(_as_config(cfg)._core))
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


def sweep(base, axes, engine="analytic", jobs=1, mode="grid"):
    """Every point of `axes` ({override path: [values]}) applied to `base`
    (anything config() takes), evaluated with `engine` ("analytic", "sim" or
    "map") on `jobs` threads. mode "grid": every combination, the first axis
    varying slowest; "zip": the i-th value of every axis together. Every point
    is loaded before any runs, so a bad value raises ConfigError first."""
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
    evaluate = ENGINES[engine]

    def one(index):
        try:
            document = evaluate(configs[index])
        except DoesNotFit as refused:
            document = dict(refused.record)
        document["point"] = points[index]
        return document

    with _futures.ThreadPoolExecutor(max_workers=max(1, int(jobs))) as pool:
        return SweepResult(pool.map(one, range(len(points))))
