#!/usr/bin/env python3
"""Re-keys a device's committed check reports to variant identities.

Reports written before identities (base/source_identity.h) carry the older source hash:
the SHA-256 of a variant's file and of every project header it included, comments,
paths and all, so that any move or comment voided a verification. This tool proves, for
each variant a report holds, which identity the code it verified has:

  1. it checks out the commit the reports name (context.source.commit; they must all
     name one, built clean) in a temporary worktree;
  2. it runs that commit's own hash generator (cmake/GenerateRegistry.cmake) there and
     keeps a variant only where the hash it gives equals the report's: the report was
     measured on exactly that code;
  3. it computes the variant's identity at that commit with wb_identity, the rules of
     the build, and writes the pairs (old hash, identity) to OUT.

`wb list` then counts a record as verifying a variant when its hash is re-keyed to the
variant's identity now: the code is provably the one the device ran, whatever moved or
was commented since. Nothing here edits the measured reports.

--substitute PATH=NOW (repeatable) reads the project file PATH at that commit as the
text of NOW, a file of today's tree: for a header whose place in the variants' includes
another took since, the variants seeing of it only what the new one holds (OUT names
each, with the reason given by --why). A variant that used anything more of it would
not compile today, since today's variants include only the new one.

  tools/rekey.py --reports results/nvidia-h200/check --identity build/wb_identity \
      --out results/nvidia-h200/rekey.json [--substitute contract/op.h=contract/op_fwd.h --why "..."]
"""
import argparse
import datetime
import json
import pathlib
import re
import subprocess
import sys
import tempfile


def git(repo, *args):
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def old_hashes(tree, sources, cmake):
    """The hashes the commit's own generator gives the variant files `sources`."""
    generator = tree / "cmake" / "GenerateRegistry.cmake"
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        (tmp / "variants.txt").write_text("\n".join(sources) + "\n")
        (tmp / "references.txt").write_text("")
        out = tmp / "table.cpp"
        subprocess.run([cmake, f"-DROOT={tree}", f"-DLIST={tmp / 'variants.txt'}",
                        f"-DREFERENCES={tmp / 'references.txt'}", f"-DOUT={out}", "-P", str(generator)],
                       check=True, capture_output=True, text=True)
        return dict(re.findall(r'\{"([^"]+)", "([0-9a-f]{64})"\}', out.read_text()))


def identities(tree, sources, tool, substitutes):
    args = [tool, "--root", str(tree)]
    for spec in substitutes:
        old, now = spec.split("=", 1)
        args += ["--substitute", f"{old}={pathlib.Path(now).resolve()}"]
    out = subprocess.run(args + sources, check=True, capture_output=True, text=True).stdout
    return {line.split()[1]: line.split()[0] for line in out.splitlines()}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reports", required=True, type=pathlib.Path, help="a folder of check reports of one device")
    ap.add_argument("--identity", required=True, help="the wb_identity program of the build")
    ap.add_argument("--out", required=True, type=pathlib.Path)
    ap.add_argument("--repo", default=".", type=pathlib.Path)
    ap.add_argument("--cmake", default="cmake")
    ap.add_argument("--substitute", action="append", default=[], metavar="PATH=NOW")
    ap.add_argument("--why", action="append", default=[], help="the reason for each --substitute, in order")
    ap.add_argument("--created", help="the date to record (default: today)")
    args = ap.parse_args()
    if len(args.why) != len(args.substitute) or any("=" not in s for s in args.substitute):
        sys.exit("rekey: give each --substitute as PATH=NOW, and one --why per --substitute")

    commits, records = set(), {}
    for path in sorted(args.reports.glob("*.json")):
        report = json.loads(path.read_text())
        source = report["context"]["source"]
        if source.get("dirty"):
            sys.exit(f"rekey: {path} was built from a dirty tree: its code is not a commit's")
        commits.add(source["commit"])
        for r in report["records"]:
            if r["backend"] == "cuda" and r.get("source_hash"):
                records.setdefault((r["op"], r["variant"], r["source"]), set()).add(r["source_hash"])
    if len(commits) != 1:
        sys.exit(f"rekey: the reports name {len(commits)} commits; re-key one commit's reports at a time")
    commit = commits.pop()

    with tempfile.TemporaryDirectory() as tmp:
        tree = pathlib.Path(tmp) / "tree"
        git(args.repo, "worktree", "add", "--detach", "-q", str(tree), commit)
        try:
            sources = sorted({source for _, _, source in records})
            before = old_hashes(tree, sources, args.cmake)
            ids = identities(tree, sources, args.identity, args.substitute)
        finally:
            git(args.repo, "worktree", "remove", "--force", str(tree))

    rekeyed, refused = [], []
    for (op, variant, source), hashes in sorted(records.items()):
        for h in sorted(hashes):
            if before.get(source) == h:
                rekeyed.append({"op": op, "variant": variant, "source": source, "source_hash": h,
                                "identity": ids[source]})
            else:
                refused.append(f"{op} cuda/{variant}: the report's hash is not that commit's code")
    out = {
        "schema": "wb.rekey/1",
        "commit": commit,
        "created": args.created or datetime.date.today().isoformat(),
        "command": "tools/rekey.py --reports " + args.reports.as_posix() + "".join(
            f" --substitute {s} --why '...'" for s in args.substitute) + " --identity build/wb_identity --out " +
            args.out.as_posix(),
        "identity_scheme": "wb.identity/1",
        "substituted": [{"path": s.split("=", 1)[0], "read_as": s.split("=", 1)[1], "why": w}
                        for s, w in zip(args.substitute, args.why)],
        "rekeyed": rekeyed,
    }
    tmp_out = args.out.with_name(args.out.name + ".tmp")
    tmp_out.write_text(json.dumps(out, indent=1) + "\n")
    tmp_out.replace(args.out)
    print(f"rekey: {len(rekeyed)} records re-keyed from commit {commit[:12]} into {args.out}")
    for line in refused:
        print("rekey: not re-keyed:", line)


if __name__ == "__main__":
    main()
