#!/usr/bin/env python3
"""Checks the per-step losses of training-driver metrics files (JSON lines).

  loss_curve.py RUN.jsonl --min-decrease D
      the last step's loss is at least D below the first step's;
  loss_curve.py RUN.jsonl --same-as OTHER.jsonl... [--rtol R]
      every other run has the same steps with losses and gradient norms
      within relative tolerance R (default 1e-4) of RUN's.
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
        if len(theirs) != len(base):
            sys.exit(f"{other}: {len(theirs)} steps, expected {len(base)}")
        for a, b in zip(base, theirs):
            for key in ("loss", "grad_norm"):
                x, y = a[key], b[key]
                if abs(x - y) > args.rtol * abs(x):
                    sys.exit(f"{other}: step {a['step']} {key} {y} differs from {x}")
        print(f"{other}: same losses and norms as {args.run} (rtol {args.rtol})")


if __name__ == "__main__":
    main()
