#!/usr/bin/env python3
"""tools/device/anchors_parse.py: the parsers of tools/device/anchors.sh (the campaign's
`anchors` stage), run on the GPU host's outputs and, in the rehearsal, on the fake outputs
of tools/device/fixtures/. Standard library only (any Python 3 runs it).

    anchors_parse.py train LOG NAME COMMAND JSON
        the step lines of an llm.c trainer's log -> {"name", "command", "steps": [{step, ms,
        loss}], "ms_per_step" (mean over steps 2..), "steps_timed"}; exit 1 when no step line
    anchors_parse.py dev LOG PROGRAM KERNEL COMMAND JSONL
        the timing lines of one run of an llm.c dev/cuda program -> one JSON record per line
        appended to JSONL {program, kernel, config, ms, command}; prints the count; exit 1
        when the run printed no time (the program refused the kernel number, or failed)

The lines they read (written from the format strings of llm.c's printf calls):
  train_gpt2_fp32.cu   "step    2/30: train loss 10.123456 (84.123456 ms, 48690 tok/s)"
  train_gpt2.cu        "step    2/30 | loss 10.123456 (+0.00z)| norm 1.2345 (+0.00z)| lr 3.00e-04 | 40.12 ms | 45.1% bf16 MFU | 102100 tok/s"
  dev/cuda programs    "block_size  256 | time 0.0123 ms | bandwidth ...", "block_size 256 time 0.0123 ms",
                       "sqrt_block_size   16 | time 1.2345 ms | tflops ...", "time gpu 0.1234 ms", "time 0.1234 ms"
"""
import json
import re
import sys

STEP_FP32 = re.compile(r"^step\s+(\d+)/(\d+): train loss (\S+) \((\S+) ms, \S+ tok/s\)")
STEP_BF16 = re.compile(r"^step\s+(\d+)/(\d+) \| loss\s+(\S+) .*\|\s+([\d.]+) ms \|")
DEV_CONFIG = re.compile(r"^\s*(sqrt_block_size|block_size)\s+(\d+)\s*\|?\s*time\s+([\d.eE+-]+)\s*ms")
DEV_PLAIN = re.compile(r"^\s*time(?: gpu)?\s+([\d.eE+-]+)\s*ms")  # not "time cpu"


def parse_train(log, name, command, out):
    steps = []
    for line in open(log, errors="replace"):
        m = STEP_FP32.match(line) or STEP_BF16.match(line)
        if m:
            steps.append({"step": int(m.group(1)), "of": int(m.group(2)), "loss": float(m.group(3)), "ms": float(m.group(4))})
    timed = [s["ms"] for s in steps if s["step"] >= 2]
    rec = {"name": name, "command": command, "log": log, "steps": steps, "steps_timed": len(timed),
           "ms_per_step": sum(timed) / len(timed) if timed else None}
    with open(out, "w") as f:
        json.dump(rec, f, indent=1)
    if not timed:
        print(f"{name}: no step line after step 1 in {log}")
        return 1
    print(f"{name}: {len(timed)} steps timed, {rec['ms_per_step']:.2f} ms/step (steps 2..{steps[-1]['step']})")
    return 0


def parse_dev(log, program, kernel, command, out):
    recs = []
    for line in open(log, errors="replace"):
        m = DEV_CONFIG.match(line)
        if m:
            recs.append({"config": f"{m.group(1)}={m.group(2)}", "ms": float(m.group(3))})
            continue
        m = DEV_PLAIN.match(line)
        if m:
            recs.append({"config": "-", "ms": float(m.group(1))})
    with open(out, "a") as f:
        for r in recs:
            f.write(json.dumps(dict(program=program, kernel=int(kernel), command=command, **r)) + "\n")
    print(len(recs))
    return 0 if recs else 1


def main():
    if len(sys.argv) == 6 and sys.argv[1] == "train":
        return parse_train(*sys.argv[2:])
    if len(sys.argv) == 7 and sys.argv[1] == "dev":
        return parse_dev(*sys.argv[2:])
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main())
