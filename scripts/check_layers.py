#!/usr/bin/python3
"""Checks that every #include follows the layers of docs/ARCHITECTURE.md:
a folder includes only itself and the folders it may use. Exit 1 with one line
per violation, so a test fails when the code and the diagram part ways."""
import pathlib
import re
import sys

# Folder -> folders it may include (besides itself). Most specific prefix wins.
ALLOWED = {
    "models/config": [],
    "models": ["models/config"],
    "workloads": ["models"],
    "mapping": ["workloads", "models"],
    "sim/engine": ["models"],
    "sim/experiment": ["mapping", "workloads", "models"],
    "sim/functional": ["mapping", "workloads", "models"],
    "sim/serving": ["mapping", "workloads", "models"],
    "sim/gpu_reference": ["workloads", "models"],
    "sim/backend": ["sim/experiment", "sim/engine", "mapping", "workloads", "models"],
    "sim/reports": ["sim/gpu_reference", "sim/functional", "sim/serving", "sim/backend", "sim/experiment", "mapping", "workloads", "models"],
    "sim/cli": ["sim/reports", "sim/gpu_reference", "sim/functional", "sim/serving", "sim/backend", "sim/experiment", "sim/engine", "mapping", "workloads",
                "models"],
    "python": ["sim/reports", "sim/gpu_reference", "sim/functional", "sim/serving", "sim/backend", "sim/experiment", "mapping", "workloads",
               "models"],
    "tests/oracles": ["models", "tests/sim"],
}


def layer_of(path, layers):
    matches = [layer for layer in layers if path == layer or path.startswith(layer + "/")]
    return max(matches, key=len) if matches else None


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parent.parent)
    layers = list(ALLOWED)
    include = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
    violations = []
    for source in sorted(root.rglob("*")):
        if source.suffix not in (".h", ".cpp") or "build" in source.relative_to(root).parts[0]:
            continue
        relative = source.relative_to(root).as_posix()
        own = layer_of(relative, layers)
        if own is None:
            continue
        for number, line in enumerate(source.read_text().splitlines(), 1):
            match = include.match(line)
            if not match:
                continue
            target = layer_of(match.group(1), layers)
            if target is None or target == own:
                continue
            allowed = ALLOWED[own] + [layer for layer in layers if layer.startswith(own + "/")]
            if not any(target == a or target.startswith(a + "/") for a in allowed):
                violations.append(f"{relative}:{number}: {own} may not include {match.group(1)} ({target})")
    for violation in violations:
        print(violation)
    print(f"layers: {len(violations)} violation(s)")
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
