#!/usr/bin/env python3
"""Replays a fp16-mixed run's overflow verdicts through torch.amp.GradScaler.

  grad_scaler_check.py RUN.jsonl [--expect-skipped K...]
      the skipped steps are exactly K... (none when K... is empty);
  grad_scaler_check.py RUN.jsonl --replay --init-scale S --growth-interval N
      replays the run through torch.amp.GradScaler (needs PyTorch):

RUN.jsonl: the training driver's --metrics of a fp16-mixed program (step
records with "loss_scale", the S that step back-propagated, and "skipped",
1 when its gradient norm was not finite). For each step, a one-parameter
SGD model gets a finite or an infinite gradient as the step did, and
GradScaler (growth_factor 2, backoff_factor 0.5, the given init_scale and
growth_interval) steps and updates. Checks that GradScaler's scale before
every step equals the driver's loss_scale, and that GradScaler skips
exactly the driver's skipped steps (the parameter moves only on the
others); with --expect-skipped, that the skipped steps are exactly K...
Prints one summary line; exits 1 on the first difference.
"""
import argparse
import json
import math
import sys



def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("run")
    parser.add_argument("--init-scale", type=float, default=65536.0)
    parser.add_argument("--growth-interval", type=int, default=2000)
    parser.add_argument("--expect-skipped", type=int, nargs="*")
    parser.add_argument("--replay", action="store_true")
    args = parser.parse_args()
    steps = []
    with open(args.run) as f:
        for line in f:
            r = json.loads(line)
            if r.get("type") == "step":
                steps.append(r)
    if not steps or "loss_scale" not in steps[0]:
        sys.exit(f"{args.run}: no step records with loss_scale")

    if args.expect_skipped is not None:
        got = [r["step"] for r in steps if r["skipped"]]
        if got != args.expect_skipped:
            sys.exit(f"skipped steps {got}, expected {args.expect_skipped}")
        print(f"{len(steps)} steps, skipped: {got}")
    if not args.replay:
        return
    import torch

    p = torch.nn.Parameter(torch.zeros(1))
    opt = torch.optim.SGD([p], lr=1.0)
    scaler = torch.amp.GradScaler("cpu", init_scale=args.init_scale,
                                  growth_factor=2.0, backoff_factor=0.5,
                                  growth_interval=args.growth_interval)
    skipped = 0
    for r in steps:
        scaler.scale(torch.ones(()))  # initializes the scale lazily
        torch_scale = scaler.get_scale()
        if torch_scale != r["loss_scale"]:
            sys.exit(f"step {r['step']}: GradScaler's scale {torch_scale} != "
                     f"the driver's loss_scale {r['loss_scale']}")
        before = p.detach().clone()
        p.grad = torch.full((1,), math.inf if r["skipped"] else 1.0)
        scaler.step(opt)
        scaler.update()
        moved = not torch.equal(before, p.detach())
        if moved == bool(r["skipped"]):
            sys.exit(f"step {r['step']}: the driver "
                     f"{'skipped' if r['skipped'] else 'applied'} the update, "
                     f"GradScaler {'applied' if moved else 'skipped'} it")
        skipped += r["skipped"]
    print(f"{len(steps)} steps, {skipped} skipped: the loss scale follows "
          f"torch.amp.GradScaler (final {scaler.get_scale():g})")


if __name__ == "__main__":
    main()
