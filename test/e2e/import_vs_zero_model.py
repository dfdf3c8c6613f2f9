#!/usr/bin/env python3
"""zero-import's GPT-2 and zero-model's GPT with the same shapes train to the
same losses from the same weights (run with the project venv's python).

zero-model gpt -> zero-compile -> `--steps 0 --export` (its initial
weights); those weights renamed to Hugging Face's GPT-2 names with the
Conv1D weights transposed ([out, in] -> [in, out]); zero-import gpt2 with
the same config -> zero-compile; both programs train --steps on the same
data (the driver's batches depend only on the seed and the shapes), the
imported one from the converted weights (--import): every step's loss and
the validation loss must agree within --rel-tol (relative).
"""
import argparse
import json
import os
import subprocess
import sys

from safetensors.torch import load_file, save_file

N_LAYER, N_HEAD, N_EMBD, VOCAB, SEQ, BATCH, STEPS = 2, 2, 32, 256, 32, 4, 10
CONV1D = ("attn.c_attn.weight", "attn.c_proj.weight", "mlp.c_fc.weight", "mlp.c_proj.weight")


def run(cmd):
    print("$ " + " ".join(cmd), flush=True)
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, env=env)
    if proc.returncode != 0:
        sys.exit("command failed (%d): %s\n%s" % (proc.returncode, " ".join(cmd), proc.stdout[-4000:]))


def hf_name(name):
    """zero-model's (nanoGPT's) parameter name -> Hugging Face GPT-2's."""
    if name in ("wte", "wpe"):
        return "transformer.%s.weight" % name
    if name.startswith("h"):
        layer, rest = name[1:].split(".", 1)
        return "transformer.h.%s.%s" % (layer, rest)
    return "transformer." + name


def losses(path):
    steps, val = {}, None
    with open(path) as f:
        for line in f:
            rec = json.loads(line)
            if rec["type"] == "step":
                steps[rec["step"]] = rec["loss"]
            elif rec["type"] == "val":
                val = rec["val_loss"]
    return steps, val


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--rel-tol", type=float, default=1e-6)
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    w = lambda n: os.path.join(args.work, n)
    b = lambda n: os.path.join(args.bin, n)
    run([b("zero-model"), "gpt", "--n-layer", str(N_LAYER), "--n-head", str(N_HEAD),
         "--n-embd", str(N_EMBD), "--vocab", str(VOCAB), "--seq", str(SEQ),
         "--batch", str(BATCH), "-o", w("zm.mlir")])
    run([b("zero-import"), "gpt2", "--set", "n_layer=%d" % N_LAYER, "--set", "n_head=%d" % N_HEAD,
         "--set", "n_embd=%d" % N_EMBD, "--set", "vocab_size=%d" % VOCAB,
         "--set", "n_positions=%d" % SEQ, "--batch", str(BATCH), "-o", w("hf.mlir")])
    for m in ("zm", "hf"):
        run([b("zero-compile"), w(m + ".mlir"), "--stage=0", "--world-size=1", "-o", w(m)])
    common = ["--data", args.data, "--sample-tokens", "0", "--threads", "1", "--quiet"]
    run([w("zm"), "--steps", "0", "--val-every", "0", "--export", w("zm.init")] + common)
    converted = {}
    for name, t in load_file(w("zm.init")).items():
        converted[hf_name(name)] = t.t().contiguous() if name.endswith(CONV1D) else t
    save_file(converted, w("hf.init"))
    train = ["--steps", str(STEPS), "--val-every", str(STEPS), "--val-batches", "2"] + common
    run([w("zm"), "--metrics", w("zm.jsonl")] + train)
    run([w("hf"), "--metrics", w("hf.jsonl"), "--import", w("hf.init")] + train)
    (zs, zv), (hs, hv) = losses(w("zm.jsonl")), losses(w("hf.jsonl"))
    failures = []
    print("%-8s %14s %14s %10s" % ("step", "zero-model", "zero-import", "rel"))
    rows = [("step %d" % s, zs[s], hs.get(s)) for s in sorted(zs)] + [("val", zv, hv)]
    for label, z, h in rows:
        rel = abs(z - h) / abs(z) if h is not None else float("inf")
        ok = rel <= args.rel_tol
        print("%-8s %14.8f %14.8f %10.2e %s" % (label, z, h if h is not None else float("nan"),
                                                 rel, "ok" if ok else "MISMATCH"))
        if not ok:
            failures.append(label)
    if len(zs) != STEPS or sorted(zs) != sorted(hs):
        failures.append("step records %s vs %s" % (sorted(zs), sorted(hs)))
    if failures:
        sys.exit("FAILED: " + ", ".join(failures))
    print("import_vs_zero_model: equal within %g (relative)" % args.rel_tol)


if __name__ == "__main__":
    main()
