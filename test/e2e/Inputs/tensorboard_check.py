"""Checks a --tensorboard event file against the run's --metrics JSONL.

Usage: tensorboard_check.py TB_DIR METRICS.jsonl

Reads TB_DIR with the tensorboard package's EventAccumulator (what
`tensorboard --logdir` uses) and requires, for every step and validation
line of the metrics, the same scalar at the same step (float32 of the
JSON value, whose text may round the last float32 digit: within 2^-22
relative): train/loss, train/lr, train/grad_norm, train/tokens_seen and
val/loss. Prints one summary line; exits 1 on the first mismatch.
"""
import json
import sys

import numpy as np
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator


def main():
    tb_dir, metrics = sys.argv[1], sys.argv[2]
    acc = EventAccumulator(tb_dir, size_guidance={"scalars": 0})
    acc.Reload()
    tags = set(acc.Tags()["scalars"])
    want = {"train/loss": [], "train/lr": [], "train/grad_norm": [],
            "train/tokens_seen": [], "val/loss": []}
    for line in open(metrics):
        r = json.loads(line)
        if r.get("type") == "step":
            want["train/loss"].append((r["step"], r["loss"]))
            want["train/lr"].append((r["step"], r["lr"]))
            want["train/grad_norm"].append((r["step"], r["grad_norm"]))
            want["train/tokens_seen"].append((r["step"], r["tokens_seen"]))
        elif r.get("type") == "val":
            want["val/loss"].append((r["step"], r["val_loss"]))
    n = 0
    for tag, rows in want.items():
        if tag not in tags:
            sys.exit(f"tensorboard_check: no scalar '{tag}' (have {sorted(tags)})")
        got = [(e.step, e.value) for e in acc.Scalars(tag)]
        expect = [(s, float(np.float32(v))) for s, v in rows]
        same = len(got) == len(expect) and all(
            gs == es and abs(gv - ev) <= 2.0**-22 * abs(ev)
            for (gs, gv), (es, ev) in zip(got, expect))
        if not same:
            sys.exit(f"tensorboard_check: {tag}: {got[:3]}... != {expect[:3]}...")
        n += len(rows)
    print(f"tensorboard_check: {n} scalars in {len(want)} tags equal to the metrics")


if __name__ == "__main__":
    main()
