#!/usr/bin/env bash
# The CUDA compiler launcher of wb_kernels (CMAKE_CUDA_COMPILER_LAUNCHER): runs the
# nvcc command it is given, which carries --resource-usage, and keeps what ptxas says
# of each kernel (registers, shared memory, stack, spills; per target architecture)
# beside the object, as <object>.resources, for cmake/launch_resources.py. Every other
# line of the compiler's output passes through unchanged.
set -uo pipefail
object="" source="" previous=""
for arg in "$@"; do
  [ "$previous" = "-o" ] && object="$arg"
  case "$arg" in *.cu) source="$arg" ;; esac
  previous="$arg"
done
captured=$(mktemp)
"$@" >"$captured" 2>&1
status=$?
grep -v -e '^ptxas info' -e '^    [0-9]* bytes stack frame' "$captured" >&2
if [ $status -eq 0 ] && [ -n "$object" ]; then
  { echo "source $source"; grep -e '^ptxas info' -e '^    [0-9]* bytes stack frame' "$captured"; } >"$object.resources.tmp" &&
    mv "$object.resources.tmp" "$object.resources"
fi
rm -f "$captured"
exit $status
