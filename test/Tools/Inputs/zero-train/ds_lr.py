#!/usr/bin/env python3
"""Checks a training run's learning rates against DeepSpeed's schedulers.

  ds_lr.py RUN.jsonl WarmupLR|WarmupDecayLR|WarmupCosineLR key=value...

The keys are the scheduler's params as in a ds_config.json (warmup_min_lr,
warmup_max_lr, warmup_num_steps, warmup_type, total_num_steps,
warmup_min_ratio, cos_min_ratio) plus lr= (the optimizer's lr, for
WarmupCosineLR). The expected rates follow deepspeed/runtime/lr_schedules.py
(the scheduler steps after each optimizer step, so optimizer step s uses
last_batch_iteration s-1). Prints one line; exits 1 when a step's lr differs
by more than 1e-6 relative (the metrics print 10 significant digits).
"""
import json
import math
import sys


def expected(kind, p, it):
    warm = max(2, int(p.get("warmup_num_steps", 1000)))
    log = p.get("warmup_type", "log") == "log"

    def gamma():
        return math.log(it + 1) / math.log(warm) if log else it / warm

    if kind in ("WarmupLR", "WarmupDecayLR"):
        lo, hi = float(p.get("warmup_min_lr", 0.0)), float(p.get("warmup_max_lr", 0.001))
        if it < warm:
            g = gamma()
        elif kind == "WarmupLR":
            g = 1.0
        else:
            total = int(p["total_num_steps"])
            g = max(0.0, (total - it) / max(1.0, total - warm))
        return lo + (hi - lo) * g
    lr = float(p["lr"])
    wmin, cmin = float(p.get("warmup_min_ratio", 0.0)), float(p.get("cos_min_ratio", 0.0001))
    if it < warm:
        return lr * (wmin + gamma() * (1 - wmin))
    total = int(p["total_num_steps"])
    ratio = (1 + math.cos(math.pi * (it - warm + 1) / max(1, total - warm))) / 2
    return lr * max(0.0, cmin + (1 - cmin) * ratio)


def main():
    path, kind = sys.argv[1], sys.argv[2]
    params = dict(a.split("=", 1) for a in sys.argv[3:])
    steps = [json.loads(l) for l in open(path)]
    steps = [r for r in steps if r.get("type") == "step"]
    if not steps:
        sys.exit("%s: no step records" % path)
    worst = 0.0
    for r in steps:
        want = expected(kind, params, r["step"] - 1)
        got = r["lr"]
        err = abs(got - want) / max(abs(want), 1e-12)
        if err > 1e-6 and abs(got - want) > 1e-12:
            sys.exit("step %d: lr %.10g, DeepSpeed's %s gives %.10g" % (r["step"], got, kind, want))
        worst = max(worst, err if abs(got - want) > 1e-12 else 0.0)
    print("%s: %d steps match DeepSpeed's %s (largest relative difference %.1e)" % (
        path, len(steps), kind, worst))


if __name__ == "__main__":
    main()
