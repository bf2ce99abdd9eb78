#!/usr/bin/env python3
"""ci/check_layers.py on the repository (must pass) and on small trees with a
violation planted (must fail, naming the file)."""
import argparse
import pathlib
import subprocess
import sys
import tempfile


def run(checker, root):
    return subprocess.run([sys.executable, checker, "--root", str(root)], capture_output=True, text=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--checker", required=True)
    ap.add_argument("--root", required=True)
    ap.add_argument("--trainer", required=True)
    args = ap.parse_args()

    ok = subprocess.run([sys.executable, args.checker, "--root", args.root, "--trainer", args.trainer],
                        capture_output=True, text=True)
    assert ok.returncode == 0, ok.stdout + ok.stderr

    planted = {
        "kernels/op.h": '#include "reference/reference.h"\n',            # kernels reaching up
        "variants/x/01_a.cu": '#include "workbench/runtime/harness.h"\n',  # a variant calling the runtime
        "workbench/runtime/x.cpp": '#include "workbench/cli/commands.h"\n',  # runtime using the CLI
        "trainer/x.cpp": '#include "workbench/cli/pipeline_timing.h"\n',  # trainer using the timing engine
        "reference/x.cpp": '#include "variants/x/common.cuh"\n',           # siblings
        "trainer/y.cpp": '#include "tools/x/helper.h"\n',                 # a build depending on tools/
        "tokenizer/x.cpp": '#include "workbench/runtime/report.h"\n',    # the tokenizer reaching up
        "emu/x.cpp": '#include "kernels/registry.h"\n',                   # the emulator knowing the ops
        "kernels/x.cpp": '#include "emu/emu.h"\n',                         # kernels calling the emulator
        "variants/x/02_b.cu": '#include "kernels/emu/shim.h"\n',           # the emulator's old path
    }
    for rel, line in planted.items():
        with tempfile.TemporaryDirectory() as tmp:
            path = pathlib.Path(tmp) / rel
            path.parent.mkdir(parents=True)
            path.write_text("// planted\n" + line)
            bad = run(args.checker, tmp)
            assert bad.returncode == 1, f"{rel}: not caught\n{bad.stdout}"
            assert f"{rel}:2: includes" in bad.stdout, bad.stdout
    print("check_layers: passes on the repository, catches", len(planted), "planted violations")


if __name__ == "__main__":
    main()
