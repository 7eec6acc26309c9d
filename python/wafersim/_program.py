"""The `wafersim` command that `pip install .` puts on PATH: the program built
with the package, installed inside it."""
import os
import sys


def main():
    program = os.path.join(os.path.dirname(os.path.abspath(__file__)), "wafersim")
    if not os.access(program, os.X_OK):
        sys.exit(f"wafersim: the program is not installed with this package ({program}); "
                 "install with pip install . or run build/sim/wafersim")
    os.execv(program, [program, *sys.argv[1:]])
