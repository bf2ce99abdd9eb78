# matmul_forward_bf16, Triton variant 7: BLOCK_M x BLOCK_N output tiles, tl.dot over BLOCK_K slabs.
#
# Idea: program p owns a BLOCK_M x BLOCK_N tile of out (rows of B*T, columns of OC) and
# walks C in slabs of BLOCK_K: a BLOCK_M x BLOCK_K slab of inp and a BLOCK_N x BLOCK_K
# slab of weight, both bf16, multiplied with tl.dot into an fp32 accumulator (compiled:
# mma.sync m16n8k16 on sm_80, wgmma on sm_90a); Triton's pipeliner keeps the next slabs
# in flight with cp.async (128-bit LDGSTS when 16-divisible), num_stages buffers deep.
# The epilogue adds the bias in fp32 (when its pointer is not null) and rounds each
# output once, to nearest even, as the contract says. Every load is masked on its row,
# column and k edge (zero fill), so a ragged B*T, OC or C is exact; the store is masked
# on the tile's rows and columns. Programs are numbered in groups of GROUP_M row tiles,
# column tile by column tile, so that programs running together share their inp rows
# and weight columns in L2.
# Why it should beat variant 6 (a cp.async pipeline of 2-4 stages over mma.sync warp
# tiles, by hand): the same structure, but tile shape, warps and pipeline depth are
# swept from one source, sm_90 gets wgmma instead of mma.sync, and there is no
# requirement on C % 8 or on alignment: the 16-divisible specialisation vectorises the
# aligned case, the general one runs any shape.
# Limits: none on the shape (64-bit offsets, masks on every edge); a C or OC that is not
# 16-divisible, or an unaligned pointer, runs the general specialisation: 16-bit loads
# into registers, no cp.async pipeline (its SASS). The order of the fp32 sums inside a tensor-core product is the hardware's (as
# variants 4-6). Shared memory is num_stages x (BLOCK_M + BLOCK_N) x BLOCK_K x 2 bytes,
# 128 KiB at 128 x 128 with 4 stages: within sm_80's and sm_90's limits (aot.py skips
# nothing), but over the 99 KiB of sm_86 and sm_89, which run sm_80's cubins: that one
# combination fails to launch there.
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
    for k0 in range(0, C, BLOCK_K):
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
