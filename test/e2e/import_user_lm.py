#!/usr/bin/env python3
"""A user's own PyTorch language model (a .py file with an entry point and a
loss function, test/Tools/Inputs/import/tiny_lm.py) through zero-import,
trained by Zero and by PyTorch 2.x from the same weights on the same
batches (run with the project venv's python).

For each stage:world-size in --runs, zero-compile (the first straight from
FILE.py, which runs zero-import: EXE.import.mlir and its initial weights
EXE.import.safetensors; the others from that module) and 20 steps with
--import EXE.import.safetensors --dump-batches --metrics; PyTorch: the entry
point's module with those weights loaded (load_state_dict: the tied head
is the token table), torch.optim.AdamW + clip_grad_norm_ and the driver's
LR schedule on the dumped batches (import_gpt2.pytorch_run, the contract of
reference_gpt.py): every loss within --rel-tol relative.
"""
import argparse
import importlib.util
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import import_gpt2 as gpt  # noqa: E402
import reference_gpt as ref  # noqa: E402


def load_entry(path):
    spec = importlib.util.spec_from_file_location("user_model", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--model", required=True, help="the user's .py file")
    ap.add_argument("--mpirun", default="mpirun --allow-run-as-root --oversubscribe")
    ap.add_argument("--runs", default="3:4,3:1")
    ap.add_argument("--rel-tol", type=float, default=gpt.REL_TOL)
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    torch.set_num_threads(1)
    from safetensors.torch import load_file
    user = load_entry(args.model)
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    failures = []
    module = weights = None
    for spec in args.runs.split(","):
        stage, world = (int(x) for x in spec.split(":"))
        tag = "stage %d, %d rank%s" % (stage, world, "" if world == 1 else "s")
        exe = os.path.join(args.work, "train_s%d_n%d" % (stage, world))
        # The first program straight from the .py (zero-compile runs
        # zero-import: EXE.import.mlir, EXE.import.safetensors), the others
        # from that module.
        gpt.run([os.path.join(args.bin, "zero-compile"), module or args.model,
                 "--stage=%d" % stage, "--world-size=%d" % world, "-o", exe])
        if module is None:
            module, weights = exe + ".import.mlir", exe + ".import.safetensors"
            init = load_file(weights)
        out = lambda name: os.path.join(args.work, "%s.s%d.n%d" % (name, stage, world))
        cmd = args.mpirun.split() + ["-np", str(world), exe] if world > 1 else [exe]
        gpt.run(cmd + ["--data", args.data, "--steps", str(gpt.STEPS), "--lr", repr(gpt.LR),
                       "--warmup", "0", "--val-every", "0", "--sample-tokens", "0",
                       "--threads", "1", "--quiet", "--import", weights,
                       "--dump-batches", out("batches"), "--metrics", out("metrics")], env=env)
        batches = ref.read_batches(out("batches"), gpt.STEPS, 1)
        steps_rec, _ = ref.read_metrics(out("metrics"))
        model = user.zero_model()[0]
        missing, unexpected = model.load_state_dict(init, strict=False)
        tied = {n for n in missing if model.get_parameter(n) is not None}
        if unexpected or any(n not in tied for n in missing):
            sys.exit("state_dict mismatch: missing %s, unexpected %s" % (missing, unexpected))
        loss_fn = user.zero_model()[2]
        gpt.pytorch_run(model, lambda m, ids, t: loss_fn(m(ids), t), batches, steps_rec,
                        args.rel_tol, failures, tag)
    if failures:
        print("\nFAILED:\n  " + "\n  ".join(failures))
        sys.exit(1)
    print("\nimport_user_lm: PyTorch agrees within %g (relative)" % args.rel_tol)


if __name__ == "__main__":
    main()
