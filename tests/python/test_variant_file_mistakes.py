#!/usr/bin/env python3
"""The mistakes a user makes in naming a variant file or its factory stop the build
where the registry table is generated (cmake/GenerateRegistry.cmake, through
cmake/VariantFiles.cmake), with the files and the fix, never at the linker or at wb's
start. Each case writes a tiny tree of variant files in a temporary folder and runs the
generator on it as the build does: a clean tree generates its table, each mistake fails
(any exit code but 0, and never 4, wb's own bugs) with its message. Exit 0 when every
case holds, 1 otherwise (each failure named)."""
import argparse
import os
import subprocess
import sys
import tempfile

FACTORY = """#include "contract/ops/gelu_forward.h"
namespace wb::variants {{
Variant {fn}() {{ return Variant::of(&launch); }}
}}  // namespace wb::variants
"""

# name: (files {path: factory name}, what the message must hold, or None for a clean tree)
CASES = {
    "clean tree": ({"variants/gelu_forward/01_naive.cu": "gelu_forward_cuda_1",
                    "variants/gelu_forward/02_vec4.cu": "gelu_forward_cuda_2",
                    "variants/gelu_forward/cpu_02_loop.cpp": "gelu_forward_cpu_2"}, None),
    "duplicate id": ({"variants/gelu_forward/01_naive.cu": "gelu_forward_cuda_1",
                      "variants/gelu_forward/02_vec4.cu": "gelu_forward_cuda_2",
                      "variants/gelu_forward/02_packed.cu": "gelu_forward_cuda_2"},
                     ["variants/gelu_forward/02_packed.cu and variants/gelu_forward/02_vec4.cu both take cuda id 2",
                      "next free id, 3"]),
    "duplicate id, other padding": ({"variants/gelu_forward/2_a.cu": "gelu_forward_cuda_2",
                                     "variants/gelu_forward/02_b.cu": "gelu_forward_cuda_2"},
                                    ["both take cuda id 2 of gelu_forward"]),
    "bad file name": ({"variants/gelu_forward/01_naive.cu": "gelu_forward_cuda_1",
                       "variants/gelu_forward/Vec4-Kernel.cu": "gelu_forward_cuda_2"},
                      ["variants/gelu_forward/Vec4-Kernel.cu: a variant file is named",
                       "e.g. variants/gelu_forward/02_vec4_kernel.cu"]),
    "cpu file with a .cu extension": ({"variants/gelu_forward/cpu_02_loop.cu": "gelu_forward_cpu_2"},
                                      ["variants/gelu_forward/cpu_02_loop.cu: a variant file is named"]),
    "id zero": ({"variants/gelu_forward/00_first.cu": "gelu_forward_cuda_0"}, ["ids start at 1"]),
    "misspelled factory": ({"variants/gelu_forward/03_fast.cu": "gelu_foward_cuda_3"},
                           ["variants/gelu_forward/03_fast.cu: the registry calls wb::Variant "
                            "wb::variants::gelu_forward_cuda_3()",
                            "it defines gelu_foward_cuda_3 instead", "name the factory gelu_forward_cuda_3"]),
    "factory of another id": ({"variants/gelu_forward/cpu_04_simd.cpp": "gelu_forward_cpu_3"},
                              ["calls wb::Variant wb::variants::gelu_forward_cpu_4()",
                               "it defines gelu_forward_cpu_3 instead"]),
}


def run_case(generator, name, files, expected):
    with tempfile.TemporaryDirectory() as root:
        for path, fn in files.items():
            os.makedirs(os.path.join(root, os.path.dirname(path)), exist_ok=True)
            with open(os.path.join(root, path), "w") as f:
                f.write(FACTORY.format(fn=fn))
        lst = os.path.join(root, "variant_files.txt")
        emu = os.path.join(root, "emu_variant_files.txt")
        refs = os.path.join(root, "reference_files.txt")
        with open(lst, "w") as f:
            f.write("".join(p + "\n" for p in sorted(files)))
        with open(emu, "w") as f:
            f.write("".join(p + "\n" for p in sorted(files) if p.endswith(".cu")))
        with open(refs, "w") as f:
            f.write("")
        out = os.path.join(root, "registry_table.cpp")
        emu_out = os.path.join(root, "emu_registry_table.cpp")
        r = subprocess.run(["cmake", f"-DROOT={root}", f"-DLIST={lst}", f"-DREFERENCES={refs}", f"-DOUT={out}",
                            f"-DEMU_LIST={emu}", f"-DEMU_OUT={emu_out}", "-P", generator],
                           capture_output=True, text=True)
        text = " ".join((r.stdout + r.stderr).split())  # CMake wraps long messages
        if expected is None:
            if r.returncode != 0:
                return [f"{name}: the generator failed on a clean tree (exit {r.returncode}): {text}"]
            with open(out) as f:
                table = f.read()
            missing = [fn for fn in files.values() if f"&variants::{fn}" not in table]
            return [f"{name}: the table misses {missing}"] if missing else []
        failures = []
        if r.returncode in (0, 4):
            failures.append(f"{name}: exit {r.returncode}, expected a failure other than 4")
        if os.path.exists(out):
            failures.append(f"{name}: a table was written despite the mistake")
        for part in expected:
            if part not in text:
                failures.append(f"{name}: the message lacks {part!r}: {text}")
        return failures


# Triton rungs (variants/<op>/NN_triton_name.py) take CUDA ids: contract/CMakeLists.txt
# checks them with the variant files at configuration (the generator never sees them).
# name: (files, what the message must hold, or None when the check passes)
TRITON_CASES = {
    "triton rung beside the CUDA files": ({"variants/gelu_forward/01_naive.cu": "gelu_forward_cuda_1",
                                           "variants/gelu_forward/02_triton_sigmoid.py": None}, None),
    "triton rung taking a CUDA id": ({"variants/gelu_forward/02_vec4.cu": "gelu_forward_cuda_2",
                                      "variants/gelu_forward/02_triton_sigmoid.py": None},
                                     ["variants/gelu_forward/02_triton_sigmoid.py and variants/gelu_forward/02_vec4.cu "
                                      "both take cuda id 2", "next free id, 3"]),
}


def run_triton_case(variant_files_cmake, name, files, expected):
    with tempfile.TemporaryDirectory() as root:
        for path, fn in files.items():
            os.makedirs(os.path.join(root, os.path.dirname(path)), exist_ok=True)
            with open(os.path.join(root, path), "w") as f:
                f.write(FACTORY.format(fn=fn) if fn else "# a Triton rung: no C++ factory\n")
        script = os.path.join(root, "check.cmake")
        with open(script, "w") as f:
            f.write(f'include("{variant_files_cmake}")\n'
                    f'wb_check_variant_files("{root}" {" ".join(sorted(files))})\n')
        r = subprocess.run(["cmake", "-P", script], capture_output=True, text=True)
        text = " ".join((r.stdout + r.stderr).split())
        if expected is None:
            return [] if r.returncode == 0 else [f"{name}: the check failed (exit {r.returncode}): {text}"]
        failures = [] if r.returncode not in (0, 4) else [f"{name}: exit {r.returncode}, expected a failure"]
        return failures + [f"{name}: the message lacks {part!r}: {text}" for part in expected if part not in text]


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--generator", required=True, help="cmake/GenerateRegistry.cmake")
    args = parser.parse_args()
    failures = []
    for name, (files, expected) in CASES.items():
        failures += run_case(args.generator, name, files, expected)
    variant_files_cmake = os.path.join(os.path.dirname(os.path.abspath(args.generator)), "VariantFiles.cmake")
    for name, (files, expected) in TRITON_CASES.items():
        failures += run_triton_case(variant_files_cmake, name, files, expected)
    for f in failures:
        print("test_variant_file_mistakes:", f)
    if not failures:
        print(f"test_variant_file_mistakes: {len(CASES) + len(TRITON_CASES)} cases hold")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
