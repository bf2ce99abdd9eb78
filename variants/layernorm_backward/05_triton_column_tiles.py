# layernorm_backward, Triton variant 5: dinp one program per row; dweight and dbias one program per column tile, deterministic without workspace.
#
# Idea: two launches. The first gives program r row r: with n = (x - mean) rstd and
# g = weight dout, it reduces the row means of g and of g n and adds
# (g - mean(g) - n mean(g n)) rstd to dinp. A row of C <= BLOCK_C channels is loaded
# once into a register tile; a longer one is walked twice in tiles of BLOCK_C (the means,
# then dinp). The second launch gives each program BLOCK_COL channels and walks all B*T
# rows in slabs of ROWS rows: a [ROWS, BLOCK_COL] tile of inp and of dout per step
# (coalesced along the channels), n dout and dout summed per lane of the tile, the
# lanes reduced over the rows once at the end, then added to dweight and dbias. With
# the 16-divisible specialisation (aligned pointers, C % 16 == 0) the row kernel's
# accesses are 128-bit where a thread holds 4 values of the tile (BLOCK_C >= 128
# num_warps; 64-bit at BLOCK_C = 512 on 8 warps), and the column kernel's loads of
# inp and dout are 128-bit.
# Why it should beat variant 1 (the same two-kernel, atomic-free design with a thread
# per row and a thread per channel): the row kernel's loads coalesce and the row is
# read once when it fits; the column kernel keeps ROWS x BLOCK_COL loads in flight per
# program instead of one per thread. Against variant 3 (deterministic through per-block
# partials in the workspace) it needs no workspace and no third pass over partials,
# at the price of only C / BLOCK_COL programs in the column kernel; against variants 2
# and 4 (float atomics) it is bitwise reproducible. The sweep shows whether that price
# is worth it.
# Limits: none on the shape (64-bit offsets, any C and B*T). inp and dout are read
# twice (once per launch), dinp read and written once. The column kernel runs only
# cdiv(C, BLOCK_COL) programs (24 at GPT-2's C = 768 with BLOCK_COL = 32), each a long
# sequential walk over B*T rows: a GPU with more SMs than that idles in it. Each
# gradient's sum order is fixed by the launch parameters, so results are deterministic
# for given parameters (not equal across parameters in the last bits). Each launch's
# cubins are compiled for every combination of the parameters, also those of the other
# launch, so half of them are byte-identical copies (aot.py does not share them).
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
        g_mean = tl.sum(g, axis=0) / C
        gn_mean = tl.sum(g * n, axis=0) / C
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
    "summary": "Triton: dinp a program per row (one BLOCK_C tile when it fits); dweight/dbias a program per column tile over all rows, no atomics",
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
