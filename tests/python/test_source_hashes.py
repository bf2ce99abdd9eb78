#!/usr/bin/env python3
"""The registry's source hashes follow every project header a variant includes.

Runs cmake/GenerateRegistry.cmake on a copy of kernels/, variants/ and reference/,
then edits headers of each kind -- an op header (kernels/ops/), a shared CUDA helper
(kernels/cuda/), a core header (kernels/) -- and checks that exactly the variants
including them change hash ("changed since verified" in wb list), and that an edit to
a header a variant does not include leaves its hash alone."""
import argparse
import pathlib
import re
import shutil
import subprocess
import tempfile

VARIANTS = [
    "variants/layernorm_forward/06_vec4_registers.cu",
    "variants/layernorm_forward/03_warp_per_row.cu",
    "variants/gelu_forward/01_naive.cu",
]
REFERENCES = ["reference/layernorm.cpp", "reference/elementwise.cpp"]


def hashes(root, generator, cmake):
    gen = root / "gen"
    gen.mkdir(exist_ok=True)
    (gen / "variants.txt").write_text("\n".join(VARIANTS) + "\n")
    (gen / "references.txt").write_text("\n".join(REFERENCES) + "\n")
    out = gen / "table.cpp"
    subprocess.run([cmake, f"-DROOT={root}", f"-DLIST={gen / 'variants.txt'}", f"-DREFERENCES={gen / 'references.txt'}",
                    f"-DOUT={out}", "-P", str(generator)], check=True)
    return dict(re.findall(r'\{"([^"]+)", "([0-9a-f]{64})"\}', out.read_text()))


def edit(root, rel):
    path = root / rel
    path.write_text(path.read_text() + "\n// edited\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source", required=True, type=pathlib.Path)
    ap.add_argument("--cmake", default="cmake")
    args = ap.parse_args()
    generator = args.source / "cmake" / "GenerateRegistry.cmake"
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        for folder in ("kernels", "variants", "reference"):
            shutil.copytree(args.source / folder, root / folder)
        base = hashes(root, generator, args.cmake)
        assert set(base) == set(VARIANTS + REFERENCES), base.keys()

        cases = [
            # header, the files whose hash must change
            # (reference/reference.h includes every op header, so every reference file follows)
            ("kernels/ops/layernorm_forward.h", {VARIANTS[0], VARIANTS[1]} | set(REFERENCES)),
            ("kernels/cuda/device_utils.cuh", {VARIANTS[0], VARIANTS[1]}),
            ("kernels/variant.h", set(VARIANTS + REFERENCES)),
            ("kernels/ops/gelu_forward.h", {VARIANTS[2]} | set(REFERENCES)),
        ]
        previous = base
        for header, expected in cases:
            edit(root, header)
            now = hashes(root, generator, args.cmake)
            changed = {f for f in now if now[f] != previous[f]}
            assert changed == expected, f"editing {header} changed {sorted(changed)}, expected {sorted(expected)}"
            previous = now
    print("source hashes follow kernels/ops, kernels/cuda and kernels/*.h headers")


if __name__ == "__main__":
    main()
