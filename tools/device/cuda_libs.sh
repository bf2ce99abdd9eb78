# Sourced by the campaign's stages (core.sh, anchors.sh, sanitize.sh): where the CUDA
# libraries that wb's carried binaries need lie on the GPU host, which has no Debian
# packages of them: the toolkit's directories first (CUDA_HOME, by default
# /usr/local/cuda), else the nvidia/*/lib folders of a Python environment's
# site-packages (PyTorch's wheels bring cuBLAS and cuDNN that way).
#
#   cuda_library_path BUNDLE_LIB PYTHON [probe]
#
# sets LIBDIRS to BUNDLE_LIB followed by the directory of each library found (one
# search, so that every stage finds the same files). With `probe`, a library found in
# neither place is looked for on the whole file system, and a line "probe: NAME in DIR"
# (or "NOT FOUND") is printed per library, for the stage's log.
cuda_library_path() {
  local bundle_lib=$1 py=$2 probe=${3:-} cuda=${CUDA_HOME:-/usr/local/cuda} site name dir found hit
  site=$("$py" -c 'import site; print(site.getsitepackages()[0])' 2>/dev/null || true)
  LIBDIRS=$bundle_lib
  for name in libcudart.so.13 libcublas.so.13 libcublasLt.so.13 libcudnn.so.9; do
    found=""
    for dir in "$cuda/lib64" "$cuda/targets/x86_64-linux/lib" "$cuda/lib" ${site:+$site/nvidia/*/lib} \
      ${site:+$site/nvidia/cu13/lib}; do
      if [[ -e "$dir/$name" ]]; then found=$dir; break; fi
    done
    if [[ -z "$found" && "$probe" == probe ]]; then
      hit=$(find / -xdev -name "$name" 2>/dev/null | head -1 || true)
      [[ -n "$hit" ]] && found=$(dirname "$hit")
    fi
    [[ "$probe" == probe ]] && echo "probe: $name in ${found:-NOT FOUND}"
    if [[ -n "$found" ]]; then LIBDIRS="$LIBDIRS:$found"; fi
  done
  return 0
}
