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
        "contract/op.h": '#include "reference/reference.h"\n',            # the contract reaching up
        "contract/variant.cpp": '#include "device/cpu/onednn.h"\n',       # the contract asking a device room
        "base/files.cpp": '#include "contract/shape.h"\n',                # the ground floor knowing an op
        "device/cuda/runtime.h": '#include "variants/matmul/matmul.cuh"\n',  # a primitive knowing an op family
        "variants/x/01_a.cu": '#include "workbench/runtime/harness.h"\n',  # a variant calling the runtime
        "variants/x/03_c.cu": '#include "contract/op.h"\n',               # a variant seeing the harness's op spec
        "workbench/runtime/x.cpp": '#include "workbench/cli/commands.h"\n',  # runtime using the CLI
        "trainer/x.cpp": '#include "workbench/cli/pipeline_timing.h"\n',  # trainer using the timing engine
        "reference/x.cpp": '#include "variants/x/common.cuh"\n',           # siblings
        "trainer/y.cpp": '#include "tools/x/helper.h"\n',                 # a build depending on tools/
        "tokenizer/x.cpp": '#include "contract/registry.h"\n',            # the tokenizer reaching up
        "emu/x.cpp": '#include "contract/registry.h"\n',                   # the emulator knowing the ops
        "emu/y.cpp": '#include "device/cuda/runtime.h"\n',                 # the emulator using what sits on it
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
