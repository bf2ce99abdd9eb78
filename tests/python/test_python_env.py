#!/usr/bin/env python3
"""The project's Python venv does what the later Triton and PyTorch rungs rely on, without a GPU.

- torch (the pinned version, tests/python/needs.py) runs on the CPU: a small matmul
  against a sum written out by hand, in float64;
- triton compiles a kernel ahead of time for explicit targets, sm_80 and sm_90, with no
  driver and no device (triton.compile with a GPUTarget: its own ptxas), and each cubin is
  an ELF file whose kernel has the name the launcher will look up.

Skipped (77) without the venv. torch.compile is not run here: its first compile costs
over a minute on CI's cores, and belongs to the checks that time it.
"""
import sys

import needs

needs.modules("torch", "triton")
import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402


@triton.jit
def scaled_add(x, y, out, n, alpha, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    keep = i < n
    tl.store(out + i, alpha * tl.load(x + i, mask=keep) + tl.load(y + i, mask=keep), mask=keep)


def main():
    failures = []
    g = torch.Generator().manual_seed(20261129)
    a = torch.rand(5, 7, generator=g, dtype=torch.float64)
    b = torch.rand(7, 3, generator=g, dtype=torch.float64)
    by_hand = torch.tensor([[sum(a[i, k].item() * b[k, j].item() for k in range(7)) for j in range(3)]
                            for i in range(5)], dtype=torch.float64)
    if not torch.allclose(a @ b, by_hand, rtol=1e-12, atol=0):
        failures.append("torch on the CPU: a @ b differs from the sum by hand")
    print(f"torch {torch.__version__} on the CPU: a 5x7 @ 7x3 matmul agrees with the sum by hand")

    signature = {"x": "*fp32", "y": "*fp32", "out": "*fp32", "n": "i32", "alpha": "fp32"}
    for arch in (80, 90):
        src = triton.compiler.ASTSource(fn=scaled_add, signature=signature, constexprs={"BLOCK": 256})
        kernel = triton.compile(src, target=GPUTarget("cuda", arch, 32))
        cubin = kernel.asm.get("cubin", b"")
        if not cubin.startswith(b"\x7fELF"):
            failures.append(f"sm_{arch}: no cubin (an ELF file) from triton.compile")
        elif kernel.metadata.name.encode() not in cubin:
            failures.append(f"sm_{arch}: the cubin does not hold the kernel {kernel.metadata.name}")
        elif f".target sm_{arch}" not in kernel.asm.get("ptx", ""):
            failures.append(f"sm_{arch}: the PTX does not target sm_{arch}")
        else:
            print(f"triton {triton.__version__}: sm_{arch} cubin of {kernel.metadata.name}, {len(cubin)} bytes")
    for f in failures:
        print(f"FAILED: {f}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
