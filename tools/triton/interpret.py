#!/usr/bin/env python3
"""Runs a Triton rung under Triton's interpreter, on the CPU, on inputs from raw files.

    bash tools/python/python.sh tools/triton/interpret.py RUNG.py REQUEST.json [REQUEST.json...]
    bash tools/python/python.sh tools/triton/interpret.py --serve

This is how wb checks a Triton rung without a GPU (docs/triton.md): the emu backend
writes every tensor of the op (inputs with their fresh values, outputs poisoned) to raw
files, calls this, and reads the outputs back for its usual validation. REQUEST.json:

    {"schema": "wb.triton_interpret/1",
     "fields":  {"B": 3, "T": 43, "V": 101, "Vp": 104},   every integer or float field
     "params":  {"block_v": 256},                         left out: the default
     "tensors": {"probs":  {"in": "probs.bin", "out": "probs.out.bin", "count": 13416},
                 "logits": {"in": "logits.bin", "count": 13416}}}   every pointer field
                                                          ({"null": true}: a null pointer)

A tensor file holds `count` elements of its field's type ("*fp32" float32, "*bf16" the
16 bits of a bfloat16, "*i32" int32), little-endian, nothing else. Relative paths are
relative to REQUEST.json's folder. After the run each tensor with an "out" is written
there (a temporary file, then a rename); "in" and "out" may be the same file.

Each tensor lies between two guard bands of 1024 elements filled with a NaN pattern (for
int32, 0x5a5a5a5a): an unmasked read past a tensor's end reads NaN and so poisons what it
feeds, and a write past it changes a guard, which fails the run.

Several requests run in turn in one process (Python, torch and triton start once, which
is most of a small check's time); each prints one line on stdout, "ok REQUEST" or
"failed REQUEST: why". Exit: 0 every request ran and its outputs are written; 1 the rung
failed under the interpreter on at least one (it raised, or wrote outside a tensor),
whose outputs are not written; 2 bad usage, a bad request or a rung that is not one
(nothing after it runs); 4 a bug in this tool.

--serve is how wb itself calls it (device/triton/interpreter.cpp): one process for all
of a wb command's checks, so that Python, torch and triton start once. It reads one
request per line on stdin, "RUNG.py<TAB>REQUEST.json" (absolute paths), after a first
line of its own, "ready triton <version>" (or "unavailable: why", and it ends), and answers
each with one line on stdout: "ok", "failed: why" (the rung failed on it, as exit 1),
"bad: why" (a bad request or a file that is not a rung, as exit 2) or "bug: why" (as
exit 4, the traceback on stderr). Rungs are loaded once, again when their file
changes. It ends at the end of stdin, with exit 0.
"""
import json
import os
import sys
import traceback
import warnings

# Before triton is imported (by the rung): @triton.jit reads it when it decorates.
os.environ["TRITON_INTERPRET"] = "1"

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bf16_fixes  # noqa: E402
import rung as rungs  # noqa: E402

SCHEMA = "wb.triton_interpret/1"
GUARD = 1024
# The guard's bit pattern per element type: a quiet NaN with a payload nothing computes.
GUARD_BITS = {"*fp32": ("<u4", 0x7FC0DEAD), "*bf16": ("<u2", 0x7FDE), "*i32": ("<u4", 0x5A5A5A5A)}


class BadRequest(Exception):
    pass


class RungFailed(Exception):
    pass


def read_request(path):
    try:
        with open(path) as f:
            req = json.load(f)
    except OSError as e:
        raise BadRequest(f"cannot read {path}: {e.strerror}")
    except json.JSONDecodeError as e:
        raise BadRequest(f"{path} is not JSON: {e}")
    if not isinstance(req, dict) or req.get("schema") != SCHEMA:
        raise BadRequest(f"{path}: not a request (its \"schema\" must be \"{SCHEMA}\")")
    unknown = set(req) - {"schema", "fields", "params", "tensors"}
    if unknown:
        raise BadRequest(f"{path}: unknown keys {', '.join(sorted(unknown))}")
    return req


def check_request(rung, req, where):
    fields, params, tensors = req.get("fields", {}), req.get("params", {}), req.get("tensors", {})
    if not all(isinstance(x, dict) for x in (fields, params, tensors)):
        raise BadRequest(f"{where}: fields, params and tensors are objects")
    scalars = [n for n, t in rung.fields.items() if not t.startswith("*")]
    pointers = [n for n, t in rung.fields.items() if t.startswith("*")]
    for n in scalars:
        v = fields.get(n)
        ok = isinstance(v, (int, float)) if rung.fields[n] == "fp32" else isinstance(v, int)
        if isinstance(v, bool) or not ok:
            raise BadRequest(f"{where}: fields.{n} must be {'a number' if rung.fields[n] == 'fp32' else 'an integer'}"
                             f" (the rung's fields: {', '.join(rung.fields)})")
    extra = set(fields) - set(scalars)
    if extra:
        raise BadRequest(f"{where}: fields {', '.join(sorted(extra))} are not the rung's integer or float fields "
                         f"({', '.join(scalars)})")
    for n in pointers:
        t = tensors.get(n)
        if isinstance(t, dict) and t == {"null": True}:
            continue
        if not isinstance(t, dict) or not isinstance(t.get("in"), str) or not isinstance(t.get("count"), int) \
                or isinstance(t.get("count"), bool) or t["count"] < 0 or not isinstance(t.get("out", ""), str):
            raise BadRequest(f"{where}: tensors.{n} must be {{\"in\": file, \"count\": elements[, \"out\": file]}}"
                             f" or {{\"null\": true}}")
    extra = set(tensors) - set(pointers)
    if extra:
        raise BadRequest(f"{where}: tensors {', '.join(sorted(extra))} are not the rung's pointer fields "
                         f"({', '.join(pointers)})")
    for n, v in params.items():
        if isinstance(v, bool) or not isinstance(v, int):
            raise BadRequest(f"{where}: params.{n} must be an integer")
    try:
        return rung.complete(params)
    except rungs.RungError as e:
        raise BadRequest(str(e))


def load_tensors(rung, req, folder):
    """{field: (torch tensor with guards, the view the kernel gets, numpy guard dtype)}."""
    import numpy as np
    import torch
    out = {}
    for name, t in req["tensors"].items():
        ty = rung.fields[name]
        if t.get("null"):
            # A null pointer (an optional tensor left out): an empty tensor, whose address
            # torch makes 0, as the launcher passes 0.
            torch_type = {"*fp32": torch.float32, "*bf16": torch.bfloat16, "*i32": torch.int32}[ty]
            empty = torch.empty(0, dtype=torch_type)
            if empty.data_ptr() != 0:
                raise BadRequest(f"tensors.{name} is null, but an empty torch tensor has an address here")
            out[name] = (empty, empty, None)
            continue
        path = os.path.join(folder, t["in"])
        bits, pattern = GUARD_BITS[ty]
        try:
            raw = np.fromfile(path, dtype=np.dtype(bits))
        except OSError as e:
            raise BadRequest(f"cannot read tensors.{name}.in, {path}: {e.strerror}")
        if raw.size != t["count"] or os.path.getsize(path) != t["count"] * raw.itemsize:
            raise BadRequest(f"{path} holds {os.path.getsize(path)} bytes; tensors.{name} says {t['count']} "
                             f"elements of {ty[1:]}, {t['count'] * raw.itemsize} bytes")
        whole = np.full(t["count"] + 2 * GUARD, pattern, dtype=np.dtype(bits))
        whole[GUARD:GUARD + t["count"]] = raw
        torch_type = {"*fp32": torch.float32, "*bf16": torch.bfloat16, "*i32": torch.int32}[ty]
        carrier = torch.from_numpy(whole.view(np.int32) if bits == "<u4" else whole.view(np.int16)).view(torch_type)
        out[name] = (carrier, carrier[GUARD:GUARD + t["count"]], whole)
    return out


def work_around_scalar_conversion():
    """Triton 3.6's interpreter turns a loop bound held in a tensor (range(0, V, BLOCK)
    with V an argument) into a Python int with int() of a one-element array, which numpy
    2.4 refuses (TypeError: only 0-dimensional arrays can be converted to Python scalars;
    Triton's issue 9171, fixed after 3.6). Where both hold, the patch Triton applies to
    tl.tensor for the run gets an __index__ that takes the one element explicitly. Its
    scope restores it with the rest when the kernel returns."""
    import numpy as np
    import triton
    from triton.runtime import interpreter
    if triton.__version__ != "3.6.0" or tuple(int(x) for x in np.__version__.split(".")[:2]) < (2, 4):
        return
    original = interpreter._patch_lang_tensor
    if getattr(original, "wb_patched", False):
        return

    def patch_lang_tensor(tensor, scope):
        original(tensor, scope)
        scope.set_attr(tensor, "__index__", lambda self: int(np.asarray(self.handle.data).reshape(-1)[0]))

    patch_lang_tensor.wb_patched = True
    interpreter._patch_lang_tensor = patch_lang_tensor


def run(rung, req, folder, where="request"):
    import numpy as np
    work_around_scalar_conversion()
    bf16_fixes.patch()
    params = check_request(rung, req, where)
    tensors = load_tensors(rung, req, folder)
    env = dict(req.get("fields", {}))
    env.update(params)
    before = {n: (w[:GUARD].copy(), w[-GUARD:].copy()) for n, (_, _, w) in tensors.items() if w is not None}
    for launch in rung.launches:
        grid = tuple(g.value(env) for g in launch.grid)
        if any(g < 0 for g in grid):
            raise BadRequest(f"{launch.name}'s grid {grid} is negative for these fields")
        if 0 in grid:
            continue
        args = {}
        for name, expr, ty in launch.args:
            args[name] = tensors[expr.text][1] if ty.startswith("*") else (
                float(env[expr.text]) if ty == "fp32" else expr.value(env))
        for c, p in launch.constexprs.items():
            args[c] = params[p]
        try:
            # Lanes that a kernel masks off may still compute exp(-inf - -inf) and the
            # like in numpy before a tl.where drops them: numpy's warnings are noise here.
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                launch.kernel[grid](**args, num_warps=params["num_warps"], num_stages=params["num_stages"])
        except Exception as e:  # the rung's own failure, named
            raise RungFailed(f"{launch.name} raised under the interpreter: {type(e).__name__}: {e}")
        for n, (_, _, w) in tensors.items():
            if w is None:
                continue
            lo, hi = before[n]
            if not (np.array_equal(w[:GUARD], lo) and np.array_equal(w[-GUARD:], hi)):
                side = "before its start" if not np.array_equal(w[:GUARD], lo) else "past its end"
                raise RungFailed(f"{launch.name} wrote outside {n} ({side}), with params "
                                 f"{rungs.Rung.params_text(params)}")
    for name, t in req["tensors"].items():
        if t.get("out") and not t.get("null"):
            whole = tensors[name][2]
            rungs.write_file(os.path.join(folder, t["out"]), whole[GUARD:GUARD + t["count"]].tobytes())
    return params


def serve(stdin, stdout):
    # Only the answers go to stdout: whatever a rung or a library prints goes to stderr.
    sys.stdout = sys.stderr
    try:
        import numpy  # noqa: F401
        import torch  # noqa: F401
        import triton
    except ImportError as e:
        stdout.write(f"unavailable: {type(e).__name__}: {e}\n")
        stdout.flush()
        return 0
    stdout.write(f"ready triton {triton.__version__}\n")
    stdout.flush()
    loaded = {}  # path -> (mtime, size, rung)
    for line in stdin:
        line = line.rstrip("\n")
        if not line:
            continue
        try:
            rung_path, request_path = line.split("\t")
            st = os.stat(rung_path)
            cached = loaded.get(rung_path)
            if cached is None or cached[:2] != (st.st_mtime_ns, st.st_size):
                cached = (st.st_mtime_ns, st.st_size, rungs.load(rung_path))
                loaded[rung_path] = cached
            rung = cached[2]
            run(rung, read_request(request_path), os.path.dirname(os.path.abspath(request_path)), request_path)
            answer = "ok"
        except ValueError:
            answer = "bad: a request line is RUNG.py<TAB>REQUEST.json"
        except RungFailed as e:
            answer = f"failed: {e}"
        except (BadRequest, rungs.RungError) as e:
            answer = f"bad: {e}"
        except OSError as e:
            answer = f"bad: {e.filename or ''}: {e.strerror}"
        except Exception as e:
            traceback.print_exc()
            answer = f"bug: interpret.py: {type(e).__name__}: {e}"
        # One line per request, whatever the messages hold.
        stdout.write(answer.replace("\n", " ") + "\n")
        stdout.flush()
    return 0


def main(argv):
    if argv == ["--serve"]:
        return serve(sys.stdin, sys.stdout)
    if len(argv) < 2 or any(a.startswith("-") for a in argv):
        rungs.fail("usage: interpret.py RUNG.py REQUEST.json [REQUEST.json...] | --serve (docs/triton.md)")
    rung_path, requests = argv[0], argv[1:]
    failed = 0
    try:
        rung = rungs.load(rung_path)
        for request_path in requests:
            req = read_request(request_path)
            try:
                params = run(rung, req, os.path.dirname(os.path.abspath(request_path)), request_path)
                print(f"ok {request_path}: {rung.op} {rung.name} ran under the interpreter with "
                      f"{rungs.Rung.params_text(params)}", flush=True)
            except RungFailed as e:
                failed += 1
                print(f"failed {request_path}: {rung.op} {rung.name}: {e}", flush=True)
    except (BadRequest, rungs.RungError) as e:
        rungs.fail(f"interpret.py: {e}")
    except OSError as e:
        rungs.fail(f"interpret.py: cannot write an output: {e}")
    except Exception:
        traceback.print_exc()
        rungs.fail("interpret.py: a bug in this tool (the traceback above)", 4)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
