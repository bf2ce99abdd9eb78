#!/usr/bin/env bash
# The error study behind the bf16 ops' tolerances (their headers in contract/ops/ quote
# it): every bf16 op checked in emulation (the CUDA ladder) and on the CPU (the reference
# port) at the check shapes over seeds 1..N, then, per op and tensor, the largest share
# of its tolerance any variant used and the largest |mean signed error| in ulps of the
# bf16 outputs (over records of at least 256 elements).
#
#   bash tools/bf16_error_study.sh [SEEDS] [OP...]   (default 20 seeds, every bf16 op;
#                                                    needs build/wb, or WB=path)
set -euo pipefail
cd "$(dirname "$0")/.."
wb="${WB:-build/wb}"
seeds="${1:-20}"
shift || true
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
ops="$*"
[[ -n "$ops" ]] || ops=$("$wb" list 2>/dev/null | awk '/^[a-z].*]  bf16 storage/ {print $1}')
for seed in $(seq 1 "$seeds"); do
  for op in $ops; do
    for backend in emu cpu; do
      "$wb" check "$op" --backend "$backend" --seed "$seed" --json "$dir/${backend}_${op}_$seed.json" >/dev/null 2>&1 ||
        { echo "bf16_error_study: $op on $backend, seed $seed: a check failed" >&2; exit 1; }
    done
  done
done
/usr/bin/python3 - "$dir" <<'PY'
import collections, glob, json, sys
worst = collections.defaultdict(lambda: [0.0, 0.0, 0])
for f in glob.glob(sys.argv[1] + "/*.json"):
    for r in json.load(open(f))["records"]:
        if r["status"] != "ok":
            continue
        for e in r["errors"]:
            w = worst[(r["op"], e["tensor"])]
            w[0] = max(w[0], e.get("tol_used") or 0.0)
            if e.get("bias_elements", 0) >= 256:
                w[1] = max(w[1], abs(e["bias_ulps"]))
            w[2] += 1
print("%-26s %-8s %14s %18s %8s" % ("op", "tensor", "tolerance used", "|mean signed err|", "records"))
for (op, tensor), (used, bias, n) in sorted(worst.items()):
    print("%-26s %-8s %13.1f%% %14.3f ulp %8d" % (op, tensor, 100 * used, bias, n))
PY
