#!/usr/bin/env python3
"""The GPU CI workflow (.github/workflows/gpu.yml) as GitHub would read it: it parses as
YAML, its job runs on a self-hosted runner labelled `gpu`, and a step runs
tools/device/gpu_ci.sh -- the script the device rehearsal runs without a GPU -- which
exists, is executable and parses as bash. Exit 0 when all hold, 1 otherwise (each
failure named)."""
import argparse
import os
import subprocess
import sys

import yaml


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--root", required=True, help="the repository's root")
    args = parser.parse_args()
    workflow = os.path.join(args.root, ".github", "workflows", "gpu.yml")
    script_rel = "tools/device/gpu_ci.sh"
    script = os.path.join(args.root, script_rel)
    failures = []
    try:
        with open(workflow) as f:
            doc = yaml.safe_load(f)
    except (OSError, yaml.YAMLError) as e:
        print(f"test_gpu_workflow: cannot read {workflow}: {e}")
        return 1
    # YAML 1.1 reads the key `on` as the boolean True: accept either spelling.
    if "on" not in doc and True not in doc:
        failures.append("no trigger ('on')")
    jobs = doc.get("jobs") or {}
    if not jobs:
        failures.append("no jobs")
    script_steps = 0
    for name, job in jobs.items():
        runs_on = job.get("runs-on")
        labels = [runs_on] if isinstance(runs_on, str) else list(runs_on or [])
        if "gpu" not in labels:
            failures.append(f"job {name}: runs-on {runs_on!r} does not include the label 'gpu'")
        if "self-hosted" not in labels:
            failures.append(f"job {name}: runs-on {runs_on!r} is not a self-hosted runner")
        for step in job.get("steps") or []:
            run = step.get("run", "")
            if script_rel in run:
                script_steps += 1
            elif run.strip():
                failures.append(f"job {name}: step {step.get('name', run)!r} runs something other than {script_rel}")
    if script_steps == 0:
        failures.append(f"no step runs {script_rel}")
    if not os.path.isfile(script):
        failures.append(f"{script_rel} does not exist")
    else:
        if not os.access(script, os.X_OK):
            failures.append(f"{script_rel} is not executable")
        syntax = subprocess.run(["bash", "-n", script], capture_output=True, text=True)
        if syntax.returncode != 0:
            failures.append(f"{script_rel} does not parse: {syntax.stderr.strip()}")
        usage = subprocess.run(["bash", script, "--no-such-option"], capture_output=True, text=True)
        if usage.returncode != 2:
            failures.append(f"{script_rel} --no-such-option exited {usage.returncode}, not 2 (bad usage)")
    for f in failures:
        print(f"FAILED: {f}")
    if not failures:
        print(f"gpu.yml: {len(jobs)} job(s) on a self-hosted gpu runner, {script_steps} step(s) running {script_rel}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
