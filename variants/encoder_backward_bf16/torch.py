"""PyTorch: embedding backward on bf16, the scatter-add into dwte and dwpe in fp32.

Idea: widen the old gradients and dout to fp32, index_add the B*T rows of dout into the
token rows of dwte, sum dout over the batch into dwpe, and round each accumulated
gradient to bf16 once at the end.

Why: nn.Embedding's backward is an index_add over the token ids. Done directly on bf16
storage, every colliding token would round its partial sum again (a frequent token's
row collects many additions); a careful user accumulates in fp32 and casts back, which
is also the contract: old + sum, rounded once.

Limits: the fp32 copies of dwte (V, C) and dwpe cost an extra read and write of each
(eager: about six kernels; compile fuses the casts around the index_add). Which rows
are touched is data-dependent, so the whole of dwte is widened and rounded back, not
only the rows the tokens name; untouched rows round back to themselves exactly.
"""
import torch


def rung(t, s, k):
    C = s["C"]
    dout = t["dout"].float()
    tokens = t["inp"].reshape(-1).long()
    dwte = t["dwte"].float().index_add(0, tokens, dout.reshape(-1, C))
    dwpe = t["dwpe"].float() + dout.sum(0)
    return {"dwte": dwte.to(torch.bfloat16), "dwpe": dwpe.to(torch.bfloat16)}
