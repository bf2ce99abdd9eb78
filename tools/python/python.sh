#!/usr/bin/env bash
# The project's Python, found one way by every script and test (docs/python.md): the
# virtual environment that tools/python/venv.sh builds from tools/python/requirements.txt
# (torch and triton at the GPU host's versions) when it is ready, else Debian's
# /usr/bin/python3, where the tests that need torch or triton skip with the reason.
#
#   bash tools/python/python.sh [ARGS...]   runs the project's Python with ARGS
#   bash tools/python/python.sh --which     prints its path
#   bash tools/python/python.sh --venv      prints where the venv lives, ready or not
#   bash tools/python/python.sh --ready     exit 0 when the venv is ready, 1 when not
#   bash tools/python/python.sh --key       prints the pins' key that names the venv
#
# The venv lives outside the clone, so that every clone on the machine (CI's fresh one
# each run) shares it: WB_VENV when set, else ${XDG_CACHE_HOME:-~/.cache}/wb/venv-<key>,
# the key a hash of requirements.txt, so that changed pins make a new venv beside the old
# one rather than a venv that no longer matches them. A venv that venv.sh makes is ready
# when its .wb-ready file holds that same key: venv.sh writes it last, so that an
# interrupted install never looks ready.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
key="$(sha256sum "$here/requirements.txt" | cut -c1-16)"
venv="${WB_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/wb/venv-$key}"

# A venv that WB_VENV names and venv.sh did not make (no .wb-venv: the GPU host's own,
# say) is used as it is: the tests check the versions they need themselves.
ready() {
  [ -x "$venv/bin/python" ] || return 1
  if [ -f "$venv/.wb-ready" ]; then
    [ "$(cat "$venv/.wb-ready")" = "$key" ]
  else
    [ -n "${WB_VENV:-}" ] && [ ! -f "$venv/.wb-venv" ]
  fi
}

# Debian's interpreter, not whatever python3 comes first on the PATH (a pyenv shim, a
# conda one): the fallback is the one tools/install_deps.sh installs packages for.
which_python() {
  if ready; then
    echo "$venv/bin/python"
  elif [ -x /usr/bin/python3 ]; then
    echo /usr/bin/python3
  else
    command -v python3 || { echo "python.sh: no python3 (bash tools/install_deps.sh)" >&2; return 1; }
  fi
}

case "${1:-}" in
  --which) which_python ;;
  --venv) echo "$venv" ;;
  --key) echo "$key" ;;
  --ready) ready ;;
  *) py="$(which_python)"; exec "$py" "$@" ;;
esac
