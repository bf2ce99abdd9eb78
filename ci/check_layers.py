#!/usr/bin/env python3
"""Checks that includes point down the layers, and that the trainer links no wb
command or timing code.

Layers, lowest first (docs/architecture.md):
  base/                          what every room may use: bf16, errors, exit codes, files,
                                 text, the CPU's instruction sets, SHA-256 and identities;
                                 it knows no op and no device
  emu/, tokenizer/               the SIMT emulator (it stands in for the CUDA runtime and
                                 knows no op) and the GPT-2 tokenizer: base/ only
  contract/                      the op contract: ops' argument structs and specs,
                                 variants, the registry, shapes
  device/                        device primitives that know no op (CUDA runtime and
                                 dialect, packed loads, reductions, tensor-core PTX,
                                 cuBLAS/cuBLASLt/cuDNN plumbing; CPU threads, SIMD,
                                 oneDNN); under WB_EMU the dialect reaches the emulator
  variants/, reference/          the implementations and each op family's kernels
                                 (neither includes the other)
  workbench/runtime/             executors, harness, reports, best.json
  workbench/cli/, trainer/       the wb program and the trainer (neither includes the other)
No room includes tools/: nothing a build depends on lives there. tests/ may include
anything. Exit 1 with one line per violation; there are no exceptions.

  check_layers.py --root REPO [--trainer build/trainer]
"""
import argparse
import pathlib
import re
import subprocess
import sys

# folder prefix -> the prefixes its files may include (their own folder included)
ALLOWED = {
    "base/": ["base/"],
    "emu/": ["base/", "emu/"],
    "tokenizer/": ["base/", "tokenizer/"],
    "contract/": ["base/", "contract/"],
    "device/": ["base/", "emu/", "contract/", "device/"],
    # A variant includes its op's argument header, never the harness's description of
    # the op (contract/op.h): its identity must not follow the harness (docs/identity.md).
    "variants/": ["base/", "contract/", "device/", "variants/"],
    "reference/": ["base/", "contract/", "device/cpu/", "reference/"],
    "workbench/runtime/": ["base/", "emu/emu.h", "emu/symbols.h", "contract/", "device/", "workbench/runtime/"],
    "workbench/cli/": ["base/", "contract/", "device/", "workbench/runtime/", "workbench/cli/"],
    "trainer/": ["base/", "contract/", "device/", "workbench/runtime/", "trainer/", "tokenizer/"],
    "cmake/": ["base/", "contract/"],
}
# What a variant must not include although it is in a room below it.
FORBIDDEN = {"variants/": ["contract/op.h"]}
PROJECT_ROOTS = ("base/", "emu/", "contract/", "device/", "variants/", "reference/", "workbench/", "trainer/",
                 "tokenizer/", "tools/", "tests/", "cmake/")
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
SOURCES = (".h", ".cuh", ".cpp", ".cu", ".in")


def layer_of(rel):
    for prefix in sorted(ALLOWED, key=len, reverse=True):
        if rel.startswith(prefix):
            return prefix
    return None


def check_includes(root):
    problems = []
    for path in sorted(root.rglob("*")):
        if path.suffix not in SOURCES or not path.is_file():
            continue
        rel = path.relative_to(root).as_posix()
        if rel.startswith(("build", ".")) or "/build" in rel:
            continue
        layer = layer_of(rel)
        if layer is None:
            continue
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            target = m.group(1)
            if not target.startswith(PROJECT_ROOTS):
                continue  # system or generated header
            if any(target == bad for bad in FORBIDDEN.get(layer, [])):
                problems.append(f"{rel}:{number}: includes {target}, which {layer} must not see")
                continue
            if not any(target.startswith(ok) for ok in ALLOWED[layer]):
                problems.append(f"{rel}:{number}: includes {target}, which is not below {layer} "
                                f"(allowed: {', '.join(ALLOWED[layer])})")
    return problems


def check_trainer(binary):
    out = subprocess.run(["nm", "-C", binary], check=True, capture_output=True, text=True).stdout
    bad = sorted({line.split(" ", 2)[-1] for line in out.splitlines() if "benchmark::" in line or "wb::cli::" in line})
    return [f"{binary}: links wb command or timing code: {name}" for name in bad[:20]]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", required=True, type=pathlib.Path)
    ap.add_argument("--trainer", help="the trainer binary, checked with nm")
    args = ap.parse_args()
    problems = check_includes(args.root.resolve())
    if args.trainer:
        problems += check_trainer(args.trainer)
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} layering violation(s)")
        return 1
    print("layers: every include points down; the trainer links no wb command or timing code")
    return 0


if __name__ == "__main__":
    sys.exit(main())
