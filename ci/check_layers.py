#!/usr/bin/env python3
"""Checks that includes point down the layers, and that the trainer links no wb
command or timing code.

Layers, lowest first (../shared/DESIGN.md, "Layout"):
  emu/                           the SIMT emulator: it stands in for the CUDA runtime and
                                 knows no op
  kernels/                       the op catalogue, registry, CUDA helpers
  variants/, reference/          the implementations (neither includes the other)
  workbench/runtime/             executors, harness, reports, best.json
  workbench/cli/, trainer/       the wb program and the trainer (neither includes the other)
tokenizer/ is a library beside them that may only use kernels/ (files.h,
file_header.h, errors.h; prepare_data exit_codes.h); the trainer links it. No room
includes tools/: nothing a build depends on lives there. tests/ may include anything.
Exit 1 with one line per violation.

  check_layers.py --root REPO [--trainer build/trainer]
"""
import argparse
import pathlib
import re
import subprocess
import sys

# folder prefix -> the prefixes its files may include (their own folder included)
ALLOWED = {
    # The emulator's bf16 conversions are wb's own (kernels/bf16.h), so that the host,
    # the emulator and the reference round the same way bit for bit: its one include
    # from above.
    "emu/": ["emu/", "kernels/bf16.h"],
    "kernels/": ["kernels/"],
    # The device helpers that have an emulated form (the tensor-core instructions, the
    # libraries) include it under WB_EMU: kernels/cuda/ may reach the emulator below.
    "kernels/cuda/": ["kernels/", "emu/"],
    "variants/": ["kernels/", "variants/"],
    "reference/": ["kernels/", "reference/"],
    "workbench/runtime/": ["emu/emu.h", "emu/symbols.h", "kernels/", "workbench/runtime/"],
    "workbench/cli/": ["kernels/", "workbench/runtime/", "workbench/cli/"],
    "trainer/": ["kernels/", "workbench/runtime/", "trainer/", "tokenizer/"],
    # the library writes files through kernels/files.h; prepare_data, a program, shares
    # wb's exit codes (kernels/exit_codes.h)
    "tokenizer/": ["kernels/files.h", "kernels/file_header.h", "kernels/errors.h", "kernels/exit_codes.h",
                   "tokenizer/"],
}
# kernels/cuda/libraries.h reaches the emulator's cuBLAS (under WB_EMU) through its old
# path, kernels/emu/ (emu/compat/kernels/emu/cublas.h says why): only kernels/cuda/ may.
OLD_EMU_PATH = "kernels/emu/"
OLD_EMU_PATH_USERS = "kernels/cuda/"
PROJECT_ROOTS = ("emu/", "kernels/", "variants/", "reference/", "workbench/", "trainer/", "tokenizer/", "tools/", "tests/")
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
            if target.startswith(OLD_EMU_PATH):
                if not rel.startswith(OLD_EMU_PATH_USERS):
                    problems.append(f"{rel}:{number}: includes {target}: the emulator is emu/")
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
