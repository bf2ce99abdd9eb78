# crossentropy_forward, Triton variant 2: a tile of BLOCK rows per program, one gathered probability per row.
#
# Idea: program p owns rows p*BLOCK .. p*BLOCK+BLOCK-1 (one mask covers the tail of any
# B*T). It loads the tile's targets as one contiguous vector, gathers
# probs[row * Vp + target] for each row (the padding columns V..Vp are never named: the
# targets lie in [0, V)), and stores -log of each as one contiguous vector of losses.
# Why it should match variant 1 (a thread per row): the op reads one value per row, so
# there is nothing to share and no work to reorganise; what a tile changes is that the
# targets and losses move as vectors (with aligned pointers and B*T % 16 == 0, 128-bit
# where a thread holds 4 rows, BLOCK >= 128 num_warps; scalar at 1 row) and that
# BLOCK and num_warps are swept, so the launch shape is chosen per device rather than
# fixed. It is the Triton baseline of the ladder: what the op costs in ten lines.
# Limits: none on the shape (64-bit offsets: row * Vp passes 2^31 from row 42691 on at
# GPT-2's Vp = 50304). The gathers are scattered, one 32-byte sector per row, as in
# variant 1; the kernel is latency- and launch-bound at any realistic B*T. A target
# outside [0, V) is the caller's error (the contract excludes it) and is not checked.
# log uses the GPU's approximate instruction (a few ulp), inside the op's tolerance.
import triton
import triton.language as tl


@triton.jit
def crossentropy_rows(losses, probs, targets, BT, Vp, BLOCK: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    inside = rows < BT
    target = tl.load(targets + rows, mask=inside, other=0)
    # Rows outside B*T gather nothing; other=1.0 keeps their (unstored) log finite.
    p = tl.load(probs + rows * Vp + target, mask=inside, other=1.0)
    tl.store(losses + rows, -tl.log(p), mask=inside)


# The launch description (docs/triton.md).
WB_TRITON = {
    "summary": "Triton: BLOCK rows per program, targets and losses as vectors, one gathered probability per row",
    "numeric": "fp32",
    # crossentropy_forward's argument struct (contract/ops/crossentropy_forward.h), field by field.
    "fields": {"losses": "*fp32", "probs": "*fp32", "targets": "*i32", "B": "i32", "T": "i32", "Vp": "i32"},
    "params": {
        "block": {"values": [128, 256, 1024], "default": 256, "constexpr": "BLOCK"},
        "num_warps": {"values": [4, 8], "default": 4},
        # One value: no loop at all, so nothing to pipeline.
        "num_stages": {"values": [1], "default": 1},
    },
    "launches": [{
        "kernel": crossentropy_rows,
        "grid": ["cdiv(B * T, block)"],
        "args": {"losses": "losses", "probs": "probs", "targets": "targets", "BT": "B * T", "Vp": "Vp"},
        # The gathers are scattered whatever the alignment: only the row vectors vectorise.
        "divisible": ["losses", "targets", "BT"],
    }],
}
