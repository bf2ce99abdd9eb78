#!/usr/bin/env python3
"""Compiles a Triton rung ahead of time, without a GPU: cubins, a C launcher, a manifest.

    bash tools/python/python.sh tools/triton/aot.py RUNG.py --arch 80,90 --out DIR

For every architecture, every legal combination of the rung's launch parameters, every
kernel it launches and each specialisation (the general one, and the one that assumes
the rung's "divisible" arguments divisible by 16), Triton's compiler makes a cubin for
an explicit target (GPUTarget("cuda", arch, 32): its own ptxas, no driver). DIR then holds

    manifest.json        what was compiled (docs/triton.md, "The manifest")
    cubins/*.cubin       one per (arch, parameters, kernel, specialisation)
    <op>_<id>.h / .c     the launcher: CUresult wb_triton_<op>_<id>_launch(stream, cc,
                         params, <the op's fields>), on the driver API, the cubins
                         embedded, the grid computed from the rung's expressions and the
                         specialisation chosen at run time from the actual arguments.

DIR is built beside itself and renamed into place, so that it is either the old output
or the whole new one. Exit 0 done, 2 bad input (a usage error, a rung that is not one or
does not compile, named), 4 a bug in this tool.
"""
import argparse
import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rung as rungs  # noqa: E402

SCHEMA = "wb.triton_manifest/1"
# The most shared memory a block may opt into, by compute capability (CUDA's programming
# guide, table of technical specifications): a combination over it cannot launch.
MAX_SHARED = {80: 166912, 86: 101376, 89: 101376, 90: 232448}
SPECIALISATIONS = ("d16", "any")


def parse_archs(text):
    archs = []
    for part in text.split(","):
        part = part.strip().removeprefix("sm_")
        if not part.isdigit() or int(part) not in MAX_SHARED:
            raise rungs.RungError(f"--arch: '{part}' is not an architecture this tool knows "
                                  f"({', '.join(str(a) for a in MAX_SHARED)}, e.g. --arch 80,90)")
        archs.append(int(part))
    if len(set(archs)) != len(archs):
        raise rungs.RungError("--arch names an architecture twice")
    return sorted(archs)


def ptx_target(ptx):
    m = re.search(r"^\s*\.target\s+(sm_[0-9]+a?)", ptx, re.M)
    return m.group(1) if m else None


def compile_one(triton, GPUTarget, make_backend, rung, launch, arch, params, spec):
    """One cubin: (compiled kernel, None) or (None, why it cannot run)."""
    signature = launch.signature()
    constexprs = {c: params[p] for c, p in launch.constexprs.items()}
    attrs = {}
    if spec == "d16":
        index = {n: i for i, n in enumerate(launch.arg_names())}
        attrs = {(index[n],): [["tt.divisibility", 16]] for n in launch.divisible}
    src = triton.compiler.ASTSource(fn=launch.kernel, signature=signature, constexprs=constexprs, attrs=attrs)
    target = GPUTarget("cuda", arch, 32)
    backend = make_backend(target)
    # An fp32-class rung's tl.dot is IEEE fp32 unless it says otherwise, so that the
    # interpreter (numpy, fp32) and the GPU compute the same thing; tf32 is its own class.
    dot = {"fp32": "ieee", "tf32": "tf32", "bf16": "ieee"}[rung.numeric]
    options = backend.parse_options({"num_warps": params["num_warps"], "num_stages": params["num_stages"],
                                     "default_dot_input_precision": dot})
    kernel = triton.compile(src, target=target, options=options.__dict__)
    md = kernel.metadata
    if md.global_scratch_size or md.profile_scratch_size:
        raise rungs.RungError(rung.where(f"{launch.name} needs global or profile scratch memory, which the "
                                         f"generated launcher does not provide"))
    if md.num_ctas != 1 or md.launch_cooperative_grid or md.launch_pdl:
        raise rungs.RungError(rung.where(f"{launch.name} asks for clusters, a cooperative grid or programmatic "
                                         f"dependent launch, which the generated launcher does not do"))
    if md.shared > MAX_SHARED[arch]:
        return None, f"needs {md.shared} bytes of shared memory, sm_{arch} gives a block at most {MAX_SHARED[arch]}"
    return kernel, None


def build(rung, archs, out_dir):
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import make_backend

    cubin_dir = os.path.join(out_dir, "cubins")
    os.makedirs(cubin_dir)
    entries, skipped = [], []
    for arch in archs:
        for params in rung.all_params():
            for launch in rung.launches:
                for spec in SPECIALISATIONS:
                    if spec == "d16" and not launch.divisible:
                        continue
                    what = f"sm_{arch} {launch.name} {rungs.Rung.params_text(params)} {spec}"
                    try:
                        kernel, why = compile_one(triton, GPUTarget, make_backend, rung, launch, arch, params, spec)
                    except rungs.RungError:
                        raise
                    except Exception as e:  # Triton's compile errors: the rung is bad input
                        raise rungs.RungError(rung.where(f"{what} does not compile: {type(e).__name__}: {e}"))
                    if kernel is None:
                        skipped.append({"arch": arch, "params": params, "launch": launch.index,
                                        "kernel": launch.name, "specialisation": spec, "why": why})
                        continue
                    cubin = kernel.asm["cubin"]
                    if not cubin.startswith(b"\x7fELF") or kernel.metadata.name.encode() not in cubin:
                        raise RuntimeError(f"{what}: triton.compile gave no cubin holding {kernel.metadata.name}")
                    file = "cubins/{}_sm{}_{}_{}.cubin".format(
                        launch.name, arch, "_".join(str(v) for v in params.values()), spec)
                    rungs.write_file(os.path.join(out_dir, file), cubin)
                    target = ptx_target(kernel.asm.get("ptx", ""))
                    entries.append({
                        "arch": arch,
                        "ptx_target": target,
                        # An sm_90a cubin (Triton's choice for 90) runs on exactly that
                        # capability; a plain one on any later minor of the same major.
                        "exact_arch": bool(target and target.endswith("a")),
                        "params": params,
                        "launch": launch.index,
                        "kernel": launch.name,
                        "function": kernel.metadata.name,
                        "specialisation": spec,
                        "divisible": launch.divisible if spec == "d16" else [],
                        "signature": launch.signature(),
                        "constexprs": {c: params[p] for c, p in launch.constexprs.items()},
                        "num_warps": kernel.metadata.num_warps,
                        "num_stages": kernel.metadata.num_stages,
                        "shared": kernel.metadata.shared,
                        "cubin": file,
                        "cubin_bytes": len(cubin),
                        "cubin_sha256": hashlib.sha256(cubin).hexdigest(),
                        "_bytes": cubin,
                    })
    return entries, skipped


def manifest_of(rung, archs, entries, skipped, seconds):
    import triton
    return {
        "schema": SCHEMA,
        "rung": os.path.relpath(rung.path, repo_root()) if rung.path.startswith(repo_root()) else rung.path,
        "op": rung.op,
        "id": rung.id,
        "name": rung.name,
        "summary": rung.summary,
        "numeric": rung.numeric,
        "rung_sha256": rung.sha256,
        "triton_version": triton.__version__,
        "archs": archs,
        "fields": rung.fields,
        "params": rung.params,
        "launches": [{"kernel": l.name, "grid": [g.text for g in l.grid],
                      "args": {n: e.text for n, e, _ in l.args}, "divisible": l.divisible} for l in rung.launches],
        "launcher": {"header": f"{rung.op}_{rung.id}.h", "source": f"{rung.op}_{rung.id}.c",
                     "function": f"{rung.symbol}_launch"},
        "compile_seconds": round(seconds, 2),
        "cubins": [{k: v for k, v in e.items() if not k.startswith("_")} for e in entries],
        "skipped": skipped,
    }


def repo_root():
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


# --- the C launcher ----------------------------------------------------------------

C_TYPES = {"i32": "int32_t", "i64": "int64_t", "fp32": "float"}


def c_param_type(ty):
    return "CUdeviceptr" if ty.startswith("*") else C_TYPES[ty]


def launcher(rung, entries, manifest):
    sym = rung.symbol
    guard = sym.upper() + "_H"
    param_names = list(rung.params)
    fields = ", ".join(f"{c_param_type(t)} {n}" for n, t in rung.fields.items())
    prototype = f"CUresult {sym}_launch(CUstream stream, int cc, const int* params, {fields})"
    note = (f"Generated by tools/triton/aot.py from {manifest['rung']} (sha256 {rung.sha256[:16]}), "
            f"triton {manifest['triton_version']}. Do not edit: change the rung and rebuild.")

    h = f"""/* {note} */
/* {rung.op}, Triton rung {rung.id} ({rung.name}): {rung.summary} */
#ifndef {guard}
#define {guard}
#include <cuda.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {{
#endif

#ifndef WB_TRITON_CUBIN_INFO
#define WB_TRITON_CUBIN_INFO
/* One compiled kernel, for `wb list`. */
typedef struct wb_triton_cubin_info {{
  int arch;                   /* 80: sm_80 */
  const char* kernel;         /* the entry function's name in the cubin */
  const char* specialisation; /* "d16" or "any" */
  const int* params;          /* the launch parameters' values, in the rung's order */
  size_t bytes;               /* the cubin's size */
  unsigned shared;            /* dynamic shared memory per block, bytes */
  int num_warps;
}} wb_triton_cubin_info;
#endif

/* The launch parameters, in the order `params` gives their values: {", ".join(param_names)}. */
#define {sym.upper()}_PARAM_COUNT {len(param_names)}
extern const char* const {sym}_param_names[{len(param_names)}];
extern const wb_triton_cubin_info {sym}_cubins[];
extern const int {sym}_cubin_count;

/* Runs the rung on `stream`, in the current context, for a device of compute capability
   `cc` (86: sm_86) with the launch parameters `params`. Returns CUDA_SUCCESS, the driver's
   error, CUDA_ERROR_NOT_FOUND when no cubin fits cc and params (an illegal combination,
   one over the device's shared memory, an architecture not compiled), or
   CUDA_ERROR_INVALID_VALUE when a grid or an argument does not fit its type. Modules are
   loaded on first use and kept: not thread-safe, one context per process. */
{prototype};

/* Unloads every module loaded so far (before the context goes). */
void {sym}_unload(void);

#ifdef __cplusplus
}}
#endif
#endif
"""

    c = [f"/* {note} */",
         f'#include "{rung.op}_{rung.id}.h"',
         "",
         "#if defined(__cplusplus)",
         "#define WB_TRITON_ALIGN alignas(16)",
         "#else",
         "#define WB_TRITON_ALIGN _Alignas(16)",
         "#endif",
         "",
         "/* cuModuleLoadData reads an ELF image: keep it aligned as a file's would be. */"]
    # Combinations that compile to the same bytes (a parameter the kernel ignores on one
    # architecture) share one array.
    first = {}
    for i, e in enumerate(entries):
        data = e["_bytes"]
        if data in first:
            e["_array"] = first[data]
            continue
        first[data] = e["_array"] = i
        c.append(f"/* {e['cubin']} */")
        c.append(f"WB_TRITON_ALIGN static const unsigned char cubin_{i}[{len(data)}] = {{")
        for at in range(0, len(data), 24):
            c.append("  " + ",".join(str(b) for b in data[at:at + 24]) + ",")
        c.append("};")
    c.append("")
    for i, e in enumerate(entries):
        c.append(f"static const int params_{i}[{len(param_names)}] = {{{', '.join(str(v) for v in e['params'].values())}}};")
    c += ["",
          "typedef struct {",
          "  int arch, exact_arch, launch, d16, num_warps;",
          "  unsigned shared;",
          "  const unsigned char* cubin;",
          "  const char* function;",
          "} entry;",
          "",
          f"static const entry entries[{len(entries)}] = {{"]
    for i, e in enumerate(entries):
        c.append(f"  {{{e['arch']}, {int(e['exact_arch'])}, {e['launch']}, {int(e['specialisation'] == 'd16')}, "
                 f"{e['num_warps']}, {e['shared']}u, cubin_{e['_array']}, \"{e['function']}\"}},")
    c.append("};")
    c.append("")
    c.append(f"const char* const {sym}_param_names[{len(param_names)}] = "
             f"{{{', '.join(json.dumps(n) for n in param_names)}}};")
    c.append(f"const wb_triton_cubin_info {sym}_cubins[] = {{")
    for i, e in enumerate(entries):
        c.append(f"  {{{e['arch']}, \"{e['function']}\", \"{e['specialisation']}\", params_{i}, "
                 f"{e['cubin_bytes']}, {e['shared']}u, {e['num_warps']}}},")
    c.append("};")
    c.append(f"const int {sym}_cubin_count = {len(entries)};")
    c.append(f"""
static CUmodule modules[{len(entries)}];
static CUfunction functions[{len(entries)}];

static inline int64_t wb_triton_cdiv(int64_t a, int64_t b) {{ return (a + b - 1) / b; }}

/* The entry for (cc, params, launch): the 16-divisible specialisation when d16 holds and
   it exists, else the general one; among architectures, the newest the device runs. */
static int find_entry(int cc, const int* params, int launch, int d16) {{
  int best = -1, i, k;
  for (i = 0; i < {len(entries)}; ++i) {{
    const entry* e = &entries[i];
    int same = 1;
    if (e->launch != launch || e->arch / 10 != cc / 10) continue;
    if (e->exact_arch ? e->arch != cc : e->arch > cc) continue;
    if (e->d16 && !d16) continue;
    for (k = 0; k < {len(param_names)}; ++k) same = same && {sym}_cubins[i].params[k] == params[k];
    if (!same) continue;
    if (best < 0 || e->arch > entries[best].arch || (e->arch == entries[best].arch && e->d16 > entries[best].d16))
      best = i;
  }}
  return best;
}}

static CUresult load_entry(int i) {{
  CUresult r;
  if (functions[i]) return CUDA_SUCCESS;
  r = cuModuleLoadData(&modules[i], entries[i].cubin);
  if (r != CUDA_SUCCESS) return r;
  r = cuModuleGetFunction(&functions[i], modules[i], entries[i].function);
  /* Triton's shared memory is dynamic: over 48 KiB a block must opt in. */
  if (r == CUDA_SUCCESS && entries[i].shared > 49152)
    r = cuFuncSetAttribute(functions[i], CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)entries[i].shared);
  if (r != CUDA_SUCCESS) {{
    cuModuleUnload(modules[i]);
    modules[i] = NULL;
    functions[i] = NULL;
  }}
  return r;
}}

void {sym}_unload(void) {{
  int i;
  for (i = 0; i < {len(entries)}; ++i) {{
    if (modules[i]) cuModuleUnload(modules[i]);
    modules[i] = NULL;
    functions[i] = NULL;
  }}
}}
""")

    def spell(name):
        return f"params[{param_names.index(name)}]" if name in rung.params else name

    body = [f"{prototype} {{"]
    body.append("  CUresult r;")
    body.append("  int e;")
    for l in rung.launches:
        body.append(f"  {{ /* launch {l.index}: {l.name} */")
        grid = [g.c(spell) for g in l.grid] + ["INT64_C(1)"] * (3 - len(l.grid))
        body.append(f"    const int64_t gx = {grid[0]}, gy = {grid[1]}, gz = {grid[2]};")
        body.append("    if (gx < 0 || gx > INT64_C(2147483647) || gy < 0 || gy > 65535 || gz < 0 || gz > 65535)")
        body.append("      return CUDA_ERROR_INVALID_VALUE;")
        ptrs = []
        for name, expr, ty in l.args:
            if ty.startswith("*"):
                body.append(f"    CUdeviceptr a_{name} = {expr.text};")
            elif ty == "fp32":
                body.append(f"    float a_{name} = {expr.text};")
            else:
                body.append(f"    const int64_t v_{name} = {expr.c(spell)};")
                if ty == "i32":
                    body.append(f"    int32_t a_{name};")
                    body.append(f"    if (v_{name} < INT32_MIN || v_{name} > INT32_MAX) return CUDA_ERROR_INVALID_VALUE;")
                    body.append(f"    a_{name} = (int32_t)v_{name};")
                else:
                    body.append(f"    int64_t a_{name} = v_{name};")
            ptrs.append(f"&a_{name}")
        cond = " && ".join(f"a_{n} % 16 == 0" for n in l.divisible) or "0"
        body.append(f"    /* Triton's 16-divisible specialisation holds only for these values. */")
        body.append(f"    const int d16 = {cond};")
        body.append("    CUdeviceptr scratch_global = 0, scratch_profile = 0;")
        ptrs += ["&scratch_global", "&scratch_profile"]
        body.append(f"    void* args[{len(ptrs)}] = {{{', '.join(ptrs)}}};")
        body.append(f"    e = find_entry(cc, params, {l.index}, d16);")
        body.append("    if (e < 0) return CUDA_ERROR_NOT_FOUND;")
        body.append("    if (gx > 0 && gy > 0 && gz > 0) {")
        body.append("      r = load_entry(e);")
        body.append("      if (r != CUDA_SUCCESS) return r;")
        body.append("      r = cuLaunchKernel(functions[e], (unsigned)gx, (unsigned)gy, (unsigned)gz,")
        body.append("                         32u * (unsigned)entries[e].num_warps, 1, 1, entries[e].shared, stream, args, NULL);")
        body.append("      if (r != CUDA_SUCCESS) return r;")
        body.append("    }")
        body.append("  }")
    body.append("  return CUDA_SUCCESS;")
    body.append("}")
    return h, "\n".join(c + body) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("rung", help="the rung file, variants/<op>/NN_triton_<name>.py")
    ap.add_argument("--arch", default="80,90", help="compute capabilities, comma-separated (default 80,90)")
    ap.add_argument("--out", required=True, help="the output folder (replaced as a whole)")
    args = ap.parse_args(argv)
    try:
        archs = parse_archs(args.arch)
        rung = rungs.load(args.rung)
    except rungs.RungError as e:
        rungs.fail(f"aot.py: {e}")

    out = os.path.abspath(args.out)
    parent = os.path.dirname(out)
    os.makedirs(parent, exist_ok=True)
    work = tempfile.mkdtemp(dir=parent, prefix="." + os.path.basename(out) + ".")
    try:
        start = time.monotonic()
        entries, skipped = build(rung, archs, work)
        seconds = time.monotonic() - start
        manifest = manifest_of(rung, archs, entries, skipped, seconds)
        h, c = launcher(rung, entries, manifest)
        rungs.write_file(os.path.join(work, f"{rung.op}_{rung.id}.h"), h)
        rungs.write_file(os.path.join(work, f"{rung.op}_{rung.id}.c"), c)
        rungs.write_file(os.path.join(work, "manifest.json"), json.dumps(manifest, indent=1) + "\n")
        # Swap the whole folder: a reader sees the old output or the new one, never a mix.
        old = None
        if os.path.exists(out):
            old = tempfile.mkdtemp(dir=parent, prefix="." + os.path.basename(out) + ".old.")
            os.rmdir(old)
            os.rename(out, old)
        os.rename(work, out)
        work = None
        if old:
            shutil.rmtree(old)
    except rungs.RungError as e:
        rungs.fail(f"aot.py: {e}")
    except OSError as e:
        rungs.fail(f"aot.py: cannot write {out}: {e}")
    except Exception:
        traceback.print_exc()
        rungs.fail("aot.py: a bug in this tool (the traceback above)", 4)
    finally:
        if work and os.path.exists(work):
            shutil.rmtree(work)
    print(f"aot.py: {rung.op} {rung.name}: {len(entries)} cubins for sm_{', sm_'.join(map(str, archs))}"
          f"{f' ({len(skipped)} combinations over shared memory, skipped)' if skipped else ''} in {seconds:.1f} s -> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
