"""Two of Triton 3.6's interpreter bugs on bf16, fixed for interpret.py's runs (and for
the tests that call a kernel in their own process).

The interpreter holds a bf16 tensor as numpy uint16, its bits, and:

1. tl.dot on bf16 operands runs np.matmul on those uint16 arrays: it multiplies the bit
   patterns as integers (a 16 x 16 product of N(0,1) values comes out near 1e10). The
   fix widens bf16 operands to float32 first (exact), which is what the tensor cores
   multiply; the sum stays numpy's fp32 one, as for fp32 operands.
2. A cast from fp32 to bf16 (x.to(tl.bfloat16), LLVM's fptrunc: round to nearest even
   on the GPU) drops the low 16 bits: it truncates toward zero, an error up to one ulp
   and a bias of half an ulp that wb's validation of bf16 outputs measures. The fix
   rounds to nearest even (NaN stays NaN), as the GPU does; bf16 to fp32 widens exactly.

patch() applies both, once per process, for triton 3.6.0 only (a later Triton may fix
them differently: its interpreter is then checked as it is, and a wrong bf16 result
shows as INCORRECT, never as a pass).
"""


def to_bf16_bits(x):
    """float32 array -> uint16 bits rounded to nearest even; NaN -> a quiet NaN."""
    import numpy as np
    u = np.ascontiguousarray(x, np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(np.asarray(x, np.float32))
    return np.where(nan, ((u >> 16).astype(np.uint16) & 0x8000) | 0x7FC0, rounded).astype(np.uint16)


def from_bf16_bits(bits):
    import numpy as np
    return (np.asarray(bits, np.uint16).astype(np.uint32) << 16).view(np.float32)


def patch():
    """Fix the two bugs in this process's interpreter (idempotent; triton 3.6.0 only)."""
    import triton
    import triton.language as tl
    from triton.runtime.interpreter import InterpreterBuilder, TensorHandle
    if triton.__version__ != "3.6.0" or getattr(InterpreterBuilder, "wb_bf16_fixed", False):
        return
    original_dot = InterpreterBuilder.create_dot
    original_cast = InterpreterBuilder.cast_impl

    def create_dot(self, a, b, d, input_precision, max_num_imprecise_acc):
        if a.dtype.scalar == tl.bfloat16:
            a = TensorHandle(from_bf16_bits(a.data), tl.float32)
        if b.dtype.scalar == tl.bfloat16:
            b = TensorHandle(from_bf16_bits(b.data), tl.float32)
        return original_dot(self, a, b, d, input_precision, max_num_imprecise_acc)

    def cast_impl(self, src, dst_type):
        s, t = src.dtype.scalar, dst_type.scalar
        if s == tl.float32 and t == tl.bfloat16:
            return TensorHandle(to_bf16_bits(src.data), tl.bfloat16)
        if s == tl.bfloat16 and t == tl.float32:
            return TensorHandle(from_bf16_bits(src.data), tl.float32)
        return original_cast(self, src, dst_type)

    InterpreterBuilder.create_dot = create_dot
    InterpreterBuilder.cast_impl = cast_impl
    # create_fp_trunc and create_fp_ext are lambdas over self.cast_impl: they follow.
    InterpreterBuilder.wb_bf16_fixed = True
