#!/usr/bin/env python3
"""tools/rekey.py reproduces the committed results/nvidia-h200/rekey.json: from the
commit the H200 reports name, every record's old hash is that commit's code and its
identity is what today's wb_identity computes there. Then the file does what it is for:
every variant it re-keys to today's identity is one `wb list` shows verified on the
H200 (or incorrect there), and a re-keyed identity edited by one digit verifies nothing.
Skipped (77) where the clone lacks that commit (a shallow clone)."""
import argparse
import json
import pathlib
import subprocess
import sys
import tempfile


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source", required=True, type=pathlib.Path)
    ap.add_argument("--identity", required=True)
    ap.add_argument("--wb", required=True)
    ap.add_argument("--cmake", default="cmake")
    args = ap.parse_args()
    committed_path = args.source / "results" / "nvidia-h200" / "rekey.json"
    committed = json.loads(committed_path.read_text())
    have = subprocess.run(["git", "-C", str(args.source), "cat-file", "-e", committed["commit"] + "^{commit}"],
                          capture_output=True)
    if have.returncode != 0:
        print(f"SKIP: this clone does not hold commit {committed['commit'][:12]} (a shallow clone?)")
        return 77

    with tempfile.TemporaryDirectory() as tmp:
        out = pathlib.Path(tmp) / "rekey.json"
        cmd = [sys.executable, str(args.source / "tools" / "rekey.py"), "--repo", str(args.source),
               "--reports", str(args.source / "results" / "nvidia-h200" / "check"), "--identity", args.identity,
               "--out", str(out), "--cmake", args.cmake, "--created", committed["created"]]
        for s in committed["substituted"]:
            cmd += ["--substitute", f"{s['path']}={args.source / s['read_as']}", "--why", s["why"]]
        subprocess.run(cmd, check=True, cwd=args.source)
        again = json.loads(out.read_text())
    assert again["rekeyed"] == committed["rekeyed"], "tools/rekey.py no longer gives the committed re-keying"
    assert again["commit"] == committed["commit"]

    # What wb list makes of it: the re-keyed variants whose identity is today's read
    # verified or INCORRECT on the H200, the others changed since verified.
    now = subprocess.run([args.identity, "--root", str(args.source)] +
                         sorted({r["source"] for r in committed["rekeyed"]}),
                         check=True, capture_output=True, text=True).stdout
    identity_now = {line.split()[1]: line.split()[0] for line in now.splitlines()}
    same = {(r["op"], r["variant"]) for r in committed["rekeyed"] if identity_now[r["source"]] == r["identity"]}
    assert same, "no H200 verification survives: the rules or the tree changed what they cover"

    def statuses(results):
        listing = subprocess.run([args.wb, "list", "--results", str(results)], check=True, capture_output=True,
                                 text=True).stdout
        seen, op = {}, None
        for line in listing.splitlines():
            if line and not line.startswith(" "):
                op = line.split()[0]
            fields = line.split()
            if len(fields) > 2 and fields[0] == "cuda" and fields[1].isdigit():
                seen[(op, int(fields[1]))] = line
        return seen

    listed = statuses(args.source / "results")
    for key in same:
        assert "on NVIDIA H200 2026-11-26" in listed[key], f"{key}: {listed[key]}"
    for key, line in listed.items():
        if "on NVIDIA H200" in line:
            assert key in same, f"{key} reads verified but its re-keyed identity is not today's: {line}"

    # A re-keyed identity off by one digit verifies nothing.
    with tempfile.TemporaryDirectory() as tmp:
        results = pathlib.Path(tmp) / "results"
        (results / "nvidia-h200").mkdir(parents=True)
        for f in (args.source / "results" / "nvidia-h200" / "check").glob("*.json"):
            (results / "nvidia-h200" / f.name).write_text(f.read_text())
        broken = dict(committed)
        broken["rekeyed"] = [dict(r, identity=("0" if r["identity"][0] != "0" else "1") + r["identity"][1:])
                             for r in committed["rekeyed"]]
        (results / "nvidia-h200" / "rekey.json").write_text(json.dumps(broken))
        assert not any("on NVIDIA H200" in line for line in statuses(results).values())
    print(f"rekey: reproduced; {len(same)} of {len({(r['op'], r['variant']) for r in committed['rekeyed']})} "
          "re-keyed variants have today's identity")
    return 0


if __name__ == "__main__":
    sys.exit(main())
