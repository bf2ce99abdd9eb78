# softmax_forward, Triton variant 6: one program per row, online softmax over tiles of BLOCK_V.
#
# Idea: program r owns row r. The first pass walks the first V columns in tiles of
# BLOCK_V and keeps, per lane of the tile, a running maximum m and a running sum s of
# exp(x - m); when a lane's maximum grows, its sum is rescaled by exp(m_old - m_new).
# Only after the pass are the lanes merged (one max and one sum across the tile), so
# the loop carries no cross-lane reduction. The second pass walks all Vp columns and
# writes exp(x - max) / sum, the padding V..Vp as 0. Both passes load under a mask at
# Vp, not V (a 16-divisible bound where Vp % 16 == 0, so that the loads vectorise; a
# mask at V would keep them scalar), and replace the columns from V on with -inf, whose
# exp is 0: the padding that shares a tile with real columns is read, never used.
# Why it should beat variants 2 and 3: two reads of the row instead of three, no
# reduction inside the loop, and with the 16-divisible specialisation (aligned
# pointers, Vp % 16 == 0) 128-bit loads and stores; BLOCK_V and num_warps are swept.
# Next to variant 4 (the same two reads by hand in CUDA) it answers whether the
# hand-written merge is worth its code.
# Limits: none on the shape (any V <= Vp; 64-bit row offsets). A row longer than
# BLOCK_V takes several tiles; the lanes' sums are merged once, in fp32, so the error
# grows with V / BLOCK_V terms per lane, not with V. The second read hits L2 only
# while the rows in flight fit there (see variant 4's limits). Ragged Vp runs the
# general specialisation: scalar accesses. Up to BLOCK_V - 1 padding values per row
# are read for nothing (47 of 50304 at GPT-2's vocabulary).
import triton
import triton.language as tl

NEG_INF = tl.constexpr(float("-inf"))


@triton.jit
def softmax_online(probs, logits, V, Vp, BLOCK_V: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = logits + row * Vp
    p_row = probs + row * Vp
    lanes = tl.arange(0, BLOCK_V)

    m = tl.full([BLOCK_V], NEG_INF, tl.float32)  # per lane: the largest value seen
    s = tl.zeros([BLOCK_V], tl.float32)          # per lane: sum of exp(x - m)
    for start in range(0, V, BLOCK_V):
        cols = start + lanes
        # Masked at Vp, a 16-divisible bound when Vp % 16 == 0, so that the loads
        # vectorise; the padding read with them is replaced by -inf.
        x = tl.where(cols < V, tl.load(x_row + cols, mask=cols < Vp, other=NEG_INF), NEG_INF)
        m_new = tl.maximum(m, x)
        # A lane that has seen only masked values keeps m = -inf and s = 0: the formula
        # would give exp(-inf - -inf), NaN, there.
        s = tl.where(m_new == NEG_INF, 0.0, s * tl.exp(m - m_new) + tl.exp(x - m_new))
        m = m_new

    row_max = tl.max(m, axis=0)
    # Lanes that saw nothing contribute 0 * exp(-inf) = 0.
    inv_sum = 1.0 / tl.sum(s * tl.exp(m - row_max), axis=0)

    for start in range(0, Vp, BLOCK_V):
        cols = start + lanes
        x = tl.where(cols < V, tl.load(x_row + cols, mask=cols < Vp, other=NEG_INF), NEG_INF)
        tl.store(p_row + cols, tl.exp(x - row_max) * inv_sum, mask=cols < Vp)


# The launch description (docs/triton.md).
WB_TRITON = {
    "summary": "Triton: online softmax, one program per row, per-lane running max and sum over BLOCK_V tiles",
    "numeric": "fp32",
    # softmax_forward's argument struct (contract/ops/softmax_forward.h), field by field.
    "fields": {"probs": "*fp32", "logits": "*fp32", "B": "i32", "T": "i32", "V": "i32", "Vp": "i32"},
    "params": {
        "block_v": {"values": [256, 1024, 4096], "default": 1024, "constexpr": "BLOCK_V"},
        "num_warps": {"values": [4, 8], "default": 4},
        # One value: Triton 3.6 pipelines loads that feed tl.dot, not these (2 gave
        # byte-identical cubins), so a second value would only double the sweep.
        "num_stages": {"values": [1], "default": 1},
    },
    "launches": [{
        "kernel": softmax_online,
        "grid": ["B * T"],
        "args": {"probs": "probs", "logits": "logits", "V": "V", "Vp": "Vp"},
        "divisible": ["probs", "logits", "Vp"],
    }],
}
