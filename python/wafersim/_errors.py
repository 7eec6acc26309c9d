"""The exceptions the wafersim package raises (the CLI's exit codes 1, 2 and 3)."""
import json


_OVERRIDE = "--set "


class Error(Exception):
    """Bad input that is not a configuration error, or an internal failure (CLI exit 1 or 2)."""


class ConfigError(Error):
    """A configuration a user can fix (CLI exit 2): where it is and what is wrong.

    str(error) is the CLI's one-line message ("exp.yaml:7:5: unknown key ...");
    `file`, `line` and `column` locate it (line and column are 0 when the
    value came from an override or a default), `key` is the parameter path and
    `message` the text after the location. An error in an override has the
    override in `override` ("workload.batch=0", as `--set` takes it) and no
    `file`."""

    def __init__(self, what, file="", line=0, column=0, key=""):
        super().__init__(what)
        # The library names an override's error by the override, as the CLI prints it.
        self.override = file[len(_OVERRIDE):] if file.startswith(_OVERRIDE) else ""
        self.file = "" if self.override else file
        self.line = line
        self.column = column
        self.key = key
        prefix = _location(file, line, column)
        self.message = what[len(prefix) + 2:] if prefix and what.startswith(prefix + ": ") else what


class DoesNotFit(Error):
    """The model does not fit the hardware (CLI exit 3). `record` is the JSON
    document the CLI writes with --json: {fits: false, error, config_hash, version}."""

    def __init__(self, message, record=None):
        super().__init__(message)
        self.message = message
        self.record = record if record is not None else {"fits": False, "error": message}


def _location(file, line, column):
    if line <= 0:
        return file
    if column <= 0:
        return f"{file}:{line}"
    return f"{file}:{line}:{column}"


def _does_not_fit_from_record(record_text):
    record = json.loads(record_text)
    return DoesNotFit(record["error"], record)
