#!/usr/bin/env python3
"""Checks the per-step losses of training-driver metrics files (JSON lines).

  loss_curve.py RUN.jsonl --min-decrease D
      the last step's loss is at least D below the first step's;
  loss_curve.py RUN.jsonl --same-as OTHER.jsonl... [--rtol R]
      every other run has the same steps with losses and gradient norms
      within relative tolerance R (default 1e-4) of RUN's;
  loss_curve.py RUN.jsonl --same-as RESUMED.jsonl --overlap [--rtol 0]
      only the steps the other run logged (a run resumed from a checkpoint
      logs the steps after it) must be in RUN and match; --rtol 0 demands
      bit-identical values. Prints the largest relative difference. A null
      value (the non-finite norm of a skipped fp16-mixed step) matches only
      a null.
Prints one line per check; exits 1 on the first failure.
"""
import argparse
import json
import sys


def steps(path):
    out = []
    with open(path) as f:
        for line in f:
            record = json.loads(line)
            if record.get("type") == "step":
                out.append(record)
    if not out:
        sys.exit(f"{path}: no step records")
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("run")
    parser.add_argument("--min-decrease", type=float)
    parser.add_argument("--same-as", nargs="+", default=[])
    parser.add_argument("--rtol", type=float, default=1e-4)
    parser.add_argument("--overlap", action="store_true")
    args = parser.parse_args()
    base = steps(args.run)
    if args.min_decrease is not None:
        first, last = base[0]["loss"], base[-1]["loss"]
        ok = first - last >= args.min_decrease
        print(f"loss {first:.4f} -> {last:.4f} over {len(base)} steps: "
              f"{'decreases' if ok else 'DOES NOT DECREASE'} by >= {args.min_decrease}")
        if not ok:
            sys.exit(1)
    for other in args.same_as:
        theirs = steps(other)
        mine = base
        if args.overlap:
            by_step = {r["step"]: r for r in base}
            missing = [r["step"] for r in theirs if r["step"] not in by_step]
            if missing:
                sys.exit(f"{other}: steps {missing} are not in {args.run}")
            mine = [by_step[r["step"]] for r in theirs]
        if len(theirs) != len(mine):
            sys.exit(f"{other}: {len(theirs)} steps, expected {len(mine)}")
        worst = 0.0
        for a, b in zip(mine, theirs):
            for key in ("loss", "grad_norm"):
                x, y = a[key], b[key]
                # A skipped fp16-mixed step logs a null (non-finite) norm:
                # equal only to another null.
                if x is None or y is None:
                    if x is not y:
                        sys.exit(f"{other}: step {a['step']} {key} {y!r} differs from {x!r}")
                    continue
                if abs(x - y) > args.rtol * abs(x):
                    sys.exit(f"{other}: step {a['step']} {key} {y!r} differs from {x!r}")
                worst = max(worst, abs(x - y) / max(abs(x), 1e-30))
        span = f"steps {theirs[0]['step']}-{theirs[-1]['step']}"
        print(f"{other}: same losses and norms as {args.run} ({span}, "
              f"{'bit-identical' if worst == 0 else 'max rel diff %.3g' % worst}, "
              f"rtol {args.rtol})")


if __name__ == "__main__":
    main()
