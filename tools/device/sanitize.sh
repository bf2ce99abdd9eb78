#!/usr/bin/env bash
# tools/device/sanitize.sh: the campaign's `sanitize` stage on a GPU host, from the bundle
# of tools/device/bundle.sh (carry .device). compute-sanitizer's tools over `wb check OP
# --backend cuda` at the check's own (small) shapes, one process per (tool, op), within
# BUDGET_S seconds (default 540), in this order of value:
#   memcheck   out-of-bounds and misaligned accesses, device-side errors, leaks
#   synccheck  barriers and warp-synchronous calls a part of the block or warp misses
#   initcheck  reads of device memory never written
#   racecheck  shared-memory hazards (the slowest: 10-100x a plain run)
# each tool over every op before the next tool starts, so that a short window still
# brings back the first tools whole. A (tool, op) that runs out of its share of the time is
# recorded as cut; a sanitizer that refuses the device (or is missing) is recorded with
# its message, and the stage goes on.
# Everything lands in $OUT (default out/device): sanitize.log, sanitize.md (a table tool x
# op of the errors found, then every distinct report: its kind and where it fired) and
# sanitize.tgz (folder s/: one log per (tool, op)). Three files: a device call of its own.
# TOOLS="memcheck synccheck" and OPS="..." choose; PER_RUN_S caps one (tool, op) run
# (default 120). REHEARSE=1 (tools/device/rehearse.sh) runs it on a machine without a GPU:
# checks in emulation, and SANITIZER (a stand-in program with compute-sanitizer's output
# format, tools/device/fixtures/fake-compute-sanitizer) in place of the real one.
set -uo pipefail
cd "$(dirname "$0")/../.."
source tools/device/stage_start.sh sanitize.log

device_dir="${DEVICE_DIR:-.device}"
work="${WORK:-/tmp/wbsan}"
per_run="${PER_RUN_S:-120}"
if [[ "${REHEARSE:-0}" == 1 ]]; then
  backend=emu
  sanitizer="${SANITIZER:-tools/device/fixtures/fake-compute-sanitizer}"
  default_ops="residual_forward layernorm_forward"
  # The rehearsal exercises this script, not the kernels: the smallest shape and the
  # default configurations keep each run a few seconds (the full check of
  # layernorm_forward in emulation took a minute quiet and was cut under CI's load).
  check_args=(--shapes tiny --defaults)
else
  backend=cuda
  sanitizer="${SANITIZER:-$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)}"
  default_ops=""
  check_args=()
fi
tools="${TOOLS:-memcheck synccheck initcheck racecheck}"
unpack_stage s sanitize.tgz sanitize.md

# The CUDA libraries, as core.sh finds them.
source tools/device/cuda_libs.sh
cuda_library_path "$work/bin/lib" python3
export LD_LIBRARY_PATH="$LIBDIRS:${LD_LIBRARY_PATH:-}"
export OMP_NUM_THREADS=4

note "# compute-sanitizer over wb check --backend $backend, $(date -u +%FT%TZ)"
if [[ ! -x "$sanitizer" ]]; then
  note "sanitize: no compute-sanitizer at $sanitizer: nothing run"
  pack
  exit 0
fi
note "sanitizer: $("$sanitizer" --version 2>&1 | grep -iE 'version|compute-sanitizer' | head -1)"
ops=${OPS:-${default_ops:-$("$wb" list 2>/dev/null | grep -E '^[a-z_0-9]+ +\[' | awk '{print $1}')}}
n_ops=$(wc -w <<<"$ops")

# The errors a log reports: compute-sanitizer ends with "ERROR SUMMARY: N error(s)"; a log
# without that line is a run that never got that far (refused, crashed or cut).
errors_of() { grep -oE 'ERROR SUMMARY: [0-9]+' "$1" | tail -1 | awk '{print $3}'; }

declare -A cell
tool_rank=0
for tool in $tools; do
  tool_rank=$((tool_rank + 1))
  tools_left=$(( $(wc -w <<<"$tools") - tool_rank + 1 ))
  done_ops=0
  for op in $ops; do
    # This tool's share of what is left, spread over its remaining ops (and the tools after
    # it get theirs), capped by PER_RUN_S.
    l=$(( $(left) / tools_left / (n_ops - done_ops) ))
    ((l > per_run)) && l=$per_run
    done_ops=$((done_ops + 1))
    if ((l < 5)); then cell[$tool,$op]="no time"; continue; fi
    log="$work/s/$tool-$op.log"
    timeout "$l" "$sanitizer" --tool "$tool" --print-limit 20 --error-exitcode 99 \
      "$wb" check "$op" --backend "$backend" --variants no-torch --seed 1 "${check_args[@]}" >"$log" 2>&1
    rc=$?
    n=$(errors_of "$log")
    if [[ -n "$n" ]]; then
      cell[$tool,$op]="$n"
    elif ((rc == 124)); then
      cell[$tool,$op]="cut at ${l} s"
    else
      cell[$tool,$op]="refused (rc=$rc)"
      # A sanitizer that cannot use the device says so on every op: its first message is
      # noted once per tool, the rest are in the logs.
      if [[ "${refused:-}" != "$tool" ]]; then
        refused=$tool
        first=$(grep -m1 -iE 'error|unable|not supported|fail' "$log" || head -1 "$log")
        note "$tool on $op: no error summary, rc=$rc: ${first:-no output}"
      fi
    fi
    echo "$tool $op: ${cell[$tool,$op]}"
  done
  note "$tool: done at $((SECONDS - t0)) s"
  pack
done

# The table, then every distinct report: its first line ("Invalid __global__ read of size
# 4 bytes", "Barrier error ...", "Uninitialized __global__ memory read ...") and where
# (the "at KERNEL ... in FILE:LINE" line after it), counted over the ops.
{
  echo
  echo "| op | $(sed 's/ / | /g' <<<"$tools") |"
  echo "|---$(for _ in $tools; do printf '|---'; done)|"
  for op in $ops; do
    printf '| %s |' "$op"
    for tool in $tools; do printf ' %s |' "${cell[$tool,$op]:-not run}"; done
    echo
  done
  echo
  echo "## What fired"
  found=0
  for log in "$work"/s/*.log; do
    [[ -e "$log" ]] || continue
    n=$(errors_of "$log")
    [[ -n "$n" && "$n" != 0 ]] || continue
    found=1
    echo "### $(basename "$log" .log): $n"
    awk '/^========= [A-Z]/ && !/ERROR SUMMARY|COMPUTE-SANITIZER/ {kind=$0; sub(/^========= /, "", kind); getline; where=$0;
         sub(/^=========[ ]+/, "", where); print "- " kind " -- " where}' "$log" | sort | uniq -c | sort -rn | head -10
  done
  ((found)) || echo "nothing: every run that finished reported 0 errors"
} >>"$summary"
cat "$summary"
pack
