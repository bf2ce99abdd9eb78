"""The ops of one GPT-2 training step in PyTorch (float64): an independent check of
wb's CPU reference. Backward ops go through autograd.

Every function takes the inputs of one op (a dict of tensors named as in the op's
definition: float64 for f32 tensors, int64 for token ids), its shape (a dict of
dims) and its scalars, and returns the op's outputs (and the final values of its
inout tensors) as a dict of float64 tensors.
"""
import math

import torch
import torch.nn.functional as F

LAYERNORM_EPS = 1e-5


def encoder_forward(t, s, k):
    return {"out": t["wte"][t["inp"]] + t["wpe"].unsqueeze(0)}


def encoder_backward(t, s, k):
    wte = torch.zeros_like(t["dwte"], requires_grad=True)
    wpe = torch.zeros_like(t["dwpe"], requires_grad=True)
    (wte[t["inp"]] + wpe.unsqueeze(0)).backward(t["dout"])
    return {"dwte": t["dwte"] + wte.grad, "dwpe": t["dwpe"] + wpe.grad}


def _layernorm(x, weight, bias):
    C = x.shape[-1]
    out = F.layer_norm(x, (C,), weight, bias, LAYERNORM_EPS)
    mean = x.mean(-1)
    rstd = 1.0 / torch.sqrt(x.var(-1, unbiased=False) + LAYERNORM_EPS)
    return out, mean, rstd


def layernorm_forward(t, s, k):
    out, mean, rstd = _layernorm(t["inp"], t["weight"], t["bias"])
    return {"out": out, "mean": mean, "rstd": rstd}


def layernorm_backward(t, s, k):
    x = t["inp"].clone().requires_grad_()
    w = t["weight"].clone().requires_grad_()
    b = torch.zeros_like(w, requires_grad=True)
    F.layer_norm(x, (x.shape[-1],), w, b, LAYERNORM_EPS).backward(t["dout"])
    return {"dinp": t["dinp"] + x.grad, "dweight": t["dweight"] + w.grad, "dbias": t["dbias"] + b.grad}


def fused_residual_layernorm_forward(t, s, k):
    residual = t["inp1"] + t["inp2"]
    normed, mean, rstd = _layernorm(residual, t["weight"], t["bias"])
    return {"residual": residual, "normed": normed, "mean": mean, "rstd": rstd}


def matmul_forward(t, s, k):
    return {"out": F.linear(t["inp"], t["weight"], t["bias"])}


def matmul_gelu_forward(t, s, k):
    pre = F.linear(t["inp"], t["weight"], t["bias"])
    return {"pre": pre, "out": F.gelu(pre, approximate="tanh")}


def matmul_backward(t, s, k):
    # dinp is overwritten, dweight accumulated; the bias gradient is matmul_backward_bias
    x = t["inp"].clone().requires_grad_()
    w = t["weight"].clone().requires_grad_()
    F.linear(x, w).backward(t["dout"])
    return {"dinp": x.grad, "dweight": t["dweight"] + w.grad}


def matmul_backward_bias(t, s, k):
    return {"dbias": t["dbias"] + t["dout"].reshape(-1, t["dout"].shape[-1]).sum(0)}


def _attention(qkv, NH):
    B, T, C3 = qkv.shape
    C = C3 // 3
    hs = C // NH
    q, k, v = (part.view(B, T, NH, hs).transpose(1, 2) for part in qkv.split(C, dim=2))
    scores = (q @ k.transpose(-2, -1)) / math.sqrt(hs)
    causal = torch.ones(T, T, dtype=torch.bool).tril()
    scores = scores.masked_fill(~causal, float("-inf"))
    lse = torch.logsumexp(scores, dim=-1)
    out = (torch.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(B, T, C)
    return out, lse


def attention_forward(t, s, k):
    out, lse = _attention(t["qkv"], s["NH"])
    return {"out": out, "lse": lse}


def attention_backward(t, s, k):
    qkv = t["qkv"].clone().requires_grad_()
    out, _ = _attention(qkv, s["NH"])
    out.backward(t["dout"])
    return {"dqkv": qkv.grad}


def gelu_forward(t, s, k):
    return {"out": F.gelu(t["inp"], approximate="tanh")}


def gelu_backward(t, s, k):
    x = t["inp"].clone().requires_grad_()
    F.gelu(x, approximate="tanh").backward(t["dout"])
    return {"dinp": x.grad}


def residual_forward(t, s, k):
    return {"out": t["inp1"] + t["inp2"]}


def softmax_forward(t, s, k):
    V = s["V"]
    probs = torch.zeros_like(t["logits"])
    probs[..., :V] = torch.softmax(t["logits"][..., :V], dim=-1)
    return {"probs": probs}


def crossentropy_forward(t, s, k):
    return {"losses": -torch.log(t["probs"].gather(-1, t["targets"].unsqueeze(-1)).squeeze(-1))}


def crossentropy_softmax_backward(t, s, k):
    V = s["V"]
    # Logits whose softmax is probs: their log (up to a constant per row).
    z = torch.log(t["probs"][..., :V]).clone().requires_grad_()
    losses = F.cross_entropy(z.reshape(-1, V), t["targets"].reshape(-1), reduction="none")
    (losses * t["dlosses"].reshape(-1)).sum().backward()
    dlogits = t["dlogits"].clone()
    dlogits[..., :V] += z.grad
    return {"dlogits": dlogits}


def fused_classifier(t, s, k):
    V = s["V"]
    z = t["logits"][..., :V].clone().requires_grad_()
    losses = F.cross_entropy(z.reshape(-1, V), t["targets"].reshape(-1), reduction="none")
    (losses.sum() * k["dloss"]).backward()
    dlogits = torch.zeros_like(t["logits"])
    dlogits[..., :V] = z.grad
    return {"logits": dlogits, "losses": losses.detach().reshape(t["targets"].shape)}


def adamw(t, s, k):
    p = t["params"].clone().requires_grad_()
    # The learning rate and the step number are tensors of the op (device memory in wb).
    opt = torch.optim.AdamW([p], lr=float(t["lr"].reshape(())), betas=(k["beta1"], k["beta2"]), eps=k["eps"],
                            weight_decay=k["weight_decay"])
    # Resume at step t-1 with the given moments; step() makes it step t.
    opt.state[p] = {"step": torch.tensor(float(int(t["t"].reshape(())) - 1)), "exp_avg": t["m"].clone(),
                    "exp_avg_sq": t["v"].clone()}
    # The clipping scale of the global norm, as torch.nn.utils.clip_grad_norm_ (in float32).
    norm = t["grad_norm"].to(torch.float32).reshape(())
    scale = torch.clamp(k["grad_clip"] / (norm + 1e-6), max=1.0) if k["grad_clip"] > 0 else torch.tensor(1.0)
    p.grad = t["grads"] * scale.to(t["grads"].dtype)
    opt.step()
    state = opt.state[p]
    return {"params": p.detach(), "m": state["exp_avg"], "v": state["exp_avg_sq"]}


def global_norm(t, s, k):
    return {"out": torch.linalg.vector_norm(t["grads"]).reshape(1)}
