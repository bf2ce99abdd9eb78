# Sourced by the stages of a device run (core.sh, sanitize.sh, anchors.sh) once they are
# in the repository's root: the output folder $OUT (default out/device), the stage's
# time budget BUDGET_S (default 540 s) with left(), the seconds of it not yet spent,
# and everything the stage prints kept in $OUT/$1 as well as shown.
OUT="${OUT:-out/device}"
mkdir -p "$OUT"
budget="${BUDGET_S:-540}"
t0=$SECONDS
left() { echo $((budget - (SECONDS - t0))); }
exec > >(tee -a "$OUT/$1") 2>&1
