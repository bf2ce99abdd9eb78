"""PyTorch: residual add on bf16 tensors, out = inp1 + inp2.

Idea: one elementwise add of the two bf16 tensors.

Why: the residual stream of a bf16 model is exactly this. PyTorch adds bf16 tensors by
widening both to fp32 and rounding the sum once (the sum of two bf16 values is exact in
fp32), which is the contract's single rounding.

Limits: none: one elementwise kernel in eager and compile alike.
"""


def rung(t, s, k):
    return {"out": t["inp1"] + t["inp2"]}
