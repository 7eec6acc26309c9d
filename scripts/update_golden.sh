#!/usr/bin/env bash
# Regenerates the golden results in tests/data/golden/ from the current build:
# each file names an experiment and its --set overrides; this reruns it and
# records the metrics `wafersim describe metrics` marks golden, keyed by JSON
# path. Review the diff: a timing change must be deliberate.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
wafersim="${WAFERSIM:-$root/build/sim/wafersim}"
[ -x "$wafersim" ] || { echo "no wafersim binary at $wafersim (build first, or set WAFERSIM)" >&2; exit 2; }
cd "$root"
golden_paths="$(mktemp)"
trap 'rm -f "$golden_paths"' EXIT
"$wafersim" describe metrics --json - | /usr/bin/python3 -c '
import json, sys
print("\n".join(m["path"] for m in json.load(sys.stdin)["metrics"] if m["golden"]))' > "$golden_paths"
for golden in tests/data/golden/*.json; do
  mapfile -t args < <(/usr/bin/python3 -c '
import json, sys
spec = json.load(open(sys.argv[1]))
print(spec["experiment"])
for s in spec["set"]:
    print("--set"); print(s)
' "$golden")
  result="$(mktemp)"
  "$wafersim" run "${args[@]}" --quiet --json "$result"
  /usr/bin/python3 - "$golden" "$result" "$golden_paths" <<'PY'
import json, sys
golden_path, result_path, paths_path = sys.argv[1:4]
spec = json.load(open(golden_path))
result = json.load(open(result_path))
def at(document, path):  # null for a figure the result leaves out (no prefill for a MoE model)
    for key in path.split("."):
        if not isinstance(document, dict) or key not in document:
            return None
        document = document[key]
    return document
paths = open(paths_path).read().split()
golden = {"experiment": spec["experiment"], "set": spec["set"],
          "expected": {path: at(result, path) for path in paths}}
with open(golden_path, "w") as out:
    json.dump(golden, out, indent=2, sort_keys=True)
    out.write("\n")
PY
  rm -f "$result"
  echo "updated $golden"
done
