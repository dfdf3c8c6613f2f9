#!/usr/bin/env python3
"""Array models (a forward that takes tensors other than token ids) trained
by Zero on arrays and by PyTorch 2.x from the same weights on the same
batches (run with the project venv's python).

Models: `zero-model mlp` as a regressor (mse) and as a classifier
(--loss cross-entropy), a user's MLP classifier with a custom loss in a
.py file (test/Tools/Inputs/import/classifier.py: a frozen input layer,
LayerNorm, cross-entropy + 0.5 mse of the logits) and a user's regressor
(mlp_mse.py), compiled straight from the .py (zero-compile runs
zero-import). Data: arrays this script writes
with the inputs' names (`x`, `target`): a safetensors file, for the regressor
also a directory of .npy files, for the user model int64 targets (PyTorch's
label dtype, narrowed to the model's i32 by the driver).

For each model and stage:world-size in --runs: zero-compile, 20 steps with
--import W --dump-batches --metrics; PyTorch: the same module with W,
torch.optim.AdamW + clip_grad_norm_ and the driver's LR schedule on the
dumped sample rows (import_gpt2.pytorch_run): every loss within --rel-tol
relative. The dumped rows are also checked against the sampler's contract
(runtime/src/driver/arrays.h: Philox of the seed, the same global batch on every
rank, rank r's slice [r*B, (r+1)*B)), recomputed here.
"""
import argparse
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import import_gpt2 as gpt  # noqa: E402  run, pytorch_run, STEPS, LR
from import_user_lm import load_entry  # noqa: E402
import reference_gpt as ref  # noqa: E402  read_metrics

SAMPLES, FEATURES, HIDDEN, OUTPUTS, CLASSES, BATCH = 512, 8, 16, 4, 3, 4
SEED = 1337  # the driver's default --seed


class MLP(nn.Module):
    """zero-model mlp --input 8 --hidden 16 --output OUT as a PyTorch module."""

    def __init__(self, out):
        super().__init__()
        self.fc0 = nn.Linear(FEATURES, HIDDEN)
        self.fc1 = nn.Linear(HIDDEN, out)

    def forward(self, x):
        return self.fc1(torch.relu(self.fc0(x)))


def philox4x32(c, key):
    """Philox4x32-10 (runtime/src/common/internal.h philox4x32)."""
    M = 0xFFFFFFFF
    c0, c1, c2, c3 = c
    k0, k1 = key & M, (key >> 32) & M
    for _ in range(10):
        p0, p1 = 0xD2511F53 * c0, 0xCD9E8D57 * c2
        c0, c1, c2, c3 = ((p1 >> 32) ^ c1 ^ k0) & M, p1 & M, ((p0 >> 32) ^ c3 ^ k1) & M, p0 & M
        k0, k1 = (k0 + 0x9E3779B9) & M, (k1 + 0xBB67AE85) & M
    return c0, c1, c2, c3


def stream_rows(steps, global_batch, n_train):
    """Rows of the training stream (arrays.h): sample s is Philox(seed; s /
    G, s mod G, "ARRY") mod n_train, G = the run's global batch."""
    out = []
    for s in range(steps * global_batch):
        i, b = divmod(s, global_batch)
        r = philox4x32((i & 0xFFFFFFFF, i >> 32, b, 0x41525259), SEED)
        out.append((((r[0] << 32) | r[1]) % n_train))
    return out


def read_rows(path, steps):
    """[(step, micro, rows)] from --dump-batches of an array model: int32
    records step, micro, G, 0, then G sample rows."""
    ints = np.fromfile(path, dtype="<i4")
    out, at = [], 0
    while at < ints.size:
        step, micro, g, zero = (int(v) for v in ints[at:at + 4])
        if zero != 0:
            sys.exit("%s: record at %d is not an array record (T = %d)" % (path, at, zero))
        out.append((step, micro, ints[at + 4:at + 4 + g].astype(np.int64)))
        at += 4 + g
    if [(s, k) for s, k, _ in out] != [(s, 0) for s in range(1, steps + 1)]:
        sys.exit("%s: unexpected records %s" % (path, [(s, k) for s, k, _ in out][:6]))
    return out


def write_data(work):
    """The datasets: {name: (safetensors path, {array name: numpy array})}."""
    from safetensors.numpy import save_file
    rng = np.random.default_rng(0)
    x = rng.standard_normal((SAMPLES, FEATURES)).astype(np.float32)
    w = rng.standard_normal((FEATURES, OUTPUTS)).astype(np.float32)
    reg = {"x": x, "target": (np.tanh(x @ w) + 0.1 * rng.standard_normal((SAMPLES, OUTPUTS)))
           .astype(np.float32)}
    cls = {"x": x, "target": np.argmax(x @ w[:, :CLASSES], axis=1).astype(np.int32)}
    user = {"x": x, "target": np.argmax(x @ rng.standard_normal((FEATURES, 8)), axis=1)
            .astype(np.int64)}
    x6 = x[:, :6].copy()
    user_reg = {"x": x6, "target": (x6 @ rng.standard_normal((6, 3))).astype(np.float32)}
    out = {}
    for name, arrays in (("reg", reg), ("cls", cls), ("user", user), ("user-reg", user_reg)):
        path = os.path.join(work, name + ".safetensors")
        save_file(arrays, path)
        out[name] = (path, arrays)
    npy = os.path.join(work, "reg-npy")
    os.makedirs(npy, exist_ok=True)
    for k, v in reg.items():
        np.save(os.path.join(npy, k + ".npy"), v)
    out["reg-npy"] = (npy, reg)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--user", required=True, help="the user's classifier .py")
    ap.add_argument("--user-regressor", required=True, help="the user's regressor .py")
    ap.add_argument("--mpirun", default="mpirun --allow-run-as-root --oversubscribe")
    ap.add_argument("--runs", default="3:4,3:1")
    ap.add_argument("--rel-tol", type=float, default=gpt.REL_TOL)
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    torch.set_num_threads(1)
    from safetensors.torch import load_file, save_file
    data = write_data(args.work)
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    failures = []
    user = load_entry(args.user)
    user_reg = load_entry(args.user_regressor)

    # The zero-model MLPs and their initial weights (PyTorch's nn.Linear init).
    models = {}
    for name, flags, out in (("reg", [], OUTPUTS), ("cls", ["--loss", "cross-entropy"], CLASSES)):
        mlir = os.path.join(args.work, name + ".mlir")
        gpt.run([os.path.join(args.bin, "zero-model"), "mlp", "--input", str(FEATURES),
                 "--hidden", str(HIDDEN), "--output", str(out), "--batch", str(BATCH),
                 "-o", mlir] + flags)
        torch.manual_seed(len(models))
        weights = os.path.join(args.work, name + ".init.safetensors")
        save_file({k: v.contiguous() for k, v in MLP(out).state_dict().items()}, weights)
        loss = F.mse_loss if name == "reg" else (lambda y, t: F.cross_entropy(y, t.long()))
        models[name] = (mlir, weights, lambda out=out: MLP(out), loss)
    models["user"] = (args.user, None, lambda: user.zero_model()[0],
                      lambda y, t: user.zero_model()[2](y, t.long()))
    models["user-reg"] = (args.user_regressor, None, lambda: user_reg.zero_model()[0],
                          user_reg.zero_model()[2])

    for name, (source, weights, make, loss_fn) in models.items():
        for run in args.runs.split(","):
            stage, world = (int(v) for v in run.split(":"))
            # The regressor's single-rank run reads the .npy directory.
            dname = "reg-npy" if name == "reg" and world == 1 else name
            dpath, arrays = data[dname]
            tag = "%s (%s), stage %d, %d rank%s" % (name, os.path.basename(dpath), stage, world,
                                                    "" if world == 1 else "s")
            exe = os.path.join(args.work, "%s_s%d_n%d" % (name, stage, world))
            gpt.run([os.path.join(args.bin, "zero-compile"), source, "--stage=%d" % stage,
                     "--world-size=%d" % world, "-o", exe])
            if weights is None:  # the .py went through zero-import
                source, weights = exe + ".import.mlir", exe + ".import.safetensors"
            out = lambda what: os.path.join(args.work, "%s.%s.s%d.n%d" % (name, what, stage, world))
            cmd = args.mpirun.split() + ["-np", str(world), exe] if world > 1 else [exe]
            gpt.run(cmd + ["--data", dpath, "--steps", str(gpt.STEPS), "--lr", repr(gpt.LR),
                           "--warmup", "0", "--val-every", "0", "--threads", "1", "--quiet",
                           "--import", weights, "--dump-batches", out("batches"),
                           "--metrics", out("metrics")], env=env)
            records = read_rows(out("batches"), gpt.STEPS)
            global_batch = len(records[0][2])
            want = stream_rows(gpt.STEPS, global_batch, SAMPLES - int(SAMPLES * 0.1))
            got = [int(r) for _, _, rows in records for r in rows]
            if got != want:
                failures.append("%s: the dumped rows are not the sampler's stream" % tag)
            print("%s: %d steps x %d samples, rows as the sampler draws them: %s"
                  % (tag, gpt.STEPS, global_batch, "ok" if got == want else "MISMATCH"))
            batches = [(s, k, torch.from_numpy(arrays["x"][rows]),
                        torch.from_numpy(arrays["target"][rows])) for s, k, rows in records]
            steps_rec, _ = ref.read_metrics(out("metrics"))
            model = make()
            model.load_state_dict(load_file(weights))
            gpt.pytorch_run(model, lambda m, x, t: loss_fn(m(x), t), batches, steps_rec,
                            args.rel_tol, failures, tag)
    if failures:
        print("\nFAILED:\n  " + "\n  ".join(failures))
        sys.exit(1)
    print("\ntrain_arrays: PyTorch agrees within %g (relative)" % args.rel_tol)


if __name__ == "__main__":
    main()
