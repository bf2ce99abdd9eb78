"""PyTorch: linear layer backward: dinp = dout @ weight (written), dweight += dout^T @ inp.

Idea: the (B*T, OC) dout times the (OC, C) weight gives dinp; torch.addmm adds
dout^T @ inp to the old dweight in one GEMM (beta = 1), which is how the
accumulation is expressed without a separate add.

Why: the explicit backward of F.linear a user writes in a custom autograd.Function
(and what autograd itself runs: two GEMMs); on the GPU both are cuBLAS calls in
eager, cuBLAS or Triton templates under torch.compile: the vendor baseline for the
hand-written backward GEMMs.

Limits: eager launches two GEMMs; the transposed dout is a view (cuBLAS reads it
transposed, no copy). Out of place: returns a new dweight.
"""
import torch


def rung(t, s, k):
    C, OC = s["C"], s["OC"]
    dout2 = t["dout"].reshape(-1, OC)
    dinp = t["dout"] @ t["weight"]
    dweight = torch.addmm(t["dweight"], dout2.t(), t["inp"].reshape(-1, C))
    return {"dinp": dinp, "dweight": dweight}
