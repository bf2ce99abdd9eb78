#!/usr/bin/env bash
# tools/device/bundle.sh [BUILD_DIR]: the bundle a GPU host needs to run wb from this
# machine's build, into .device/ (ignored by git; `carry` it with the device call; another
# folder with DEVICE_DIR, as the rehearsal does, tools/device/rehearse.sh):
#   .device/bundle.tar.xz  wb and trainer (debug sections stripped, the symbol table kept) plus the shared libraries they load
#                          that a GPU host without Debian's -dev packages lacks (lib/)
#   .device/data/          TinyShakespeare as llm.c token files, for the trainer
#   .device/workloads/     the GPT-2 124M trainer's op calls at B=4, T=1024 (MODEL_ARGS, the
#                          trainer's flags, choose another model), one file per (op, shape),
#                          so that a sweep cut short still leaves whole reports; and
#   .device/workloads-bf16/ the bf16 form of each
#   .device/llmc.tar.xz    llm.c's source (dev/cuda, llmc/, the two CUDA trainers, Makefile, COMMIT), for
#                          tools/device/anchors.sh, from the git directory LLMC_GIT (default: the snapshot
#                          /work/.mirror/karpathy+llm.c/repo when it exists); never committed here
# The CUDA libraries (cudart, cuBLAS, cuBLASLt, cuDNN) are not carried: they are hundreds of
# MB; tools/device/core.sh finds them on the host (/usr/local/cuda, the Python environment's
# nvidia/*/lib). The build must target the card (CMAKE_CUDA_ARCHITECTURES holds 90 for Hopper).
set -euo pipefail
cd "$(dirname "$0")/../.."
build="${1:-build}"
out="${DEVICE_DIR:-.device}"
model_args="${MODEL_ARGS:---init d12 -b 4 -t 1024}"
if [[ "$out" == .device ]]; then
  grep -qx '/.device/' .git/info/exclude 2>/dev/null || echo '/.device/' >>.git/info/exclude
fi
rm -rf "$out" && mkdir -p "$out/stage/lib" "$out/data" "$out/workloads"

for exe in wb trainer; do
  cp "$build/$exe" "$out/stage/$exe"
  strip --strip-debug "$out/stage/$exe"  # keeps the symbol table: the launch-limit check names kernels by it
done
# Every library ldd resolves, except the C/C++ runtime (the host's is as new or newer) and
# the CUDA libraries (found on the host).
ldd "$build/wb" "$build/trainer" | awk '/=> \//{print $1, $3}' | sort -u | while read -r name path; do
  case "$name" in
    libc.so.*|libm.so.*|libstdc++.so.*|libgcc_s.so.*|libdl.so.*|libpthread.so.*|librt.so.*|ld-linux*) ;;
    libcudart.so.*|libcublas.so.*|libcublasLt.so.*|libcudnn*.so.*|libcuda.so.*) ;;
    *) cp -L "$path" "$out/stage/lib/$name" ;;
  esac
done
# wb and the trainer link the same kernels (a fatbin of about 50 MB in each): in one xz
# stream whose dictionary spans wb, the trainer's copy costs almost nothing.
tar -C "$out/stage" -cf - wb trainer lib | xz -T1 "--lzma2=preset=${XZ_LEVEL:-6},dict=160MiB" >"$out/bundle.tar.xz"
rm -rf "$out/stage"

# The text and the vocabulary come from $WB_DATA or the build's offline data cache (../shared/data
# where this machine has one), else are downloaded into $out/data; only the token files and
# gpt2_tokenizer.bin travel, so a download is removed from the bundle.
"$build/prepare_data" tinyshakespeare --out "$out/data" >/dev/null
rm -rf "$out/data/tinyshakespeare.txt" "$out/data/gpt2"
"$build/trainer" --backend cpu $model_args --dump-workloads "$out/workloads.json" >/dev/null
"$build/wb" list 2>/dev/null | grep -E '^[a-z_0-9]+ +\[' >"$out/ops.txt"
# One file per (op, shape), numbered by the size of the shape (a proxy for the cost of its
# CPU reference), and the bf16 form of each where the registry has one.
mkdir -p "$out/workloads-bf16"
python3 - "$out" <<'PY'
import json, math, re, sys
out = sys.argv[1]
dims = {}
for line in open(f"{out}/ops.txt"):
    m = re.match(r"(\S+)\s+\[([^\]]*)\]", line)
    dims[m.group(1)] = m.group(2).split()
w = json.load(open(f"{out}/workloads.json"))
calls = sorted(w["calls"], key=lambda c: math.prod(c["shape"].values()))
for i, call in enumerate(calls):
    json.dump(dict(w, calls=[call]), open(f"{out}/workloads/{i:02d}-{call['op']}.json", "w"), indent=1)
    twin = call["op"] + "_bf16"
    if twin in dims:
        shape = {d: call["shape"][d] for d in dims[twin]}
        one = dict(w, calls=[dict(call, op=twin, shape=shape)])
        json.dump(one, open(f"{out}/workloads-bf16/{i:02d}-{twin}.json", "w"), indent=1)
PY
# llm.c's source for the anchors stage: it travels, it is never committed.
llmc_git="${LLMC_GIT-/work/.mirror/karpathy+llm.c/repo}"
if [[ -n "$llmc_git" ]] && git -C "$llmc_git" rev-parse --verify -q HEAD >/dev/null 2>&1; then
  mkdir -p "$out/llmc"
  git -C "$llmc_git" archive HEAD dev/cuda llmc train_gpt2.cu train_gpt2_fp32.cu Makefile | tar -C "$out/llmc" -xf -
  echo "$(git -C "$llmc_git" rev-parse HEAD) $(git -C "$llmc_git" log -1 --format=%cs HEAD)" >"$out/llmc/COMMIT"
  tar -C "$out/llmc" -cf - . | xz -T2 "-${XZ_LEVEL:-6}" >"$out/llmc.tar.xz"
  rm -rf "$out/llmc"
  echo "llm.c: $(du -h "$out/llmc.tar.xz" | cut -f1) in $out/llmc.tar.xz (commit $(cut -c1-12 <<<"$(git -C "$llmc_git" rev-parse HEAD)"))"
else
  echo "llm.c: no git directory at LLMC_GIT='${llmc_git}': anchors.sh will skip llm.c (its trainers and dev/cuda kernels)"
fi
du -sh "$out" "$out/bundle.tar.xz"
# What a device call sends: the checkout's files that git does not ignore, and what it
# carries (.device). The device tool refuses a call over 64 MiB, so a bundle over it is an
# error here, before a GPU window.
# (a file deleted but still tracked is passed over)
tracked=$(git ls-files -z --cached --others --exclude-standard | { du -cb --files0-from=- 2>/dev/null || true; } | tail -1 | cut -f1)
travels=$(( (tracked + $(du -sb "$out" | cut -f1) + 1048575) / 1048576 ))  # rounded up
limit="${TRAVEL_LIMIT_MIB:-64}"
echo "travels: $travels MiB, the tracked tree ($((tracked / 1048576)) MiB) and $out (limit $limit MiB)"
if ((travels > limit)); then
  echo "bundle.sh: $travels MiB would travel, over the device tool's $limit MiB: a device call would be refused" >&2
  echo "  (the largest tracked files: git ls-files -z | xargs -0 du -b | sort -rn | head)" >&2
  exit 2
fi
echo "host must provide: libcuda.so.1 (driver), libcudart.so.13, libcublas.so.13, libcublasLt.so.13, libcudnn.so.9"
