#!/usr/bin/env python3
"""Same numbers with tensor parallelism (zero-tensor-parallel).

Compiles one model (f32, global batch 8: the GPT of 2 layers, 4 heads,
width 64; or a Llama 3 / Qwen3 (QK-norm, tied embeddings) of 2 layers, 4
query and 2 key/value heads, width 64, FFN 128) for the mesh N_d x M = 1 x 1 (the reference), 1 x 2 and 2 x 2 (each data rank takes
1/N_d of the batch; the M ranks of a tensor group share it), at the given
ZeRO stages, trains each for a few steps on real text, and checks that every
run's per-step loss equals the 1 x 1 run within 1e-5 relative.
Exits non-zero with a message on the first mismatch.
"""
import argparse
import json
import os
import subprocess
import sys

REL_TOL = 1e-5

MODELS = {
    "gpt": ["gpt", "--n-layer", "2", "--n-head", "4", "--n-embd", "64",
            "--vocab", "256", "--seq", "32"],
    "llama": ["llama", "--dim", "64", "--n-layers", "2", "--n-heads", "4",
              "--n-kv-heads", "2", "--head-dim", "16", "--ffn-dim", "128",
              "--vocab", "256", "--seq", "32"],
    "qwen3": ["qwen3", "--dim", "64", "--n-layers", "2", "--n-heads", "4",
              "--n-kv-heads", "2", "--head-dim", "16", "--ffn-dim", "128",
              "--vocab", "256", "--seq", "32", "--qk-norm", "--tie-embeddings",
              "--rope-scaling", "none"],
}


def run(cmd):
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True)
    if proc.returncode != 0:
        sys.exit("command failed (%d): %s\n%s" % (proc.returncode, " ".join(cmd),
                                                  proc.stdout[-4000:]))
    return proc.stdout


def losses(path, m):
    steps = [json.loads(l) for l in open(path)]
    steps = [s for s in steps if s.get("type") == "step"]
    if not steps:
        sys.exit("%s: no step records" % path)
    for s in steps:
        # The per-axis split of the step's bytes sums to its total, and only
        # a mesh with M > 1 sends on the tensor axis.
        axis = s["comm_bytes_axis"]
        for k, v in s["comm_bytes"].items():
            if axis["data"][k] + axis["tensor"][k] != v:
                sys.exit("%s step %d: %s bytes per axis %s do not sum to %d"
                         % (path, s["step"], k, axis, v))
        if (sum(axis["tensor"].values()) > 0) != (m > 1):
            sys.exit("%s step %d: tensor-axis bytes %s with M = %d"
                     % (path, s["step"], axis["tensor"], m))
    return [s["loss"] for s in steps]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--stages", default="0,3")
    ap.add_argument("--model", default="gpt", choices=["gpt", "llama", "qwen3"])
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    mpirun = ["mpirun", "--allow-run-as-root", "--oversubscribe", "--bind-to", "none"]
    zc = os.path.join(args.bin, "zero-compile")
    runs = {}
    for nd, m in [(1, 1), (1, 2), (2, 2)]:
        model = os.path.join(args.work, "%s_b%d.mlir" % (args.model, 8 // nd))
        run([os.path.join(args.bin, "zero-model")] + MODELS[args.model] +
            ["--batch", str(8 // nd), "-o", model])
        for stage in [int(s) for s in args.stages.split(",")]:
            if (nd, m) == (1, 1) and stage != 0:
                continue
            exe = os.path.join(args.work, "%s_s%d_%dx%d" % (args.model, stage, nd, m))
            run([zc, model, "--stage=%d" % stage, "--world-size=%d" % (nd * m),
                 "--tensor-parallel=%d" % m, "-o", exe])
            metrics = exe + ".jsonl"
            cmd = [exe, "--data", args.data, "--steps", str(args.steps), "--lr", "3e-3",
                   "--warmup", "2", "--seed", "7", "--val-every", "0",
                   "--sample-tokens", "0", "--threads", "1", "--quiet",
                   "--metrics", metrics]
            out = run((mpirun + ["-np", str(nd * m)] if nd * m > 1 else []) + cmd)
            runs[(stage, nd, m)] = (losses(metrics, m), out)
    ref, _ = runs[(0, 1, 1)]
    failures = []
    for (stage, nd, m), (ls, out) in sorted(runs.items()):
        worst = max(abs(a - b) / abs(a) for a, b in zip(ref, ls))
        if len(ls) != len(ref) or worst > REL_TOL:
            failures.append("stage %d %dx%d: losses %s vs %s (worst rel %.2e)"
                            % (stage, nd, m, ls, ref, worst))
        print("stage %d N_d=%d M=%d: first loss %.6f last loss %.6f worst rel %.1e"
              % (stage, nd, m, ls[0], ls[-1], worst))
    if failures:
        sys.exit("\n".join(failures))
    print("all %d runs agree with N=1 within %g" % (len(runs), REL_TOL))


if __name__ == "__main__":
    main()
