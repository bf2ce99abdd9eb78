# layernorm_backward, planted Triton rung 6: variant 5 with its row means taken over the tile, not the row.
#
# Idea: a planted control, never a rung of the ladder (it lives under tests/, not
# variants/). Variant 5 exactly, except that where the row fits in one tile, the row
# kernel divides the sums of g and of g n by BLOCK_C instead of C: the masked lanes
# (zeros) are counted into mean(g) and mean(g n), so dinp is wrong wherever C < BLOCK_C.
# Why: a check of Triton rungs under the interpreter must call it INCORRECT at every
# shape with C < BLOCK_C (tests/triton/test_triton_interpret_layernorm.py); if it
# passes, the check cannot see a reduction normalised by the padded width.
# Limits: where C == BLOCK_C (wide's C = 1024 at the default) or the row takes several
# tiles, the fault does not show; dweight and dbias are variant 5's and correct.
import triton
import triton.language as tl

ROWS = tl.constexpr(32)  # rows per slab of the column kernel


@triton.jit
def dinp_rows(dinp, dout, inp, weight, mean, rstd, C, BLOCK_C: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = inp + row * C
    dy_row = dout + row * C
    dx_row = dinp + row * C
    m = tl.load(mean + row)
    s = tl.load(rstd + row)
    lanes = tl.arange(0, BLOCK_C)
    if C <= BLOCK_C:
        inside = lanes < C
        n = (tl.load(x_row + lanes, mask=inside, other=0.0) - m) * s
        # Masked lanes load dout = weight = 0, so g = 0 and g n = 0 there: no tl.where.
        g = tl.load(weight + lanes, mask=inside, other=0.0) * tl.load(dy_row + lanes, mask=inside, other=0.0)
        # The planted fault: the means divided by the tile's width, not the row's.
        g_mean = tl.sum(g, axis=0) / BLOCK_C
        gn_mean = tl.sum(g * n, axis=0) / BLOCK_C
        old = tl.load(dx_row + lanes, mask=inside, other=0.0)
        tl.store(dx_row + lanes, old + (g - g_mean - n * gn_mean) * s, mask=inside)
    else:
        g_acc = tl.zeros([BLOCK_C], tl.float32)
        gn_acc = tl.zeros([BLOCK_C], tl.float32)
        for start in range(0, C, BLOCK_C):
            cols = start + lanes
            inside = cols < C
            n = (tl.load(x_row + cols, mask=inside, other=0.0) - m) * s
            g = tl.load(weight + cols, mask=inside, other=0.0) * tl.load(dy_row + cols, mask=inside, other=0.0)
            g_acc += g
            gn_acc += g * n
        g_mean = tl.sum(g_acc, axis=0) / C
        gn_mean = tl.sum(gn_acc, axis=0) / C
        for start in range(0, C, BLOCK_C):
            cols = start + lanes
            inside = cols < C
            n = (tl.load(x_row + cols, mask=inside, other=0.0) - m) * s
            g = tl.load(weight + cols, mask=inside, other=0.0) * tl.load(dy_row + cols, mask=inside, other=0.0)
            old = tl.load(dx_row + cols, mask=inside, other=0.0)
            tl.store(dx_row + cols, old + (g - g_mean - n * gn_mean) * s, mask=inside)


@triton.jit
def dweight_dbias_columns(dweight, dbias, dout, inp, mean, rstd, BT, C, BLOCK_COL: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_COL + tl.arange(0, BLOCK_COL)
    col_inside = cols < C
    slab = tl.arange(0, ROWS)
    # Per lane of the tile: the lanes are only reduced over the rows after the walk, so
    # the loop carries no cross-lane reduction, and the sum order is fixed: deterministic.
    w_acc = tl.zeros([ROWS, BLOCK_COL], tl.float32)
    b_acc = tl.zeros([ROWS, BLOCK_COL], tl.float32)
    for start in range(0, BT, ROWS):
        rows = (start + slab).to(tl.int64)  # 64-bit: rows * C passes 2^31 at large B*T*C
        row_inside = rows < BT
        m = tl.load(mean + rows, mask=row_inside, other=0.0)
        s = tl.load(rstd + rows, mask=row_inside, other=0.0)
        offsets = rows[:, None] * C + cols[None, :]
        inside = row_inside[:, None] & col_inside[None, :]
        x = tl.load(inp + offsets, mask=inside, other=0.0)
        dy = tl.load(dout + offsets, mask=inside, other=0.0)
        # Masked elements load dout = 0: they add nothing to either sum.
        w_acc += (x - m[:, None]) * s[:, None] * dy
        b_acc += dy
    dw = tl.sum(w_acc, axis=0)
    db = tl.sum(b_acc, axis=0)
    # Both gradients are accumulated (+=), as the contract says.
    tl.store(dweight + cols, tl.load(dweight + cols, mask=col_inside, other=0.0) + dw, mask=col_inside)
    tl.store(dbias + cols, tl.load(dbias + cols, mask=col_inside, other=0.0) + db, mask=col_inside)


# The launch description (docs/triton.md).
WB_TRITON = {
    "summary": "planted: row means over BLOCK_C; dinp a program per row (one BLOCK_C tile when it fits); dweight/dbias a program per column tile over all rows, no atomics",
    "numeric": "fp32",
    # layernorm_backward's argument struct (contract/ops/layernorm_backward.h), field by field.
    "fields": {"dinp": "*fp32", "dweight": "*fp32", "dbias": "*fp32", "dout": "*fp32", "inp": "*fp32",
               "weight": "*fp32", "mean": "*fp32", "rstd": "*fp32", "B": "i32", "T": "i32", "C": "i32"},
    "params": {
        "block_c": {"values": [512, 1024], "default": 1024, "constexpr": "BLOCK_C"},
        "block_col": {"values": [32, 64], "default": 32, "constexpr": "BLOCK_COL"},
        "num_warps": {"values": [4, 8], "default": 4},
        # One value: no tl.dot, so Triton 3.6 pipelines nothing here (docs/triton.md).
        "num_stages": {"values": [1], "default": 1},
    },
    "launches": [
        {
            "kernel": dinp_rows,
            "grid": ["B * T"],
            "args": {"dinp": "dinp", "dout": "dout", "inp": "inp", "weight": "weight", "mean": "mean",
                     "rstd": "rstd", "C": "C"},
            "divisible": ["dinp", "dout", "inp", "weight", "C"],
        },
        {
            "kernel": dweight_dbias_columns,
            "grid": ["cdiv(C, block_col)"],
            "args": {"dweight": "dweight", "dbias": "dbias", "dout": "dout", "inp": "inp", "mean": "mean",
                     "rstd": "rstd", "BT": "B * T", "C": "C"},
            "divisible": ["dweight", "dbias", "dout", "inp", "C"],
        },
    ],
}
