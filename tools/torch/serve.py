#!/usr/bin/env python3
"""Runs the PyTorch rungs of wb's ops (variants/<op>/torch.py) for wb, eager or compiled.

    bash tools/python/python.sh tools/torch/serve.py --serve

This is how wb itself runs a PyTorch rung (device/torch/rung.cpp, docs/torch.md): one
process per wb process, so that Python and torch start once. A PyTorch rung is a file
variants/<op>/torch.py defining

    def rung(t, s, k):   t: the op's tensors by name (torch tensors in the op's storage
                            dtype, shaped by the contract; None for an optional tensor
                            left out), s: every shape dim, k: the op's scalars
        return {...}     every output and inout's final value, in its dims and dtype

wb registers two rungs per file: torch_eager calls rung() as it is, torch_compile calls
torch.compile(rung) (one compiled function per file and CPU thread count for the
process's life, so that a new shape recompiles as it would in a user's program).

The protocol: after a first line of its own, "ready torch <version> threads <n>" (or
"unavailable: why", and it ends), one request per line on stdin, one answer per line on
stdout:

    prepare CALL.json   load the call's tensors (wb.torch_call/1, below) onto its device:
                        they are held until the next prepare
    run                 call the rung once on the held tensors and keep what it returned
                        (checked against the contract's names, dims and dtypes)
    time                the same, timed: the answer is "ok SECONDS", the rung's call alone
                        (cpu: the steady clock around it; cuda: CUDA events around it on
                        the current stream, then a synchronisation)
    fetch               write every output and inout from the last run to its file (a
                        temporary file, then a rename)

An answer is "ok" (or "ok SECONDS"), "failed: why" (the rung raised or returned what the
contract does not hold: wb records the configuration as incorrect), "bad: why" (a bad
request) or "bug: why" (a bug in this tool, the traceback on stderr). It ends at the end
of stdin, with exit 0.

CALL.json:
    {"schema": "wb.torch_call/1", "rung": "/abs/variants/<op>/torch.py",
     "kind": "eager" | "compile", "device": "cpu" | "cuda", "threads": 2,
     "shape": {"B": 2, ...}, "scalars": {"lr": 0.001, ...},
     "tensors": [{"name": "out", "role": "output", "dtype": "f32", "dims": [2, 8, 64],
                  "file": "/tmp/.../out.bin"} | {..., "null": true}, ...]}
A tensor file holds the tensor's elements, little-endian, nothing else (bf16: the upper
16 bits of the float32). On cpu "threads" is the rung's thread count (torch.set_num_threads).
"""
import importlib.util
import json
import os
import sys
import tempfile
import time
import traceback

SCHEMA = "wb.torch_call/1"
ROLES = ("input", "output", "inout")


class BadRequest(Exception):
    pass


class RungFailed(Exception):
    pass


def load_rung(path):
    """The rung() of a torch.py file."""
    spec = importlib.util.spec_from_file_location("wb_torch_rung_" + str(abs(hash(path))), path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as e:
        raise RungFailed(f"{path} does not import: {type(e).__name__}: {e}")
    fn = getattr(module, "rung", None)
    if not callable(fn):
        raise RungFailed(f"{path} defines no function rung(t, s, k)")
    return fn


class Server:
    def __init__(self, torch):
        self.torch = torch
        self.loaded = {}    # path -> (mtime, size, rung, compiled or None)
        self.call = None    # the prepared call: its request, tensors and function
        self.results = None

    def function(self, path, kind, threads):
        st = os.stat(path)
        cached = self.loaded.get(path)
        if cached is None or cached[:2] != (st.st_mtime_ns, st.st_size):
            cached = [st.st_mtime_ns, st.st_size, load_rung(path), {}]
            self.loaded[path] = cached
        if kind == "eager":
            return cached[2]
        # Inductor writes the thread count into the C++ it generates for the CPU
        # ("#pragma omp parallel num_threads(2)") and does not recompile when
        # torch.set_num_threads changes: one compiled function per thread count, each
        # told its count (cpp.threads), so that a threads=1 record runs one thread.
        if threads not in cached[3]:
            options = {"cpp.threads": threads} if threads else None
            cached[3][threads] = self.torch.compile(cached[2], options=options)
        return cached[3][threads]

    def dtype(self, name):
        torch = self.torch
        types = {"f32": torch.float32, "bf16": torch.bfloat16, "i32": torch.int32}
        if name not in types:
            raise BadRequest(f"unknown dtype '{name}' (f32, bf16, i32)")
        return types[name]

    def prepare(self, path):
        torch = self.torch
        try:
            with open(path) as f:
                req = json.load(f)
        except (OSError, ValueError) as e:
            raise BadRequest(f"{path}: {e}")
        if req.get("schema") != SCHEMA:
            raise BadRequest(f"{path}: schema is not {SCHEMA}")
        for key in ("rung", "kind", "device", "shape", "scalars", "tensors"):
            if key not in req:
                raise BadRequest(f"{path}: no '{key}'")
        if req["kind"] not in ("eager", "compile"):
            raise BadRequest(f"{path}: kind '{req['kind']}' (eager or compile)")
        device = req["device"]
        if device not in ("cpu", "cuda"):
            raise BadRequest(f"{path}: device '{device}' (cpu or cuda)")
        if device == "cuda" and not torch.cuda.is_available():
            raise BadRequest("torch sees no CUDA device here")
        threads = int(req.get("threads") or 0) if device == "cpu" else 0
        if threads:
            torch.set_num_threads(threads)
        tensors = {}
        for t in req["tensors"]:
            if t.get("role") not in ROLES:
                raise BadRequest(f"{path}: tensor {t.get('name')}: role {t.get('role')}")
            dtype = self.dtype(t["dtype"])
            if t.get("null"):
                tensors[t["name"]] = None
                continue
            count = 1
            for d in t["dims"]:
                count *= d
            raw = torch.from_file(t["file"], shared=False, size=count, dtype=dtype) if count else \
                torch.empty(0, dtype=dtype)
            tensors[t["name"]] = raw.view(t["dims"]).to(device)
        self.call = {"req": req, "tensors": tensors, "fn": self.function(req["rung"], req["kind"], threads)}
        self.results = None

    def run(self, timed):
        if self.call is None:
            raise BadRequest("run before prepare")
        torch = self.torch
        req, tensors, fn = self.call["req"], self.call["tensors"], self.call["fn"]
        shape = dict(req["shape"])
        scalars = dict(req["scalars"])
        cuda = req["device"] == "cuda"
        seconds = None
        try:
            if timed and cuda:
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                out = fn(tensors, shape, scalars)
                end.record()
                end.synchronize()
                seconds = start.elapsed_time(end) / 1e3
            elif timed:
                begin = time.perf_counter_ns()
                out = fn(tensors, shape, scalars)
                seconds = (time.perf_counter_ns() - begin) / 1e9
            else:
                out = fn(tensors, shape, scalars)
                if cuda:
                    torch.cuda.synchronize()
        except Exception as e:
            # The rung's own failure (eager or compiled): its message, its last frame.
            traceback.print_exc()
            raise RungFailed(f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}")
        if not timed:
            self.results = self.checked(req, out)
        return seconds

    def checked(self, req, out):
        """What the rung returned, held to the contract: every output and inout, each in
        its dims and storage dtype."""
        torch = self.torch
        if not isinstance(out, dict):
            raise RungFailed(f"rung() returned {type(out).__name__}, not a dict of its outputs")
        results = {}
        for t in req["tensors"]:
            if t["role"] == "input" or t.get("null"):
                continue
            name = t["name"]
            if name not in out:
                raise RungFailed(f"rung() returned no '{name}' ({t['role']})")
            value = out[name]
            if not isinstance(value, torch.Tensor):
                raise RungFailed(f"rung() returned '{name}' as {type(value).__name__}, not a tensor")
            if list(value.shape) != list(t["dims"]):
                raise RungFailed(f"rung() returned '{name}' of shape {list(value.shape)}, the contract's is {t['dims']}")
            if value.dtype != self.dtype(t["dtype"]):
                raise RungFailed(f"rung() returned '{name}' as {value.dtype}, the contract stores {t['dtype']}")
            results[name] = (value, t["file"])
        extra = sorted(set(out) - {t["name"] for t in req["tensors"] if t["role"] != "input"})
        if extra:
            raise RungFailed(f"rung() returned {', '.join(extra)}, which the contract does not write")
        return results

    def fetch(self):
        if self.results is None:
            raise BadRequest("fetch before a run")
        for name, (value, path) in self.results.items():
            host = value.detach().to("cpu").contiguous()
            # bf16 and the rest alike: the tensor's bytes as they lie in memory.
            data = host.view(self.torch.int16 if host.dtype == self.torch.bfloat16 else self.torch.int32).numpy()
            fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix="." + os.path.basename(path))
            with os.fdopen(fd, "wb") as f:
                f.write(data.tobytes())
            os.replace(tmp, path)


def serve(stdin, stdout):
    # Only the answers go to stdout: whatever a rung or a library prints goes to stderr.
    sys.stdout = sys.stderr
    try:
        import numpy  # noqa: F401
        import torch
    except ImportError as e:
        stdout.write(f"unavailable: {type(e).__name__}: {e}\n")
        stdout.flush()
        return 0
    stdout.write(f"ready torch {torch.__version__} threads {torch.get_num_threads()}\n")
    stdout.flush()
    server = Server(torch)
    for line in stdin:
        line = line.rstrip("\n")
        if not line:
            continue
        verb, _, arg = line.partition(" ")
        try:
            if verb == "prepare":
                server.prepare(arg)
                answer = "ok"
            elif verb == "run":
                server.run(False)
                answer = "ok"
            elif verb == "time":
                answer = f"ok {server.run(True):.9e}"
            elif verb == "fetch":
                server.fetch()
                answer = "ok"
            else:
                answer = f"bad: unknown request '{verb}' (prepare, run, time, fetch)"
        except RungFailed as e:
            answer = f"failed: {e}"
        except BadRequest as e:
            answer = f"bad: {e}"
        except Exception as e:
            traceback.print_exc()
            answer = f"bug: serve.py: {type(e).__name__}: {e}"
        stdout.write(answer.replace("\n", " ") + "\n")
        stdout.flush()
    return 0


def main(argv):
    if argv != ["--serve"]:
        sys.stderr.write("usage: serve.py --serve (docs/torch.md)\n")
        return 2
    return serve(sys.stdin, sys.stdout)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
