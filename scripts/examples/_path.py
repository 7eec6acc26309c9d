"""Finds the wafersim package: on PYTHONPATH or installed for this python3, in
the build/python folder of the source tree these examples come from, or under
the prefix they were installed to (PREFIX/share/wafersim/examples)."""
import pathlib
import sys

try:
    import wafersim  # noqa: F401
except ImportError:
    here = pathlib.Path(__file__).resolve().parent
    for candidate in (here.parents[1] / "build" / "python", here.parents[2] / "lib" / "python3" / "dist-packages"):
        if (candidate / "wafersim").is_dir():
            sys.path.insert(0, str(candidate))
            break
