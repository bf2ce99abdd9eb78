#!/usr/bin/env python3
"""tools/triton/aot.py compiles the Triton rungs for sm_80 and sm_90 without a GPU, and
its launcher picks the cubin, the specialisation and the grid that the arguments call for.

- gelu_forward's and softmax_forward's rungs compile for --arch 80,90: the manifest
  lists one cubin per (arch, legal parameters, kernel, specialisation), each an ELF file
  (its sha256 and size as listed) holding its kernel's name, with the rung's hash and
  the Triton version; the generated launcher compiles as C and as C++.
- The launcher, linked against a stand-in for the CUDA driver (cuModuleLoadData,
  cuModuleGetFunction, cuLaunchKernel... that record what they are given) and run here:
  the 16-divisible cubin for aligned pointers and divisible sizes, the general one for
  ragged sizes (gelu N=2053, softmax Vp=104) and misaligned pointers, sm_80's cubin on
  cc 8.6 and 8.9, sm_90's on 9.0 only, CUDA_ERROR_NOT_FOUND for cc 7.5, 10.0 and an
  illegal parameter, no launch for an empty grid, the grid the rung's expressions give,
  32 num_warps threads, and the kernel arguments in order with the two scratch pointers.
  (Skipped, with the reason, where no C compiler or cuda.h is found.)
- At the default parameters the 16-divisible cubins load and store 128 bits at a time
  and the general ones do not (the SASS, through the cuobjdump Triton carries).
- Bad input exits 2 with a message: a rung misnamed, one without WB_TRITON, an unknown
  architecture.

Skipped (77) without the project's venv. Exit 0 when every case holds, 1 otherwise.
"""
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python"))
import needs  # noqa: E402

needs.modules("torch", "triton")
import triton  # noqa: E402

ROOT = needs.ROOT
AOT = os.path.join(ROOT, "tools", "triton", "aot.py")
RUNGS = {"gelu_forward": os.path.join(ROOT, "variants", "gelu_forward", "03_triton_sigmoid.py"),
         "softmax_forward": os.path.join(ROOT, "variants", "softmax_forward", "06_triton_online.py")}
CUDA_NOT_FOUND, CUDA_INVALID_VALUE = 500, 1

# The stand-in for libcuda: it records each call on stdout. A module is the image's
# address; the launch names the image by a hash of its bytes (its ELF size read from the
# header), which the test matches with the manifest's cubins.
FAKE_DRIVER = r"""
#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

void print_args(void** args);

static uint64_t elf_size(const unsigned char* p) {
  uint64_t shoff, phoff; uint16_t shentsize, shnum, phentsize, phnum; uint64_t a, b;
  memcpy(&phoff, p + 0x20, 8); memcpy(&shoff, p + 0x28, 8);
  memcpy(&phentsize, p + 0x36, 2); memcpy(&phnum, p + 0x38, 2);
  memcpy(&shentsize, p + 0x3A, 2); memcpy(&shnum, p + 0x3C, 2);
  a = shoff + (uint64_t)shentsize * shnum; b = phoff + (uint64_t)phentsize * phnum;
  return a > b ? a : b;
}

static uint64_t fnv(const unsigned char* p, uint64_t n) {
  uint64_t h = 1469598103934665603ull, i;
  for (i = 0; i < n; ++i) { h ^= p[i]; h *= 1099511628211ull; }
  return h;
}

typedef struct { const unsigned char* image; char name[128]; } fake_function;
static fake_function functions[64];
static int nfunctions;

CUresult CUDAAPI cuModuleLoadData(CUmodule* module, const void* image) {
  if (memcmp(image, "\x7f" "ELF", 4) != 0) return CUDA_ERROR_INVALID_IMAGE;
  *module = (CUmodule)image;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuModuleGetFunction(CUfunction* f, CUmodule m, const char* name) {
  fake_function* ff = &functions[nfunctions++ % 64];
  ff->image = (const unsigned char*)m;
  strncpy(ff->name, name, sizeof ff->name - 1);
  *f = (CUfunction)ff;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI cuFuncSetAttribute(CUfunction f, CUfunction_attribute a, int v) { (void)f; (void)a; (void)v; return CUDA_SUCCESS; }
CUresult CUDAAPI cuModuleUnload(CUmodule m) { (void)m; return CUDA_SUCCESS; }
CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                unsigned bz, unsigned shared, CUstream s, void** args, void** extra) {
  const fake_function* ff = (const fake_function*)f;
  (void)s; (void)extra;
  printf("launch %s %016llx grid %u %u %u block %u %u %u shared %u args", ff->name,
         (unsigned long long)fnv(ff->image, elf_size(ff->image)), gx, gy, gz, bx, by, bz, shared);
  print_args(args);
  printf("\n");
  return CUDA_SUCCESS;
}
"""


def fnv(data):
    h = 1469598103934665603
    for b in data:
        h = ((h ^ b) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def run_aot(rung, out, arch="80,90"):
    return subprocess.run([sys.executable, AOT, rung, "--arch", arch, "--out", out], capture_output=True, text=True,
                          timeout=900)


def check_manifest(op, out, failures):
    with open(os.path.join(out, "manifest.json")) as f:
        m = json.load(f)
    rung = RUNGS[op]
    with open(rung, "rb") as f:
        want_hash = hashlib.sha256(f.read()).hexdigest()
    if m.get("schema") != "wb.triton_manifest/1" or m.get("op") != op:
        failures.append(f"{op}: the manifest's schema or op is wrong: {m.get('schema')}, {m.get('op')}")
    if m.get("rung_sha256") != want_hash:
        failures.append(f"{op}: the manifest's rung_sha256 is not the rung file's")
    if m.get("triton_version") != triton.__version__:
        failures.append(f"{op}: the manifest names triton {m.get('triton_version')}, not {triton.__version__}")
    combos = 1
    for p in m["params"].values():
        combos *= len(p["values"])
    specs = sum(2 if l["divisible"] else 1 for l in m["launches"])
    want = 2 * combos * specs - len(m["skipped"])
    if len(m["cubins"]) != want:
        failures.append(f"{op}: {len(m['cubins'])} cubins, want {want} (2 archs x {combos} combinations x {specs})")
    keys = set()
    for c in m["cubins"]:
        key = (c["arch"], tuple(sorted(c["params"].items())), c["launch"], c["specialisation"])
        if key in keys:
            failures.append(f"{op}: {key} is listed twice")
        keys.add(key)
        path = os.path.join(out, c["cubin"])
        data = open(path, "rb").read() if os.path.exists(path) else b""
        if not data.startswith(b"\x7fELF"):
            failures.append(f"{op}: {c['cubin']} is not an ELF file")
        elif c["function"].encode() not in data:
            failures.append(f"{op}: {c['cubin']} does not hold its kernel {c['function']}")
        elif len(data) != c["cubin_bytes"] or hashlib.sha256(data).hexdigest() != c["cubin_sha256"]:
            failures.append(f"{op}: {c['cubin']}'s size or sha256 is not the manifest's")
        if c["ptx_target"] not in (f"sm_{c['arch']}", f"sm_{c['arch']}a"):
            failures.append(f"{op}: {c['cubin']} targets {c['ptx_target']}, not sm_{c['arch']}")
        if c["num_warps"] != c["params"]["num_warps"]:
            failures.append(f"{op}: {c['cubin']} has {c['num_warps']} warps, its parameters say "
                            f"{c['params']['num_warps']}")
        if c["specialisation"] == "d16" and not c["divisible"]:
            failures.append(f"{op}: {c['cubin']} is 16-divisible but names no argument")
    archs = sorted({c["arch"] for c in m["cubins"]})
    if archs != [80, 90]:
        failures.append(f"{op}: cubins for {archs}, want [80, 90]")
    sizes = [c["cubin_bytes"] for c in m["cubins"]]
    print(f"{op}: {len(m['cubins'])} cubins for sm_80 and sm_90 in {m['compile_seconds']} s, "
          f"{min(sizes)}..{max(sizes)} bytes each, {sum(sizes)} in all; triton {m['triton_version']}")
    return m


def check_vector_accesses(op, m, out, failures):
    """The 16-divisible specialisation is what makes 128-bit accesses: at the default
    parameters its cubins load and store 128 bits at a time, the general ones never.
    (Read from the SASS by the cuobjdump Triton carries; skipped, with the reason, where
    it has none.)"""
    tool = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "cuobjdump")
    if not os.access(tool, os.X_OK):
        print(f"{op}: the SASS is not read here (skipped: no {tool})")
        return
    defaults = {n: p["default"] for n, p in m["params"].items()}
    for arch in (80, 90):
        for spec in ("d16", "any"):
            c = find_cubin(m, arch, defaults, spec)
            sass = subprocess.run([tool, "-sass", os.path.join(out, c["cubin"])], capture_output=True,
                                  text=True).stdout
            wide = [op_ for op_ in ("LDG", "STG") if re.search(op_ + r"\.E[.A-Z]*\.128", sass)]
            want = ["LDG", "STG"] if spec == "d16" else []
            print(f"{'ok' if wide == want else 'WRONG'}: {c['cubin']}: 128-bit {' and '.join(wide) or 'none'}")
            if wide != want:
                failures.append(f"{op}: {c['cubin']} has 128-bit accesses {wide or 'none'}, want {want or 'none'}")


def find_cubin(m, arch, params, spec):
    for c in m["cubins"]:
        if c["arch"] == arch and c["params"] == params and c["specialisation"] == spec:
            return c
    return None


def launcher_cases(op, m):
    """(label, C call arguments after stream, want: None for no launch, an int for an error, or
    (arch, specialisation, grid, the printed kernel arguments))."""
    d = {n: p["default"] for n, p in m["params"].items()}
    sym = f"wb_triton_{op}_{m['id']}_launch"
    def call(cc, params, *fields):
        return f"{sym}(0, {cc}, (const int[]){{{', '.join(str(v) for v in params.values())}}}, " \
               f"{', '.join(str(f) for f in fields)})"
    if op == "gelu_forward":
        b = d["block"]
        other = dict(d, block=4096, num_warps=8)
        return [
            ("aligned, N % 16 == 0, sm_90", call(90, d, "0x10000", "0x20000", 4096),
             (90, "d16", (4096 // b, 1, 1), d, ["0x10000", "0x20000", "4096"])),
            ("ragged N=2053, sm_90", call(90, d, "0x10000", "0x20000", 2053),
             (90, "any", (-(-2053 // b), 1, 1), d, ["0x10000", "0x20000", "2053"])),
            ("misaligned out, sm_80 on 8.6", call(86, d, "0x10004", "0x20000", 4096),
             (80, "any", (4096 // b, 1, 1), d, ["0x10004", "0x20000", "4096"])),
            ("aligned, sm_80 on 8.9, block 4096, 8 warps", call(89, other, "0x10000", "0x20000", 1 << 20),
             (80, "d16", ((1 << 20) // 4096, 1, 1), other, ["0x10000", "0x20000", str(1 << 20)])),
            ("N = 2^31 + 16 (64-bit)", call(80, d, "0x10000", "0x20000", (1 << 31) + 16),
             (80, "d16", (-(-((1 << 31) + 16) // b), 1, 1), d, ["0x10000", "0x20000", str((1 << 31) + 16)])),
            ("cc 7.5: no cubin", call(75, d, "0x10000", "0x20000", 4096), CUDA_NOT_FOUND),
            ("cc 10.0: no cubin", call(100, d, "0x10000", "0x20000", 4096), CUDA_NOT_FOUND),
            ("an illegal block", call(90, dict(d, block=333), "0x10000", "0x20000", 4096), CUDA_NOT_FOUND),
            ("N = 0: nothing to launch", call(90, d, "0x10000", "0x20000", 0), None),
        ]
    return [
        ("aligned, Vp % 16 == 0, sm_90", call(90, d, "0x10000", "0x80000", 3, 37, 101, 128),
         (90, "d16", (111, 1, 1), d, ["0x10000", "0x80000", "101", "128"])),
        ("ragged Vp=104, sm_90", call(90, d, "0x10000", "0x80000", 3, 43, 101, 104),
         (90, "any", (129, 1, 1), d, ["0x10000", "0x80000", "101", "104"])),
        ("misaligned logits, sm_80 on 8.0", call(80, d, "0x10000", "0x80008", 2, 64, 1000, 1024),
         (80, "any", (128, 1, 1), d, ["0x10000", "0x80008", "1000", "1024"])),
        ("cc 9.0a's cubin not on 10.0", call(100, d, "0x10000", "0x80000", 3, 37, 101, 128), CUDA_NOT_FOUND),
        ("B*T over a grid's x", call(90, d, "0x10000", "0x80000", 65536, 65536, 101, 128), CUDA_INVALID_VALUE),
        ("B*T = 0: nothing to launch", call(90, d, "0x10000", "0x80000", 0, 5, 101, 128), None),
    ]


def print_args_c(m):
    """print_args for the fake driver: the kernel's arguments as the manifest's signature
    types them, then the two scratch pointers."""
    c = m["cubins"][0]
    lines = ["void print_args(void** args) {"]
    i = 0
    for name, ty in c["signature"].items():
        if ty == "constexpr":
            continue
        if ty.startswith("*"):
            lines.append(f'  printf(" 0x%llx", (unsigned long long)*(CUdeviceptr*)args[{i}]);')
        elif ty == "i32":
            lines.append(f'  printf(" %d", *(int32_t*)args[{i}]);')
        elif ty == "i64":
            lines.append(f'  printf(" %lld", (long long)*(int64_t*)args[{i}]);')
        else:
            lines.append(f'  printf(" %g", *(float*)args[{i}]);')
        i += 1
    lines.append(f'  printf(" | 0x%llx 0x%llx", (unsigned long long)*(CUdeviceptr*)args[{i}], '
                 f'(unsigned long long)*(CUdeviceptr*)args[{i + 1}]);')
    lines.append("}")
    return "\n".join(lines)


def check_launcher(op, m, out, work, failures):
    cc = shutil.which("cc") or shutil.which("gcc")
    cxx = shutil.which("c++") or shutil.which("g++")
    include = next((d for d in (os.environ.get("CUDA_HOME", ""), os.environ.get("CUDA_PATH", ""), "/usr/local/cuda")
                    if d and os.path.exists(os.path.join(d, "include", "cuda.h"))), None)
    if not cc or not include:
        print(f"{op}: the launcher is not compiled here (skipped: {'no C compiler' if not cc else 'no cuda.h'})")
        return
    inc = os.path.join(include, "include")
    source = os.path.join(out, m["launcher"]["source"])
    flags = ["-O0", "-Wall", "-Wextra", "-Werror", f"-I{inc}", f"-I{out}"]
    if cxx:
        r = subprocess.run([cxx, "-std=c++17", "-x", "c++", "-c", source, "-o", os.path.join(work, op + "_cxx.o")]
                           + flags, capture_output=True, text=True)
        if r.returncode != 0:
            failures.append(f"{op}: the launcher does not compile as C++: {r.stderr[-1500:]}")
    cases = launcher_cases(op, m)
    main = [f'#include "{m["launcher"]["header"]}"', "#include <stdio.h>", FAKE_DRIVER, print_args_c(m),
            "int main(void) {"]
    for label, call, _ in cases:
        main.append(f'  printf("case %s\\n", "{label}");')
        main.append(f'  printf("rc %d\\n", (int){call});')
    main += ["  return 0;", "}"]
    test_c = os.path.join(work, op + "_launcher_test.c")
    with open(test_c, "w") as f:
        f.write("\n".join(main) + "\n")
    exe = os.path.join(work, op + "_launcher_test")
    r = subprocess.run([cc, "-std=c11", source, test_c, "-o", exe] + flags, capture_output=True, text=True)
    if r.returncode != 0:
        failures.append(f"{op}: the launcher and the fake driver do not build as C: {r.stderr[-1500:]}")
        return
    r = subprocess.run([exe], capture_output=True, text=True, timeout=60)
    blocks = r.stdout.split("case ")[1:]
    if r.returncode != 0 or len(blocks) != len(cases):
        failures.append(f"{op}: the launcher test exited {r.returncode}: {r.stdout[-1000:]} {r.stderr[-500:]}")
        return
    by_hash = {}
    for c in m["cubins"]:
        by_hash[fnv(open(os.path.join(out, c["cubin"]), "rb").read())] = c
    for (label, _, want), block in zip(cases, blocks):
        lines = block.strip().splitlines()
        launches = [l for l in lines if l.startswith("launch ")]
        rc = int(lines[-1].split()[1])
        got = f"rc {rc}, {launches}"
        if want is None:
            ok = rc == 0 and not launches
        elif isinstance(want, int):
            ok = rc == want and not launches
        else:
            arch, spec, grid, params, args = want
            expect = find_cubin(m, arch, params, spec)
            ok = rc == 0 and len(launches) == 1 and expect is not None
            if ok:
                w = launches[0].split()
                chosen = by_hash.get(w[2])
                ok = (chosen is expect and w[1] == expect["function"]
                      and tuple(int(x) for x in w[4:7]) == grid
                      and tuple(int(x) for x in w[8:11]) == (32 * params["num_warps"], 1, 1)
                      and int(w[12]) == expect["shared"]
                      and w[14:] == args + ["|", "0x0", "0x0"])
                got += f" (the cubin {chosen['cubin'] if chosen else 'none of the manifest'})"
            want = f"{expect['cubin'] if expect else '?'} grid {grid} args {args}"
        print(f"{'ok' if ok else 'WRONG'}: {op} launcher, {label}: {got}")
        if not ok:
            failures.append(f"{op} launcher, {label}: got {got}, want {want}")


def bad_input(work, failures):
    misnamed = os.path.join(work, "bad", "gelu_forward", "triton_03.py")
    os.makedirs(os.path.dirname(misnamed))
    shutil.copy(RUNGS["gelu_forward"], misnamed)
    bare = os.path.join(work, "bad", "gelu_forward", "04_triton_bare.py")
    with open(bare, "w") as f:
        f.write("# gelu_forward, Triton variant 4\n#\n# Idea: none.\n# Why: none.\n# Limits: no WB_TRITON.\nX = 1\n")
    source = open(RUNGS["gelu_forward"]).read()
    unknown_name = os.path.join(work, "bad", "gelu_forward", "05_triton_unknown_name.py")
    with open(unknown_name, "w") as f:
        f.write(source.replace('"grid": ["cdiv(N, block)"]', '"grid": ["cdiv(M, block)"]'))
    no_compile = os.path.join(work, "bad", "gelu_forward", "06_triton_no_compile.py")
    with open(no_compile, "w") as f:
        # A block of values stored through a scalar pointer: Triton's compiler refuses it.
        f.write(source.replace("tl.store(out + offsets, y,", "tl.store(out, y,"))
    cases = [("a misnamed rung", misnamed, "80", "NN_triton_<name>.py"),
             ("a grid naming no field", unknown_name, "80", "names 'M', which is neither a field nor a parameter"),
             ("a kernel that does not compile", no_compile, "80", "does not compile"),
             ("a rung without WB_TRITON", bare, "80", "no WB_TRITON"),
             ("an unknown architecture", RUNGS["gelu_forward"], "75", "not an architecture"),
             ("a rung that does not exist", os.path.join(work, "bad", "gelu_forward", "07_triton_none.py"), "80",
              "no such file")]
    for what, path, arch, message in cases:
        out = os.path.join(work, "bad-out")
        r = run_aot(path, out, arch)
        if r.returncode != 2 or message not in r.stderr or os.path.exists(out):
            failures.append(f"aot.py on {what}: exit {r.returncode} (want 2, '{message}', no output): "
                            f"{r.stderr.strip()[-400:]}")
        else:
            print(f"ok: aot.py refuses {what}: {r.stderr.strip().splitlines()[-1]}")


def main():
    failures = []
    with tempfile.TemporaryDirectory(prefix="wb-triton-aot-") as work:
        for op, rung in RUNGS.items():
            out = os.path.join(work, op)
            r = run_aot(rung, out)
            if r.returncode != 0:
                failures.append(f"{op}: aot.py exited {r.returncode}: {r.stderr.strip()[-2000:]}")
                continue
            print(r.stdout.strip())
            m = check_manifest(op, out, failures)
            check_vector_accesses(op, m, out, failures)
            check_launcher(op, m, out, work, failures)
        bad_input(work, failures)
    for f in failures:
        print(f"FAILED: {f}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
