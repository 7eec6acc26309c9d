#!/usr/bin/env bash
# Regenerates the golden results in tests/data/golden/ from the current build:
# each file names an experiment and its --set overrides; this reruns it and
# records the exact cycles. Review the diff: a timing change must be deliberate.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
wafersim="${WAFERSIM:-$root/build/sim/wafersim}"
[ -x "$wafersim" ] || { echo "no wafersim binary at $wafersim (build first, or set WAFERSIM)" >&2; exit 2; }
cd "$root"
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
  /usr/bin/python3 - "$golden" "$result" <<'PY'
import json, sys
golden_path, result_path = sys.argv[1], sys.argv[2]
spec = json.load(open(golden_path))
metrics = json.load(open(result_path))["metrics"]
golden = {"experiment": spec["experiment"], "set": spec["set"],
          "expected": {key: metrics[key] for key in ("total_cycles", "cycles_per_token", "breakdown", "per_layer")}}
with open(golden_path, "w") as out:
    json.dump(golden, out, indent=2, sort_keys=True)
    out.write("\n")
PY
  rm -f "$result"
  echo "updated $golden"
done
