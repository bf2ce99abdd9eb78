"""wb's bf16 conversions against PyTorch's, for every class of float.

Runs tests/bf16/bf16_probe (base/bf16.h on the host, and the emulator's CUDA
intrinsics) on float bit patterns of every class -- zeros, subnormals, normals, the
largest finite values and those that round to infinity, infinities, quiet and
signalling NaNs of both signs, exact ties at bf16 precision in both directions, and a
seeded random sample -- and requires round-to-nearest-even to give the bits
torch.tensor(x).to(torch.bfloat16) gives (NaNs by class: CUDA's canonical NaN is
0x7FFF, PyTorch keeps the sign and payload). The directed roundings (rz, rd, ru) have
no PyTorch twin: they must bracket the exact value with adjacent bf16 values, rz
toward zero. The host and the emulator must agree bit for bit.
"""
import argparse
import random
import struct
import subprocess
import sys

import needs

needs.modules("torch")
import torch  # noqa: E402


def bits_to_float(u):
    return struct.unpack("<f", struct.pack("<I", u))[0]


def bf16_to_float(u):
    return bits_to_float(u << 16)


def is_nan_bf16(u):
    return (u & 0x7FFF) > 0x7F80


def patterns():
    out = set()
    for sign in (0, 0x80000000):
        for mag in (0, 1, 2, 0x7FFF, 0x8000, 0x8001, 0x18000, 0x28000, 0x7FFFFF, 0x800000, 0x807FFF, 0x808000,
                    0x808001, 0x3F800000, 0x3F808000, 0x3F818000, 0x3F807FFF, 0x3F808001, 0x7F7F7FFF, 0x7F7F8000,
                    0x7F7F8001, 0x7F7FFFFF, 0x7F800000, 0x7F800001, 0x7FC00000, 0x7FFFFFFF, 0x7FA00000, 0x7F808000):
            out.add(sign | mag)
    rng = random.Random(2026)
    for _ in range(20000):
        out.add(rng.getrandbits(32))
    for _ in range(5000):  # exact ties: the low 16 bits 0x8000, even and odd kept parts
        out.add((rng.getrandbits(16) << 16) | 0x8000)
    return sorted(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--probe", required=True)
    args = ap.parse_args()
    pats = patterns()
    text = "\n".join("%08x" % p for p in pats) + "\n"
    res = subprocess.run([args.probe], input=text, capture_output=True, text=True, check=True)
    rows = [line.split() for line in res.stdout.splitlines()]
    assert len(rows) == len(pats), (len(rows), len(pats))
    # From the bits (a Python float would quiet a signalling NaN on the way).
    signed = [p - (1 << 32) if p >= (1 << 31) else p for p in pats]
    floats = torch.tensor(signed, dtype=torch.int32).view(torch.float32)
    torch_bits = [int(x) & 0xFFFF for x in floats.to(torch.bfloat16).view(torch.int16).tolist()]
    failures = []
    for p, row, tb in zip(pats, rows, torch_bits):
        assert int(row[0], 16) == p
        host = [int(x, 16) for x in row[1:5]]
        emu = [int(x, 16) for x in row[5:9]]
        if host != emu:
            failures.append("%08x: host %s, emulator %s" % (p, row[1:5], row[5:9]))
        rn, rz, rd, ru = host
        x = bits_to_float(p)
        if x != x:  # NaN: by class, and CUDA's canonical NaN
            if not (is_nan_bf16(tb) and all(v == 0x7FFF for v in host)):
                failures.append("%08x (NaN): wb %s, torch %04x" % (p, row[1:5], tb))
            continue
        if rn != tb:
            failures.append("%08x (%r): round to nearest even %04x, torch %04x" % (p, x, rn, tb))
        lo, hi = bf16_to_float(rd), bf16_to_float(ru)
        if not (lo <= x <= hi):
            failures.append("%08x (%r): rd %r and ru %r do not bracket it" % (p, x, lo, hi))
        # Adjacent bf16 values: one apart in the magnitude bits, on x's side of zero.
        if lo != hi and not ((x > 0 and ru == rd + 1) or (x < 0 and rd == ru + 1)):
            failures.append("%08x (%r): rd %04x and ru %04x are not adjacent" % (p, x, rd, ru))
        if lo == hi and bf16_to_float(rn) != x:
            failures.append("%08x (%r): rd == ru but not exact" % (p, x))
        expected_rz = rd if x >= 0 else ru
        if rz != expected_rz and not (x == 0.0):
            failures.append("%08x (%r): rz %04x is not toward zero" % (p, x, rz))
    if failures:
        print("%d of %d patterns differ:" % (len(failures), len(pats)))
        for f in failures[:40]:
            print("  " + f)
        return 1
    print("ok: %d float bit patterns, round to nearest even equal to PyTorch's, directed roundings bracket, "
          "host and emulator equal" % len(pats))
    return 0


if __name__ == "__main__":
    sys.exit(main())
