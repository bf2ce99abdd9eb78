# softmax_forward, planted Triton rung 8: variant 6 without the online rescale.
#
# Idea: a planted control, never a rung of the ladder (it lives under tests/, not
# variants/). Variant 6 exactly, except that when a lane's running maximum grows its
# running sum is not multiplied by exp(m_old - m_new): the terms summed before stay
# relative to the old maximum, so the sum is too large and every probability too small.
# Why: a check of Triton rungs under the interpreter must call it INCORRECT wherever a
# row takes more than one tile of BLOCK_V (tests/triton/test_triton_interpret.py); if
# it passes, the check cannot see a dropped rescale.
# Limits: a row that fits one tile never rescales, so there it is correct: the check
# must use V > BLOCK_V.
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
        s = tl.where(m_new == NEG_INF, 0.0, s + tl.exp(x - m_new))
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
    "summary": "planted: online softmax without the rescale, one program per row, per-lane running max and sum over BLOCK_V tiles",
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
