#!/usr/bin/env python3
"""No instruction a binary's host may lack: wb's build has no -march, -mtune=native or
instruction-set flag (-mavx2, -mfma, -mavx512f, ...) in any compile command, host
compiler and nvcc's host side alike. The ISA-specific rungs sit behind target attributes
and a run-time check (device/cpu/target.h), so the binaries run on any x86-64 CPU; the
GPU campaign's bundle is built on one machine and runs on another's CPU.

Reads the build's compile_commands.json (CMAKE_EXPORT_COMPILE_COMMANDS). The check
itself is tried first on planted commands, each of which it must catch."""
import argparse
import json
import pathlib
import re
import shlex
import sys

# A flag that lets the compiler emit instructions beyond the x86-64 baseline.
ISA_FLAG = re.compile(
    r"^-(march=|mtune=native|mcpu=|m(avx|sse[34]|ssse3|fma|f16c|bmi|amx|lzcnt|movbe|popcnt|pclmul|aes|sha|vaes"
    r"|vpclmulqdq|gfni|adx|rdrnd|rdseed|xsave|prefer-vector-width|prefer-avx128|x32))")


def isa_flags(command):
    """The instruction-set flags of one command (nvcc's -Xcompiler/--compiler-options lists too)."""
    found = []
    for word in shlex.split(command):
        for part in re.split(r"[,=](?=-)", word):
            # -Xcompiler=-march=native, --compiler-options=-mavx2,-mfma
            part = re.sub(r"^(-Xcompiler|--compiler-options)[= ]?", "", part)
            if part.startswith("-mno-"):
                continue  # turning an extension off is always safe
            if ISA_FLAG.match(part):
                found.append(part)
    return found


def self_test():
    planted = [
        "/usr/bin/c++ -O3 -march=native -c a.cpp",
        "/usr/bin/c++ -O3 -mavx2 -mfma -c a.cpp",
        "/usr/bin/c++ -mavx512f -c a.cpp",
        "/usr/local/cuda/bin/nvcc -Xcompiler=-march=x86-64-v3 -c a.cu",
        "/usr/local/cuda/bin/nvcc --compiler-options=-mavx2,-mfma -c a.cu",
        "/usr/bin/c++ -mtune=native -c a.cpp",
    ]
    for command in planted:
        assert isa_flags(command), f"not caught: {command}"
    clean = [
        "/usr/bin/c++ -O3 -DNDEBUG -Wall -mno-avx512f -fsanitize=thread -std=c++17 -c a.cpp",
        "/usr/local/cuda/bin/nvcc --generate-code=arch=compute_90,code=[compute_90,sm_90] -arch=sm_80 -c a.cu",
        "/usr/bin/clang++ -mllvm -tsan-instrument-func-entry-exit=0 -c a.cpp",
    ]
    for command in clean:
        assert not isa_flags(command), f"{command}: {isa_flags(command)}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-dir", required=True)
    args = ap.parse_args()
    self_test()
    path = pathlib.Path(args.build_dir) / "compile_commands.json"
    commands = json.loads(path.read_text())
    assert commands, f"{path} lists no command"
    bad = []
    for entry in commands:
        command = entry.get("command") or " ".join(entry.get("arguments", []))
        flags = isa_flags(command)
        if flags:
            bad.append(f"{entry['file']}: {' '.join(flags)}")
    if bad:
        print("instruction-set flags in the build (use a target attribute and a run-time check, "
              "device/cpu/target.h):")
        print("\n".join(bad))
        return 1
    print(f"{len(commands)} compile commands, no instruction-set flag")
    return 0


if __name__ == "__main__":
    sys.exit(main())
