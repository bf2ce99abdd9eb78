# attention_forward_bf16, planted Triton rung 6: variant 5 without the accumulator's rescale.
#
# Idea: a planted control, never a rung of the ladder (it lives under tests/, not
# variants/). Variant 5 exactly, except that when a row's running maximum grows, the
# output accumulator is not multiplied by 2^(m_old - m_new) (the running sum l still
# is): the P V terms of earlier key tiles keep their weights relative to the old
# maximum, too large, while l is right, so out leans toward the earlier keys' values.
# Why: a check of Triton rungs under the interpreter must call it INCORRECT wherever a
# row streams more than one key tile and its maximum grows after the first
# (tests/triton/test_triton_interpret_bf16.py); if it passes, the check cannot see a
# dropped rescale. lse does not depend on the accumulator: it stays right.
# Limits: a row whose keys fit one tile never rescales, and there it is correct.
import triton
import triton.language as tl

HEAD = tl.constexpr(64)           # the channels of a head the tiles hold
LOG2E = tl.constexpr(1.4426950408889634)
LN2 = tl.constexpr(0.6931471805599453)
NEG_INF = tl.constexpr(float("-inf"))


@triton.jit
def _key_tiles(acc, m, l, q, k_base, rows, chans, chan_in, start, stop, T, C, row_stride, scale,
               BLOCK_N: tl.constexpr, ON_DIAGONAL: tl.constexpr):
    """The online softmax over the key tiles start, start + BLOCK_N, ... below stop, into
    (acc, m, l). ON_DIAGONAL: mask the keys after each query row and the keys past T;
    otherwise every key of the tiles exists and is visible to every row."""
    keys0 = tl.arange(0, BLOCK_N)
    for k0 in range(start, stop, BLOCK_N):
        keys = k0 + keys0
        k_ptrs = k_base + keys.to(tl.int64)[None, :] * row_stride + chans[:, None]  # K^T: (HEAD, BLOCK_N)
        v_ptrs = k_base + C + keys.to(tl.int64)[:, None] * row_stride + chans[None, :]  # V: (BLOCK_N, HEAD)
        if ON_DIAGONAL:
            key_in = keys < T
            k = tl.load(k_ptrs, mask=chan_in[:, None] & key_in[None, :], other=0.0)
            v = tl.load(v_ptrs, mask=key_in[:, None] & chan_in[None, :], other=0.0)
            s = tl.where((keys[None, :] <= rows[:, None]) & key_in[None, :], tl.dot(q, k) * scale, NEG_INF)
        else:
            k = tl.load(k_ptrs, mask=chan_in[:, None], other=0.0)
            v = tl.load(v_ptrs, mask=chan_in[None, :], other=0.0)
            s = tl.dot(q, k) * scale
        # Every row sees key 0 in its first tile, so m_new is finite: no -inf - -inf.
        m_new = tl.maximum(m, tl.max(s, axis=1))
        alpha = tl.exp2(m - m_new)
        p = tl.exp2(s - m_new[:, None])
        l = l * alpha + tl.sum(p, axis=1)
        # PLANTED: P V is added to the accumulator as it is: what was summed under the
        # old maximum is not rescaled by alpha (l still is).
        acc = tl.dot(p.to(tl.bfloat16), v, acc)
        m = m_new
    return acc, m, l


@triton.jit
def flash_forward(out, lse, qkv, T, C, NH, HS, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    tile = tl.program_id(0)
    head = tl.program_id(1)  # b * NH + h
    b = head // NH
    h = head % NH
    row_stride = 3 * C.to(tl.int64)
    # q of (b, t, h) at qkv[b, t, h*HS ...], k at + C, v at + 2C.
    q_base = qkv + b.to(tl.int64) * T * row_stride + h * HS
    k_base = q_base + C

    rows = tile * BLOCK_M + tl.arange(0, BLOCK_M)
    row_in = rows < T
    chans = tl.arange(0, HEAD)
    chan_in = chans < HS
    q = tl.load(q_base + rows.to(tl.int64)[:, None] * row_stride + chans[None, :],
                mask=row_in[:, None] & chan_in[None, :], other=0.0)
    scale = LOG2E / tl.sqrt(HS.to(tl.float32))

    acc = tl.zeros([BLOCK_M, HEAD], dtype=tl.float32)
    m = tl.full([BLOCK_M], NEG_INF, dtype=tl.float32)
    l = tl.zeros([BLOCK_M], dtype=tl.float32)
    # Keys before the tile's first row are visible to every row of it: no mask.
    first = tile * BLOCK_M
    acc, m, l = _key_tiles(acc, m, l, q, k_base, rows, chans, chan_in, 0, first, T, C, row_stride, scale,
                           BLOCK_N, False)
    # The tiles that cross the diagonal, up to the tile's last row (or T).
    last = tl.minimum(first + BLOCK_M, T)
    acc, m, l = _key_tiles(acc, m, l, q, k_base, rows, chans, chan_in, first, last, T, C, row_stride, scale,
                           BLOCK_N, True)

    # A head wider than the tile: NaN everywhere rather than a wrong answer (Limits).
    fits = HS <= HEAD
    o = tl.where(fits, acc / l[:, None], float("nan"))
    out_base = out + b.to(tl.int64) * T * C + h * HS
    tl.store(out_base + rows.to(tl.int64)[:, None] * C + chans[None, :], o.to(tl.bfloat16),
             mask=row_in[:, None] & chan_in[None, :])
    lse_row = tl.where(fits, (m + tl.log2(l)) * LN2, float("nan"))
    tl.store(lse + head.to(tl.int64) * T + rows, lse_row, mask=row_in)


# The launch description (docs/triton.md).
WB_TRITON = {
    "summary": "Triton: fused causal flash attention, BLOCK_M query rows per program, K/V tiles streamed with an "
               "online softmax, Q K^T and P V on tensor cores in bf16 with fp32 accumulation",
    "numeric": "bf16",
    # attention_forward_bf16's argument struct (contract/ops/attention_forward.h), field by field.
    "fields": {"out": "*bf16", "lse": "*fp32", "qkv": "*bf16", "B": "i32", "T": "i32", "C": "i32", "NH": "i32"},
    "params": {
        "block_m": {"values": [64, 128], "default": 64, "constexpr": "BLOCK_M"},
        # A divisor of every block_m: the tiles below the diagonal end at a tile's first row.
        "block_n": {"values": [32, 64], "default": 64, "constexpr": "BLOCK_N"},
        "num_warps": {"values": [4, 8], "default": 4},
        "num_stages": {"values": [2, 3], "default": 2},
    },
    "launches": [{
        "kernel": flash_forward,
        "grid": ["cdiv(T, block_m)", "B * NH"],
        "args": {"out": "out", "lse": "lse", "qkv": "qkv", "T": "T", "C": "C", "NH": "NH", "HS": "C // NH"},
        # HS as well as C: the head's column offset h * HS is then known 16-aligned.
        "divisible": ["out", "lse", "qkv", "C", "HS"],
    }],
}
