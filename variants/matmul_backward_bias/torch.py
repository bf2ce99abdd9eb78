"""PyTorch: bias gradient of a linear layer, dbias += dout summed over the B*T rows.

Idea: one column sum, dout.sum((0, 1)), added to the old dbias.

Why: the bias line of F.linear's backward as a user writes it; eager runs
PyTorch's reduction kernel and an add, torch.compile one fused reduction, the
baseline for a hand-written column-reduction kernel.

Limits: eager launches two kernels (sum, add). Out of place: returns a new dbias.
"""


def rung(t, s, k):
    return {"dbias": t["dbias"] + t["dout"].sum((0, 1))}
