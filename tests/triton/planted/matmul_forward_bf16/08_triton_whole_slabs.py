# matmul_forward_bf16, planted Triton rung 8: variant 7 with its k loop over whole slabs only.
#
# Idea: a planted control, never a rung of the ladder (it lives under tests/, not
# variants/). Variant 7 exactly, except that the k loop ends at C rounded down to a
# multiple of BLOCK_K: the last, partial slab of C (the one the k mask exists for) is
# dropped, so each output misses C % BLOCK_K of its products (all of them when
# C < BLOCK_K).
# Why: a check of Triton rungs under the interpreter must call it INCORRECT wherever
# C % BLOCK_K != 0 (tests/triton/test_triton_interpret_bf16.py); if it passes, the
# check cannot see a k edge handled wrong.
# Limits: where BLOCK_K divides C it is variant 7, and correct.
import triton
import triton.language as tl

# Row tiles per group in the launch order (see the idea).
GROUP_M = tl.constexpr(8)


@triton.jit
def matmul_bias_bf16(out, inp, weight, bias, M, C, OC,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # Grouped order: a group of GROUP_M row tiles is walked column tile by column tile,
    # so consecutive programs reuse the same GROUP_M row tiles of inp and nearby
    # columns of weight while they are in L2.
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(OC, BLOCK_N)
    per_group = GROUP_M * tiles_n
    first_m = (pid // per_group) * GROUP_M
    group_rows = tl.minimum(tiles_m - first_m, GROUP_M)
    tile_m = first_m + (pid % per_group) % group_rows
    tile_n = (pid % per_group) // group_rows

    rows = tile_m.to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tile_n.to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, BLOCK_K)
    row_in = rows < M
    col_in = cols < OC
    # inp (M, C) row-major; weight (OC, C) row-major, read as its transpose (C, OC) so
    # that tl.dot sees (BLOCK_M, BLOCK_K) x (BLOCK_K, BLOCK_N).
    a_ptrs = inp + rows[:, None] * C + ks[None, :]
    b_ptrs = weight + cols[None, :] * C + ks[:, None]

    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    # PLANTED: the loop stops at the last whole slab (C rounded down to BLOCK_K), so the
    # partial slab at the k edge is never added.
    for k0 in range(0, C // BLOCK_K * BLOCK_K, BLOCK_K):
        k_in = (k0 + ks) < C
        # Zero outside the edges: a zero in either operand adds nothing to the sum.
        a = tl.load(a_ptrs, mask=row_in[:, None] & k_in[None, :], other=0.0)
        b = tl.load(b_ptrs, mask=k_in[:, None] & col_in[None, :], other=0.0)
        acc = tl.dot(a, b, acc, out_dtype=tl.float32)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K

    # bias may be null (the contract: no bias); the test is one scalar branch per program.
    if bias.to(tl.int64) != 0:
        acc += tl.load(bias + cols, mask=col_in, other=0.0).to(tl.float32)[None, :]
    # One rounding, to nearest even, of the fp32 sum.
    tl.store(out + rows[:, None] * OC + cols[None, :], acc.to(tl.bfloat16),
             mask=row_in[:, None] & col_in[None, :])


# The launch description (docs/triton.md).
WB_TRITON = {
    "summary": "Triton: BLOCK_M x BLOCK_N tiles, tl.dot over pipelined BLOCK_K slabs of bf16, fp32 sum, bias and "
               "one rounding in the epilogue",
    "numeric": "bf16",
    # matmul_forward_bf16's argument struct (contract/ops/matmul_forward.h), field by field.
    "fields": {"out": "*bf16", "inp": "*bf16", "weight": "*bf16", "bias": "*bf16",
               "B": "i32", "T": "i32", "C": "i32", "OC": "i32"},
    "params": {
        "block_m": {"values": [64, 128], "default": 128, "constexpr": "BLOCK_M"},
        "block_n": {"values": [64, 128], "default": 128, "constexpr": "BLOCK_N"},
        # One value: 32 as well doubled the sweep (192 cubins, 16 MB, two minutes of
        # compiling) for a slab that halves the work per pipeline stage.
        "block_k": {"values": [64], "default": 64, "constexpr": "BLOCK_K"},
        "num_warps": {"values": [4, 8], "default": 8},
        "num_stages": {"values": [2, 3, 4], "default": 3},
    },
    "launches": [{
        "kernel": matmul_bias_bf16,
        "grid": ["cdiv(B * T, block_m) * cdiv(OC, block_n)"],
        "args": {"out": "out", "inp": "inp", "weight": "weight", "bias": "bias", "M": "B * T", "C": "C", "OC": "OC"},
        "divisible": ["out", "inp", "weight", "bias", "C", "OC"],
    }],
}
