#!/usr/bin/env bash
# Builds the project's virtual environment (docs/python.md) from tools/python/requirements.txt,
# once per set of pins: a venv that is ready is left as it is, so a second run costs a
# hash and a file read. Run by tools/install_deps.sh; by hand to rebuild:
#
#   bash tools/python/venv.sh            build it unless it is ready
#   bash tools/python/venv.sh --rebuild  build it again
#
# The venv is optional: exit 0 when it is ready, 3 when it could not be built (PyPI
# unreachable, a wheel missing), with the reason; the tests that need it then skip.
#
# It is made from Debian's /usr/bin/python3 (the project's, not a pyenv or conda one) and
# filled with `pip install --no-deps` from the pin file, which lists every package it
# needs at an exact version: the pins are the whole environment, and nothing else comes
# in. That includes NVIDIA's CUDA wheels (about 3 GB of the 4.8 GB): PyPI's torch is the
# CUDA build, whose libraries name them, and it does not import without them even where
# there is no GPU. What the first build costs (about 3 minutes) and why CI pays it only
# once per machine: docs/python.md.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
req="$here/requirements.txt"
venv="$(bash "$here/python.sh" --venv)"
key="$(bash "$here/python.sh" --key)"
base=/usr/bin/python3
[ -x "$base" ] || { echo "venv.sh: no /usr/bin/python3 (bash tools/install_deps.sh)" >&2; exit 3; }

rebuild=0
case "${1:-}" in
  "") ;;
  --rebuild) rebuild=1 ;;
  *) echo "usage: venv.sh [--rebuild]" >&2; exit 2 ;;
esac

if [ "$rebuild" = 0 ] && bash "$here/python.sh" --ready; then
  echo "venv.sh: ready at $venv"
  exit 0
fi
if [ -x "$venv/bin/python" ] && [ ! -f "$venv/.wb-venv" ] && [ -n "${WB_VENV:-}" ]; then
  echo "venv.sh: WB_VENV=$venv was not made by venv.sh: used as it is, never rebuilt" >&2
  exit 3
fi

mkdir -p "$(dirname "$venv")"
# Two installs at once (two clones, two CI jobs on one machine) would build into the same
# folder: the second waits for the first, then finds the venv ready.
exec 9>"$venv.lock"
flock 9
if [ "$rebuild" = 0 ] && bash "$here/python.sh" --ready; then
  echo "venv.sh: ready at $venv"
  exit 0
fi

# pip would retry an unreachable index for minutes (PIP_DEFAULT_TIMEOUT, five retries):
# one short probe says at once that there is no index, and the install goes on without.
index="${PIP_INDEX_URL:-https://pypi.org/simple}"
if ! "$base" -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1].rstrip("/") + "/pip/", timeout=15)' \
    "$index" 2>/dev/null; then
  echo "venv.sh: $index is unreachable: no Python venv (torch and triton); the tests that need them skip" >&2
  exit 3
fi

# Only a folder that venv.sh made (its .wb-venv, written first) is ever removed: WB_VENV
# may name anything, another project's venv included. And only once the index answers: a
# venv of older pins stays usable by hand until a new one can be built.
if [ -e "$venv" ]; then
  if [ ! -f "$venv/.wb-venv" ]; then
    echo "venv.sh: $venv exists and was not made by venv.sh: not touching it (set WB_VENV elsewhere)" >&2
    exit 3
  fi
  rm -rf "$venv"
fi

start=$SECONDS
echo "venv.sh: building $venv from $req"
# A venv is not relocatable (its scripts name its folder), so it is built in place and
# made ready by the marker written last: until then python.sh does not use it, and the
# next run removes and rebuilds it.
if ! "$base" -m venv "$venv" || ! echo "made by tools/python/venv.sh" > "$venv/.wb-venv" ||
   ! "$venv/bin/python" -m pip install --quiet --no-cache-dir --no-deps --only-binary=:all: \
       --timeout 60 --retries 2 -r "$req" ||
   ! "$venv/bin/python" -c 'import torch, triton, numpy'; then
  echo "venv.sh: could not build $venv: no Python venv (torch and triton); the tests that need them skip" >&2
  exit 3
fi
echo "$key" > "$venv/.wb-ready.tmp"
mv "$venv/.wb-ready.tmp" "$venv/.wb-ready"
echo "venv.sh: ready at $venv ($((SECONDS - start)) s, $(du -sh "$venv" | cut -f1))"
