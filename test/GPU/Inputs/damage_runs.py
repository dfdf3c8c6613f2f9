"""Damages a run directory of make_runs.py the ways a cut-short gpu-check
run can (gpu-report.test): see the test for what each change stands for."""
import json
import sys

runs = sys.argv[1]
path = f"{runs}/gpt2_s0.jsonl"
rows = [json.loads(l) for l in open(path) if l.strip()]
rows[0]["world_size"] = 2
for r in rows[1:]:
    r["comm_wait_s"] = None
    r["peak_bytes"] = None
with open(path, "w") as f:
    for r in rows[:-1]:
        f.write(json.dumps(r) + "\n")
    f.write('{"type":"step","step":4,"loss":')  # killed mid-write
with open(f"{runs}/gpt2_s0.log", "wb") as f:
    f.write(b"\xff\xfe not UTF-8\n")
with open(f"{runs}/torch_eager.json", "w") as f:
    f.write("[]")
import os
os.remove(f"{runs}/profile_run.jsonl")
