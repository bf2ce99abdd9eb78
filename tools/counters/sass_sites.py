#!/usr/bin/env python3
"""Memory instructions per source line in nvcc's SASS, and a comparison with the
emulator's counters (wb check --backend emu --counters --json).

  sass_sites.py sites FILE [--arch 90] [--variant-source variants/op/NN_name.cu] [--kernel TEXT]
      FILE: a cubin, or an object file / fatbin holding one (its ELF for sm_ARCH is
      taken from the .nv_fatbin section). Lists per kernel and source line the
      memory instructions by kind and width: "global load 4 x13" is 13 LDG.E.

  sass_sites.py compare --report R.json [--build-dir build-lead] [--arch 90]
                        [--select OP[:N[,N...]]]... [--object OP:N=PATH]...
      For each selected (op, variant) of the report, reads the variant's object
      (BUILD/kernels/CMakeFiles/wb_kernels.dir/__/<source>.o) and prints, per kernel
      the emulator counted and per (site line, kind), the emulator's bytes per lane
      next to the widths of the SASS instructions at that line, flagged:
        agree        the emulator's bytes equal every SASS width at the line
        mixed        the emulator's bytes equal the widest SASS width, and SASS also
                     has narrower ones there (the emulator keeps the widest per line)
        EMU-WIDER    the emulator's bytes exceed every SASS width (GCC merged scalar
                     accesses into a vector one, or nvcc split a vector access)
        SASS-WIDER   SASS has a wider access than the emulator counted (nvcc/ptxas
                     vectorized, or GCC split)
        EMU-ONLY     no SASS memory instruction of that kind at the line (nvcc kept the
                     value in a register or put the access on another line: ptxas's line
                     table can name a neighbouring line or drop the inlined-at chain)
        SASS-ONLY    no emulator site (GCC kept the value in a register or hoisted it,
                     or the path did not run at the report's shape)
      SASS's generic LD/ST (address space decided at run time, e.g. wmma::load_matrix_sync
      through a generic pointer) are compared with the emulator's global or shared site
      at the same line; the status then ends in "(generic)". An EMU-ONLY row gets a hint
      naming SASS rows of the same kind and width within 2 lines of it, or SASS-ONLY rows
      of the same kernel, kind and width elsewhere: candidates for the same access.
      Without --select, every (op, variant) of the report with counters is compared.

Disassembly: nvdisasm --print-line-info-inline (per instruction: file, line and the
inlined-at chain). nvdisasm is looked for in $NVDISASM, --nvdisasm, $PATH and
/usr/local/cuda/bin. An nvdisasm older than the cubin's ELF ABI (CUDA 12.x and
earlier read only ABI version 7; CUDA 13 writes 8) is given a copy with the old
header (ABI 7, e_flags sm | virtual sm << 16 | 64-bit | unified texmode); the code
itself is not touched.

Site lines are named as the emulator names them (workbench/runtime/counters.cpp,
site_name): frames outside the source tree (CUDA's headers, as the emulator drops
emu/) are dropped; then the variant's own file, else a file under variants/, else the
innermost line outside device/cuda/device_utils.cuh, dialect.cuh and
base/bf16.h. Tensor-core instructions (LDSM, LDGSTS) are named by the line that
calls the wrapper (the emulator's __builtin_FILE/__builtin_LINE): the innermost frame
outside device/cuda/tensor_core_ptx.cuh.

Standard library only; runs c++filt (binutils) to demangle where present.
"""

import argparse
import collections
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

# The kernel names of the table of compiled kernels, reduced as the emulator reduces them.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "cmake"))
from launch_resources import short_name as reduced_kernel_name  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
SKIPPED_HELPERS = ("device/cuda/device_utils.cuh", "device/cuda/dialect.cuh", "base/bf16.h")
TENSOR_CORE_WRAPPERS = ("device/cuda/tensor_core_ptx.cuh",)

# ---------------------------------------------------------------------------------
# Getting the cubin


def elf_sections(data):
    """(name, offset, size) of each section of a 64-bit little-endian ELF."""
    if data[:4] != b"\x7fELF" or data[4] != 2:
        raise ValueError("not a 64-bit ELF file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    raw = [struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize) for i in range(shnum)]
    strtab_off = raw[shstrndx][4]
    out = []
    for name, _type, _flags, _addr, off, size in raw:
        end = data.index(b"\0", strtab_off + name)
        out.append((data[strtab_off + name:end].decode("ascii", "replace"), off, size))
    return out


def fatbin_elves(fatbin):
    """{arch: ELF bytes} of the uncompressed cubins in a fatbin blob (possibly several
    fatbins back to back)."""
    out = {}
    pos = 0
    while pos + 16 <= len(fatbin):
        magic, _version, header, size = struct.unpack_from("<IHHQ", fatbin, pos)
        if magic != 0xBA55ED50:
            break
        p = pos + header
        while p < pos + header + size:
            kind, _ever, entry_header, payload = struct.unpack_from("<HHIQ", fatbin, p)
            compressed, = struct.unpack_from("<I", fatbin, p + 0x10)
            arch, = struct.unpack_from("<I", fatbin, p + 0x1C)
            body = fatbin[p + entry_header:p + entry_header + payload]
            if kind == 2:  # ELF (1: PTX)
                if body[:4] == b"\x7fELF":
                    out.setdefault(arch, body)
                elif compressed:
                    out.setdefault(arch, None)  # compressed: not read here
            p += entry_header + payload
        pos += header + size
    return out


def cubin_of(path, arch):
    """The sm_<arch> cubin (bytes) of a cubin, fatbin or host object file."""
    data = open(path, "rb").read()
    if data[:4] == struct.pack("<I", 0xBA55ED50):
        elves = fatbin_elves(data)
    elif data[:4] == b"\x7fELF":
        machine, = struct.unpack_from("<H", data, 0x12)
        if machine == 190:  # EM_CUDA: a cubin already
            return data
        sections = dict((n, (o, s)) for n, o, s in elf_sections(data))
        if ".nv_fatbin" not in sections:
            raise ValueError(path + ": no .nv_fatbin section (not built by nvcc?)")
        off, size = sections[".nv_fatbin"]
        elves = fatbin_elves(data[off:off + size])
    else:
        raise ValueError(path + ": neither a cubin, a fatbin nor an ELF object")
    if arch not in elves:
        have = ", ".join("sm_%d" % a for a in sorted(elves)) or "none"
        raise ValueError("%s: no sm_%d cubin (has: %s)" % (path, arch, have))
    if elves[arch] is None:
        raise ValueError("%s: the sm_%d cubin is compressed; rebuild with -Xfatbin=-compress-all=false "
                         "or pass a cubin (nvcc -cubin -lineinfo -arch=sm_%d)" % (path, arch, arch))
    return elves[arch]


def old_abi_copy(cubin):
    """The cubin with an ABI-7 ELF header, for an nvdisasm of CUDA 12 or older."""
    b = bytearray(cubin)
    if b[8] >= 8:
        flags, = struct.unpack_from("<I", b, 0x30)
        sm = (flags >> 8) & 0xFF
        b[8] = 7
        struct.pack_into("<I", b, 0x30, sm | (sm << 16) | 0x400 | 0x100)
    return bytes(b)


def find_tool(name, explicit=None):
    for candidate in (explicit, os.environ.get(name.upper())):
        if candidate:
            return candidate
    found = shutil.which(name)
    if found:
        return found
    fallback = os.path.join("/usr/local/cuda/bin", name)
    return fallback if os.path.exists(fallback) else None


def disassemble(cubin, nvdisasm):
    """nvdisasm --print-line-info-inline of the cubin's code, as text."""
    if not nvdisasm:
        raise SystemExit("sass_sites.py: no nvdisasm (set NVDISASM or --nvdisasm)")
    with tempfile.TemporaryDirectory() as tmp:
        errors = []
        for attempt, body in (("as is", cubin), ("ABI-7 header", old_abi_copy(cubin))):
            path = os.path.join(tmp, "code.cubin")
            with open(path, "wb") as f:
                f.write(body)
            r = subprocess.run([nvdisasm, "--print-line-info-inline", "-c", path], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, universal_newlines=True)
            if r.returncode == 0 and r.stdout.strip():
                return r.stdout
            errors.append("%s: %s" % (attempt, r.stderr.strip()))
        raise SystemExit("sass_sites.py: nvdisasm failed: " + "; ".join(errors))


# ---------------------------------------------------------------------------------
# Reading the SASS

LINE_INFO = re.compile(r'//## File "([^"]+)", line (\d+)')
FUNCTION = re.compile(r"^\.text\.(\S+):\s*$")
INSTRUCTION = re.compile(r"^\s*/\*[0-9a-f]{4,}\*/\s+(@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_.]*)\b([^;]*);")

WIDTH_TOKENS = {"U8": 1, "S8": 1, "U16": 2, "S16": 2, "32": 4, "64": 8, "F64": 8, "128": 16}


def width_of(parts):
    width = 4
    for p in parts[1:]:
        if p in WIDTH_TOKENS:
            width = WIDTH_TOKENS[p]
    return width


def accesses_of(opcode):
    """[(kind, bytes)] of a SASS opcode ("LDG.E.128"), or [] for no memory access."""
    parts = opcode.split(".")
    op = parts[0]
    if op == "LDG":
        return [("global load", width_of(parts))]
    if op == "STG":
        return [("global store", width_of(parts))]
    if op == "LDS":
        return [("shared load", width_of(parts))]
    if op == "STS":
        return [("shared store", width_of(parts))]
    if op == "LDSM":  # ldmatrix: each lane gives one 16-byte row address
        return [("shared load", 16)]
    if op == "LDGSTS":  # cp.async
        w = width_of(parts)
        return [("global load", w), ("shared store", w)]
    if op in ("ATOMG", "RED", "ATOM"):
        return [("global store", width_of(parts))]
    if op == "ATOMS":
        return [("shared store", width_of(parts))]
    if op == "LD":  # generic address space: global or shared, decided at run time
        return [("generic load", width_of(parts))]
    if op == "ST":
        return [("generic store", width_of(parts))]
    return []


def relative(path, root):
    path = os.path.normpath(path)
    prefix = root.rstrip("/") + "/"
    return path[len(prefix):] if path.startswith(prefix) else None


def site_of(chain, opcode, variant_source):
    """The emulator's name for an instruction with inlined-at chain `chain`
    ([(file relative to the tree or None, line)], innermost first)."""
    lines = ["%s:%d" % (f, l) for f, l in chain if f is not None]
    if not lines:
        return chain[0][0] if chain else "?"
    if opcode.split(".")[0] in ("LDSM", "LDGSTS"):
        for l in lines:
            if l.rsplit(":", 1)[0] not in TENSOR_CORE_WRAPPERS:
                return l
    if variant_source:
        for l in lines:
            if l.rsplit(":", 1)[0] == variant_source:
                return l
    for l in lines:
        if l.startswith("variants/"):
            return l
    for l in lines:
        if l.rsplit(":", 1)[0] not in SKIPPED_HELPERS:
            return l
    return lines[0]


def parse_sass(text, root, variant_source=None):
    """{mangled function: Counter{(site, kind, bytes): instructions}} and
    {mangled function: Counter{opcode: n}} of the memory instructions."""
    functions = collections.OrderedDict()
    opcodes = collections.defaultdict(collections.Counter)
    function = None
    chain = []
    in_info = False
    for line in text.splitlines():
        m = FUNCTION.match(line)
        if m:
            function = m.group(1)
            functions.setdefault(function, collections.Counter())
            chain, in_info = [], False
            continue
        infos = LINE_INFO.findall(line)
        if infos:
            if not in_info:
                chain = []
                in_info = True
            f, l = infos[0]
            chain.append((relative(f, root), int(l)))  # None: outside the tree (CUDA's headers)
            continue
        in_info = False
        m = INSTRUCTION.match(line)
        if not m or function is None:
            continue
        predicate, opcode = m.group(1), m.group(2)
        if predicate and predicate.strip() == "@!PT":
            continue  # never executes (ptxas's padding)
        kinds = accesses_of(opcode)
        if not kinds:
            continue
        opcodes[function][opcode] += 1
        site = site_of(chain, opcode, variant_source)
        for kind, width in kinds:
            functions[function][(site, kind, width)] += 1
    return functions, opcodes


def demangle_all(names):
    filt = shutil.which("c++filt")
    if not filt or not names:
        return {n: n for n in names}
    r = subprocess.run([filt], input="\n".join(names) + "\n", stdout=subprocess.PIPE, universal_newlines=True)
    out = r.stdout.split("\n")
    return {n: (out[i] if i < len(out) and out[i] else n) for i, n in enumerate(names)}


def sass_sites(path, arch, nvdisasm, root, variant_source=None):
    """{reduced kernel name: Counter{(site, kind, bytes): n}}, {reduced: opcodes}."""
    text = disassemble(cubin_of(path, arch), nvdisasm)
    functions, opcodes = parse_sass(text, root, variant_source)
    names = demangle_all(list(functions))
    out, ops = {}, {}
    for mangled, sites in functions.items():
        key = reduced_kernel_name(names[mangled])
        out.setdefault(key, collections.Counter()).update(sites)
        ops.setdefault(key, collections.Counter()).update(opcodes.get(mangled, {}))
    return out, ops


def site_sort_key(site):
    f, _, l = site.rpartition(":")
    return (f, int(l) if l.isdigit() else 0)


def widths_text(counter):
    """"16x2 4x13": width x instructions, widest first."""
    return " ".join("%dx%d" % (w, n) for w, n in sorted(counter.items(), key=lambda x: -x[0])) or "-"


# ---------------------------------------------------------------------------------
# Commands


def cmd_sites(args):
    root = os.path.abspath(args.root)
    kernels, opcodes = sass_sites(args.file, args.arch, find_tool("nvdisasm", args.nvdisasm), root,
                                  args.variant_source)
    for kernel in sorted(kernels):
        if args.kernel and args.kernel not in kernel:
            continue
        print("== %s" % kernel)
        per_line = collections.defaultdict(collections.Counter)
        for (site, kind, width), n in kernels[kernel].items():
            per_line[(site, kind)][width] += n
        for (site, kind) in sorted(per_line, key=lambda k: (site_sort_key(k[0]), k[1])):
            print("  %-58s %-13s %s" % (site, kind, widths_text(per_line[(site, kind)])))
        if opcodes.get(kernel):
            print("  opcodes: " + ", ".join("%s %d" % kv for kv in sorted(opcodes[kernel].items())))


def parse_selection(items):
    sel = collections.OrderedDict()
    for item in items or []:
        op, _, variants = item.partition(":")
        sel.setdefault(op, set())
        if variants:
            sel[op].update(int(v) for v in variants.split(",") if v)
        else:
            sel[op] = None if sel[op] == set() else sel[op]
    return sel


def selected(sel, op, variant):
    if not sel:
        return True
    if op not in sel:
        return False
    return sel[op] is None or variant in sel[op]


def classify(emu_bytes, sass_widths):
    if emu_bytes is None:
        return "SASS-ONLY"
    if not sass_widths:
        return "EMU-ONLY"
    widest = max(sass_widths)
    if emu_bytes == widest:
        return "agree" if set(sass_widths) == {emu_bytes} else "mixed"
    return "EMU-WIDER" if emu_bytes > widest else "SASS-WIDER"


def cmd_compare(args):
    root = os.path.abspath(args.root)
    nvdisasm = find_tool("nvdisasm", args.nvdisasm)
    report = json.load(open(args.report))
    sel = parse_selection(args.select)
    objects = {}
    for o in args.object or []:
        key, _, path = o.partition("=")
        op, _, n = key.partition(":")
        objects[(op, int(n))] = path

    # (op, variant) -> source, {kernel: {(site, kind): bytes}}, params seen
    groups = collections.OrderedDict()
    for r in report.get("records", []):
        c = r.get("counters")
        if not c or not selected(sel, r["op"], r["variant"]):
            continue
        g = groups.setdefault((r["op"], r["variant"]), {"source": r["source"], "kernels": collections.OrderedDict(),
                                                        "records": 0})
        g["records"] += 1
        for k in c.get("kernels", []):
            if k.get("library"):
                continue
            sites = g["kernels"].setdefault(k["kernel"], {})
            for s in k.get("sites", []):
                key = (s["site"], s["kind"])
                sites[key] = max(sites.get(key, 0), int(s["bytes"]))

    totals = collections.Counter()
    pair_status = collections.OrderedDict()  # (op, variant, site, kind) -> set of statuses
    mismatches = []
    print("# sass_sites.py compare: report %s, sm_%d" % (args.report, args.arch))
    print("# columns: site  kind  emu-bytes  SASS widths (bytes x instructions)  status")
    for (op, variant), g in groups.items():
        path = objects.get((op, variant)) or os.path.join(args.build_dir, "kernels", "CMakeFiles", "wb_kernels.dir",
                                                           "__", g["source"] + ".o")
        print("\n=== %s %d  %s  (%d records)  object %s" % (op, variant, g["source"], g["records"], path))
        try:
            kernels, opcodes = sass_sites(path, args.arch, nvdisasm, root, g["source"])
        except (OSError, ValueError) as e:
            print("  cannot read SASS: %s" % e)
            totals["no SASS"] += 1
            continue
        for kernel, emu in g["kernels"].items():
            sass = kernels.get(kernel)
            how = "exact"
            if sass is None:  # the same function, other spelling of its template arguments
                base = kernel.split("<")[0]
                candidates = [k for k in kernels if k.split("<")[0] == base]
                if candidates:
                    sass = collections.Counter()
                    for k in candidates:
                        sass.update(kernels[k])
                    how = "by name without template arguments: " + "; ".join(candidates)
            print("--- kernel %s%s" % (kernel, "" if how == "exact" else "  [SASS matched %s]" % how))
            if sass is None:
                print("  no SASS function of that name (SASS has: %s)" % "; ".join(sorted(kernels)))
                totals["kernel not found"] += 1
                continue
            per_line = collections.defaultdict(collections.Counter)
            for (site, kind, width), n in sass.items():
                per_line[(site, kind)][width] += n
            # generic LD/ST: counted against the emulator's global or shared site there
            widths, generic_used = {}, set()
            for key in emu:
                site, kind = key
                w = collections.Counter(per_line.get(key, {}))
                g = (site, "generic " + kind.split()[-1])
                if g in per_line:
                    w.update(per_line[g])
                    generic_used.add(g)
                widths[key] = (w, g in per_line)
            for key in per_line:
                if key not in emu and key not in generic_used:
                    widths[key] = (per_line[key], key[1].startswith("generic"))
            rows = {}
            for key, (w, generic) in widths.items():
                status = classify(emu.get(key), w)
                rows[key] = (w, status + (" (generic)" if generic else ""))

            def hint(key):
                site, kind = key
                file, _, line = site.rpartition(":")
                e = emu[key]
                near = [s for (s, k), (w, st) in rows.items()
                        if k == kind and e in w and s.rpartition(":")[0] == file and s != site and
                        abs(int(s.rpartition(":")[2]) - int(line)) <= 2]
                far = [s for (s, k), (w, st) in rows.items()
                       if k == kind and e in w and st.startswith("SASS-ONLY") and s not in near]
                out = []
                if near:
                    out.append("SASS has %s %d-byte at %s" % (kind, e, ", ".join(sorted(near, key=site_sort_key))))
                if far:
                    out.append("SASS-only %d-byte %s at %s" % (e, kind, ", ".join(sorted(far, key=site_sort_key))))
                return ("  [" + "; ".join(out) + "]") if out else ""

            for key in sorted(rows, key=lambda k: (site_sort_key(k[0]), k[1])):
                site, kind = key
                e = emu.get(key)
                w, status = rows[key]
                base_status = status.split()[0]
                note = hint(key) if base_status == "EMU-ONLY" else ""
                totals[base_status] += 1
                pair_status.setdefault((op, variant, site, kind), set()).add(base_status)
                print("  %-58s %-13s %4s  %-18s %s%s" % (site, kind, "-" if e is None else e, widths_text(w),
                                                        status, note))
                if base_status not in ("agree", "mixed"):
                    mismatches.append((op, variant, kernel, site, kind, e, widths_text(w), status + note))
            if args.opcodes and opcodes.get(kernel):
                print("  opcodes: " + ", ".join("%s %d" % kv for kv in sorted(opcodes[kernel].items())))

    print("\n# summary per (variant, kernel, site line, kind):")
    for k in ("agree", "mixed", "EMU-WIDER", "SASS-WIDER", "EMU-ONLY", "SASS-ONLY", "kernel not found", "no SASS"):
        if totals[k]:
            print("#   %-16s %d" % (k, totals[k]))
    merged = collections.Counter()
    for statuses in pair_status.values():
        merged["/".join(sorted(statuses))] += 1
    print("# summary per (variant, site line, kind), template instances merged: %d pairs" % len(pair_status))
    for k, n in sorted(merged.items(), key=lambda x: -x[1]):
        print("#   %-24s %d" % (k, n))
    if mismatches:
        print("\n# not agreeing (op variant kernel site kind emu-bytes SASS-widths status):")
        for m in mismatches:
            print("#   %s %d  %s  %s  %s  emu=%s  sass=%s  %s" % (m[0], m[1], m[2], m[3], m[4],
                                                               "-" if m[5] is None else m[5], m[6], m[7]))
    return 0


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="command")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--arch", type=int, default=90, help="the cubin's sm (default 90)")
    common.add_argument("--nvdisasm", help="nvdisasm to run (default: $NVDISASM, $PATH, /usr/local/cuda/bin)")
    common.add_argument("--root", default=DEFAULT_ROOT, help="the source tree (default: this checkout)")
    s = sub.add_parser("sites", parents=[common], help="memory instructions per source line of one file")
    s.add_argument("file")
    s.add_argument("--variant-source", help="variants/op/NN_name.cu: the file whose lines are preferred")
    s.add_argument("--kernel", help="only kernels whose name contains TEXT")
    c = sub.add_parser("compare", parents=[common], help="the emulator's sites against SASS")
    c.add_argument("--report", required=True)
    c.add_argument("--build-dir", default=os.path.join(DEFAULT_ROOT, "build-lead"))
    c.add_argument("--select", action="append", metavar="OP[:N[,N]]")
    c.add_argument("--object", action="append", metavar="OP:N=PATH", help="a cubin or object for one variant")
    c.add_argument("--opcodes", action="store_true", help="also list each kernel's memory opcodes")
    args = p.parse_args(argv)
    if args.command == "sites":
        try:
            return cmd_sites(args)
        except (OSError, ValueError) as e:
            print("sass_sites.py: %s" % e, file=sys.stderr)
            return 1
    if args.command == "compare":
        return cmd_compare(args)
    p.print_help()
    return 2


if __name__ == "__main__":
    sys.exit(main())
