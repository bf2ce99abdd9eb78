"""PyTorch: softmax cross-entropy forward and backward on bf16 logits, in fp32.

Idea: widen the V real logits of each row to fp32, subtract the row max (exact),
lse0 = log(sum exp(z)), losses = lse0 - z[target] (fp32), dlogits = (exp(z - lse0) -
onehot(target)) * dloss, rounded to bf16 once and padded with zeros to Vp (the logits'
storage is overwritten with dlogits, so the padding is written as 0).

Why: F.cross_entropy gives the losses but its gradient only through autograd; the
explicit softmax-minus-onehot formula is what a fused loss's hand-written backward
does. In bf16 the softmax would round the probabilities before the subtraction of the
one-hot, so the statistics run in fp32 (as llm.c's bf16 classifier keeps them), and the
loss is formed from the max-shifted row, so the far-moved rows (+-90) lose nothing to
cancellation.

Limits: eager launches about a dozen kernels over (B, T, V) fp32 temporaries (the
widened row, the probabilities, the one-hot); torch.compile fuses them into a row
reduction and one pointwise pass. The result is a new tensor, not written in place
over the logits.
"""
import torch
import torch.nn.functional as F


def rung(t, s, k):
    V, Vp = s["V"], s["Vp"]
    x = t["logits"][..., :V].float()
    z = x - x.amax(-1, keepdim=True)
    lse0 = torch.logsumexp(z, dim=-1, keepdim=True)
    targets = t["targets"].long().unsqueeze(-1)
    losses = (lse0 - z.gather(-1, targets)).squeeze(-1)
    onehot = F.one_hot(targets.squeeze(-1), V).to(torch.float32)
    dlogits = (torch.exp(z - lse0) - onehot) * k["dloss"]
    dlogits = F.pad(dlogits, (0, Vp - V))  # padding columns are written as 0
    return {"logits": dlogits.to(torch.bfloat16), "losses": losses}
