# Sourced by the stages of a device run (core.sh, sanitize.sh, anchors.sh) once they are
# in the repository's root: the output folder $OUT (default out/device), the stage's
# time budget BUDGET_S (default 540 s) with left(), the seconds of it not yet spent,
# and everything the stage prints kept in $OUT/$1 as well as shown; then unpack_stage.
OUT="${OUT:-out/device}"
mkdir -p "$OUT"
budget="${BUDGET_S:-540}"
t0=$SECONDS
left() { echo $((budget - (SECONDS - t0))); }
exec > >(tee -a "$OUT/$1") 2>&1

# unpack_stage FOLDER ARCHIVE SUMMARY [SUBFOLDER...], once $work and $device_dir are set:
# a fresh $work with the bundle's programs in bin/ ($wb, $trainer) and the stage's results
# folder FOLDER/ (its SUBFOLDERs made). note() shows a line and adds it to the stage's
# summary, FOLDER/summary.md ($summary); pack() writes FOLDER/ to $OUT/ARCHIVE through a
# temporary file renamed into place (a run cut short leaves the last whole archive) and
# copies the summary to $OUT/SUMMARY.
unpack_stage() {
  stage_folder=$1 stage_archive=$2 stage_summary=$3
  shift 3
  rm -rf "$work" && mkdir -p "$work/bin" "$work/$stage_folder"
  local sub
  for sub in "$@"; do mkdir -p "$work/$stage_folder/$sub"; done
  xz -dc "$device_dir/bundle.tar.xz" | tar -C "$work/bin" -xf -
  wb="$work/bin/wb"
  trainer="$work/bin/trainer"
  summary="$work/$stage_folder/summary.md"
}
pack() {
  tar -C "$work" -czf "$OUT/$stage_archive.tmp" "$stage_folder" && mv "$OUT/$stage_archive.tmp" "$OUT/$stage_archive"
  cp "$summary" "$OUT/$stage_summary"
}
note() { echo "$*" | tee -a "$summary"; }
