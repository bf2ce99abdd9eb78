# layernorm_forward, Triton variant 8: one program per row; the row in one register tile when it fits, else in tiles.
#
# Idea: program r owns row r. When C <= BLOCK_C the row is loaded once into a tile of
# BLOCK_C lanes (masked at C) and the mean, the variance around that mean and the
# output all come from registers: one read and one write of the row, two-pass
# statistics. A longer row is walked in tiles of BLOCK_C three times (sum, squared
# deviations from the mean, output); the second and third walks read what the first
# left in L1/L2. Both paths keep per-lane partial sums in fp32 and reduce across the
# lanes once per statistic, outside any loop. With the 16-divisible specialisation
# (aligned pointers, C % 16 == 0) every row starts 64-byte aligned and Triton emits
# vector loads and stores: 128-bit where a thread holds 4 or more values of the tile
# (BLOCK_C >= 128 num_warps; 64-bit at 2, scalar at 1, as in BLOCK_C = 128).
# Why it should beat variants 6 and 7 (the row in float4 registers, a warp or a tile of
# 8-32 threads per row): the same one-read, two-pass design, but the row's width per
# program (BLOCK_C) and the threads behind it (num_warps) are swept instead of fixed,
# and C % 4 and C <= 2048 are no longer required (a ragged C runs scalar accesses, a
# long one the tiled path). Against variants 3 and 5 it avoids their three passes over
# memory whenever the row fits in one tile (GPT-2's C = 768 with BLOCK_C >= 1024).
# Limits: none on the shape (64-bit row offsets, any C). A row wider than BLOCK_C is
# read three times. With BLOCK_C much larger than C most lanes are masked off (C = 75
# at BLOCK_C = 2048 uses 4% of them): the sweep picks. One row per program: at small C
# a program is a few hundred bytes of work and launch overhead per row dominates.
import triton
import triton.language as tl

EPS = tl.constexpr(1e-5)  # kLayernormEps, contract/ops/layernorm_forward.h


@triton.jit
def layernorm_rows(out, mean, rstd, inp, weight, bias, C, BLOCK_C: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = inp + row * C
    o_row = out + row * C
    lanes = tl.arange(0, BLOCK_C)
    if C <= BLOCK_C:
        inside = lanes < C
        x = tl.load(x_row + lanes, mask=inside, other=0.0)
        m = tl.sum(x, axis=0) / C
        # The masked lanes hold 0, not m: they must not add (0 - m)^2 to the variance.
        d = tl.where(inside, x - m, 0.0)
        s = 1.0 / tl.sqrt(tl.sum(d * d, axis=0) / C + EPS)
        w = tl.load(weight + lanes, mask=inside, other=0.0)
        b = tl.load(bias + lanes, mask=inside, other=0.0)
        tl.store(o_row + lanes, d * s * w + b, mask=inside)
    else:
        acc = tl.zeros([BLOCK_C], tl.float32)
        for start in range(0, C, BLOCK_C):
            cols = start + lanes
            acc += tl.load(x_row + cols, mask=cols < C, other=0.0)
        m = tl.sum(acc, axis=0) / C
        # Squared deviations from the exact fp32 mean: no E[x^2] - m^2 cancellation.
        acc = tl.zeros([BLOCK_C], tl.float32)
        for start in range(0, C, BLOCK_C):
            cols = start + lanes
            x = tl.load(x_row + cols, mask=cols < C, other=0.0)
            d = tl.where(cols < C, x - m, 0.0)
            acc += d * d
        s = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / C + EPS)
        for start in range(0, C, BLOCK_C):
            cols = start + lanes
            inside = cols < C
            x = tl.load(x_row + cols, mask=inside, other=0.0)
            w = tl.load(weight + cols, mask=inside, other=0.0)
            b = tl.load(bias + cols, mask=inside, other=0.0)
            tl.store(o_row + cols, (x - m) * s * w + b, mask=inside)
    tl.store(mean + row, m)
    tl.store(rstd + row, s)


# The launch description (docs/triton.md).
WB_TRITON = {
    "summary": "Triton: one program per row, the row in one BLOCK_C register tile (else three tiled walks), two-pass statistics",
    "numeric": "fp32",
    # layernorm_forward's argument struct (contract/ops/layernorm_forward.h), field by field.
    "fields": {"out": "*fp32", "mean": "*fp32", "rstd": "*fp32", "inp": "*fp32", "weight": "*fp32",
               "bias": "*fp32", "B": "i32", "T": "i32", "C": "i32"},
    "params": {
        "block_c": {"values": [128, 512, 1024, 2048], "default": 1024, "constexpr": "BLOCK_C"},
        "num_warps": {"values": [4, 8], "default": 4},
        # One value: no tl.dot, so Triton 3.6 pipelines nothing here (docs/triton.md).
        "num_stages": {"values": [1], "default": 1},
    },
    "launches": [{
        "kernel": layernorm_rows,
        "grid": ["B * T"],
        "args": {"out": "out", "mean": "mean", "rstd": "rstd", "inp": "inp", "weight": "weight", "bias": "bias",
                 "C": "C"},
        # mean and rstd are written one scalar per program: their alignment changes nothing.
        "divisible": ["out", "inp", "weight", "bias", "C"],
    }],
}
