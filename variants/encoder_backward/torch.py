"""PyTorch: embedding backward, scatter-add dout into dwte by token and into dwpe by position.

Idea: dwte gets index_add over the B*T rows of dout at their token ids; dwpe gets
dout summed over the batch. Both are accumulated: the inouts' old values plus the
contribution.

Why: this is the explicit backward of F.embedding + the position add as a user
writes it (aten's own embedding backward is an index_add / sort-and-reduce); eager
runs PyTorch's index_add (atomics on the GPU) and a reduction, torch.compile lowers
index_add to its own scatter-add kernel and fuses the batch sum.

Limits: index_add with atomics is not deterministic on the GPU (the order of the
float32 additions into a repeated token's row varies). The token ids are converted
to int64 (.long()). Out of place: returns new dwte and dwpe rather than updating
the inouts in their storage.
"""


def rung(t, s, k):
    C = s["C"]
    dout = t["dout"]
    dwte = t["dwte"].index_add(0, t["inp"].reshape(-1).long(), dout.reshape(-1, C))
    dwpe = t["dwpe"] + dout.sum(0)
    return {"dwte": dwte, "dwpe": dwpe}
