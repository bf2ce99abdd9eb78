#!/usr/bin/env bash
# A sharded sweep as a Slurm job array: task K of N sweeps shard K/N of one problem set
# on its own GPU, then a second job (after all tasks succeeded) merges the shards'
# reports and chooses the best variants from the merged report.
#
#   export WB_SHARD_DIR=out/shards/$(date +%Y%m%d-%H%M%S)   # fresh per run: merge takes every file there
#   jid=$(sbatch --parsable --array=1-8 tools/slurm_sweep_array.sh)
#   sbatch --dependency=afterok:"$jid" tools/slurm_sweep_array.sh merge
#
# Array task ids are the K of --shard K/N: number them from 1 (--array=1-N). Every task
# must land on the same GPU model (one partition, or --constraint): wb merge refuses
# reports of different devices, commits, builds, seeds or timing options. wb is built
# beforehand on the shared file system (tools/build.sh); the merge needs no GPU.
#
# Environment: WB (default build/wb), WB_SEED (default 2026; one seed for all shards),
# WB_SWEEP_ARGS (what to sweep, default "--all --shape llmc-dev"), WB_SHARD_DIR (default
# out/shards), WB_BEST (the best.json the merge job updates, default results/best.json).
#SBATCH --job-name=wb-sweep
#SBATCH --gpus=1
#SBATCH --time=02:00:00
set -euo pipefail
cd "${SLURM_SUBMIT_DIR:-$(dirname "$0")/..}"  # submit from the repository's root (Slurm runs a copy of this script)

wb="${WB:-build/wb}"
seed="${WB_SEED:-2026}"
dir="${WB_SHARD_DIR:-out/shards}"
read -r -a sweep_args <<<"${WB_SWEEP_ARGS:---all --shape llmc-dev}"

if [ "${1:-}" = "merge" ]; then
  # wb merge refuses missing or overlapping shards and mixed devices; wb best then takes
  # the merged report as it takes any other.
  "$wb" merge "$dir"/shard-*.json --out "$dir/merged.json"
  "$wb" best "$dir/merged.json" --out "${WB_BEST:-results/best.json}"
  exit 0
fi

if [ -z "${SLURM_ARRAY_TASK_ID:-}" ]; then
  echo "slurm_sweep_array: run as an array task (sbatch --array=1-N $0), or with 'merge'" >&2
  exit 2
fi
if [ "${SLURM_ARRAY_TASK_MIN:-1}" != 1 ]; then
  echo "slurm_sweep_array: number the array tasks from 1 (--array=1-N): they are the K of --shard K/N" >&2
  exit 2
fi
# N: the array's task count (where Slurm does not set it, its highest id: the same with --array=1-N).
shards="${SLURM_ARRAY_TASK_COUNT:-$SLURM_ARRAY_TASK_MAX}"
mkdir -p "$dir"
"$wb" sweep "${sweep_args[@]}" --seed "$seed" --shard "$SLURM_ARRAY_TASK_ID/$shards" \
  --out "$dir/shard-$SLURM_ARRAY_TASK_ID.json"
