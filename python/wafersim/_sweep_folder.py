"""The output folder of a sweep, in the format of `wafersim sweep --out DIR`
(docs/SWEEPS.md, "The output folder"): each finished point is
DIR/points/<config hash>.json, the CLI's point record, beside
DIR/points/<config hash>.yaml, the point as a complete experiment. A point
whose record is there (and was run by the same engine) is read back, not run
again, whichever of the two wrote it."""
import fcntl
import json
import os
import tempfile

from ._errors import Error

# Exit codes a record holds (the CLI's): a point that ran, one that does not fit.
_EXIT_OK = 0
_EXIT_DOES_NOT_FIT = 3


def _write_atomically(path, text):
    """Writes `text` to a temporary name beside `path` ("<name>.tmp-XXXXXX",
    which the CLI clears up) and renames it into place: a reader sees a whole file or none."""
    folder, name = os.path.split(path)
    handle, temporary = tempfile.mkstemp(prefix=name + ".tmp-", dir=folder)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


def json_value(value):
    """A point's value as JSON holds it (a range as its list)."""
    if isinstance(value, range):
        value = list(value)
    return json.loads(json.dumps(value))


class Folder:
    """DIR, held for one sweep: DIR/sweep.lock is locked (flock) as the CLI
    locks it, so two sweeps, from Python or the command line, never write one
    folder at once."""

    def __init__(self, path):
        self.path = os.fspath(path)
        if not self.path:
            raise Error("sweep(out=...) needs a folder name, got an empty one")
        if os.path.realpath(self.path) == os.path.realpath(os.sep):
            raise Error(f"sweep(out={self.path!r}) is the file-system root; choose a folder for the sweep")
        self.points = os.path.join(self.path, "points")
        try:
            os.makedirs(self.points, exist_ok=True)
        except OSError as error:
            raise Error(f"cannot create {self.points}: {error.strerror}") from error
        if os.path.islink(self.points):
            raise Error(f"cannot write {self.points}: it is a symbolic link, not a folder")
        self._lock_path = os.path.join(self.path, "sweep.lock")
        try:
            self._lock = os.open(self._lock_path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
        except OSError as error:
            raise Error(f"cannot write {self._lock_path}: {error.strerror}") from error
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as error:
            os.close(self._lock)
            raise Error(f"another wafersim sweep is writing to {self.path}; wait for it or choose another "
                        "folder") from error

    def close(self):
        """Releases DIR: the lock file goes while the lock is still held, as the CLI's does."""
        try:
            os.unlink(self._lock_path)
        except OSError:
            pass
        os.close(self._lock)

    def __enter__(self):
        return self

    def __exit__(self, *exception):
        self.close()

    def _base(self, config_hash):
        return os.path.join(self.points, config_hash)

    def finished(self, config_hash, engine):
        """The record of a point this engine finished (it ran, or it does not
        fit), or None: no record, one of another engine, one that failed or
        that does not parse. Those run again."""
        try:
            with open(self._base(config_hash) + ".json", encoding="utf-8") as record_file:
                record = json.load(record_file)
        except (OSError, ValueError):
            return None
        if not isinstance(record, dict) or record.get("engine") != engine:
            return None
        if record.get("status") not in ("ok", "does_not_fit") or not isinstance(record.get("result"), dict):
            return None
        return record

    def keep(self, cfg, engine, axes, document, does_not_fit, seconds):
        """Writes a finished point: its experiment, then its record (the CLI's fields)."""
        base = self._base(cfg.hash)
        _write_atomically(base + ".yaml", cfg.to_yaml())
        record = {
            "axes": {path: json_value(value) for path, value in axes.items()},
            "config_hash": cfg.hash,
            "engine": engine,
            "error": "does not fit: " + document.get("error", "") if does_not_fit else "",
            "exit_code": _EXIT_DOES_NOT_FIT if does_not_fit else _EXIT_OK,
            "result": document,
            "status": "does_not_fit" if does_not_fit else "ok",
            "wall_seconds": seconds,
        }
        _write_atomically(base + ".json", json.dumps(record, indent=2, ensure_ascii=False) + "\n")
