"""PyTorch: layer norm backward from the saved mean and rstd, all three gradients accumulated.

Idea: n = (x - mean) rstd and g = weight * dout per row; then
dinp += (g - mean_C(g) - n * mean_C(g n)) * rstd, dweight += sum over rows of n * dout,
dbias += sum over rows of dout.

Why: the formula a user writes in a custom autograd.Function's backward for a layer
norm whose forward saved mean and rstd (the contract's inputs); eager shows the
unfused cost, torch.compile fuses the per-row reductions with the elementwise work
and the column sums, the comparison for a hand-written fused backward kernel.

Limits: eager launches a dozen or more kernels with several (B, T, C) float32
temporaries. Out of place: returns new dinp, dweight and dbias (old value plus
contribution).
"""


def rung(t, s, k):
    dout, x, w = t["dout"], t["inp"], t["weight"]
    mean = t["mean"].unsqueeze(-1)
    rstd = t["rstd"].unsqueeze(-1)
    n = (x - mean) * rstd
    g = w * dout
    dx = (g - g.mean(-1, keepdim=True) - n * (g * n).mean(-1, keepdim=True)) * rstd
    return {
        "dinp": t["dinp"] + dx,
        "dweight": t["dweight"] + (n * dout).sum((0, 1)),
        "dbias": t["dbias"] + dout.sum((0, 1)),
    }
