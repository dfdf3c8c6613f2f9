#!/usr/bin/env python3
"""Same numbers with tensor parallelism (zero-tensor-parallel).

Compiles one model (f32, global batch 8: the GPT of 2 layers, 4 heads,
width 64; or a Llama 3 / Qwen3 (QK-norm, tied embeddings) of 2 layers, 4
query and 2 key/value heads, width 64, FFN 128) for the mesh N_d x M =
1 x 1 (the reference), 1 x 2 and 2 x 2 (each data rank takes
1/N_d of the batch; the M ranks of a tensor group share it), at the given
ZeRO stages, trains each for a few steps on real text, and checks that every
run's per-step loss equals the 1 x 1 run within 1e-5 relative, and that
the bytes the runtime counted in every step equal zero-report's plan of
the step as lowered: per collective kind over both axes (the plan compiled
into the program), and per mesh axis — the tensor axis's zero.tp_g /
zero.tp_f all-reduces (zrt_comm_axis_bytes) and the data axis's rest.
Exits non-zero with a message on the first mismatch.

With --target cuda the meshes other than 1 x 1 are compiled for the CUDA
backend (zero-compile --target=cuda --emit=cpp) and built with the CPU
emulator's compiler command (zrt-emulated-cxx, runtime/cuda/emulator), so
the same checks hold the CUDA backend's per-axis NCCL communicators and
byte counters to the CPU build's 1 x 1 losses and to the plan; the
emulator's stream mode (ZRT_EMU_STREAMS) is passed on to every rank.
"""
import argparse
import json
import os
import sys

from e2e_runs import records, run

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


def traffic_mismatches(config, steps, report):
    """Where the measured bytes of a step differ from the plan."""
    plan = config["plan"]
    micro = report["comm_bytes_per_micro_batch_by_axis"]
    opt = report["comm_bytes_per_optimizer_step_by_axis"]
    out = []
    for s in steps:
        for phase, total, tensor, planned_total, by_axis in [
                ("forward_backward", s["comm_bytes_micro_measured"],
                 s["comm_bytes_tensor_micro_measured"], plan["comm_bytes_micro"], micro),
                ("optimizer_step", s["comm_bytes_step_measured"],
                 s["comm_bytes_tensor_step_measured"], plan["comm_bytes_step"], opt)]:
            data = {k: total[k] - tensor[k] for k in total}
            if total != planned_total or tensor != by_axis["tensor"] or \
               data != by_axis["data"]:
                out.append("step %d %s: measured %s (tensor axis %s) != plan %s "
                           "(by axis %s)" % (s["step"], phase, total, tensor,
                                             planned_total, by_axis))
    return out


def check_axis_split(path, steps, m):
    """The per-axis split of each step's bytes sums to its total, and only a
    mesh with M > 1 sends on the tensor axis."""
    for s in steps:
        axis = s["comm_bytes_axis"]
        for k, v in s["comm_bytes"].items():
            if axis["data"][k] + axis["tensor"][k] != v:
                sys.exit("%s step %d: %s bytes per axis %s do not sum to %d"
                         % (path, s["step"], k, axis, v))
        if (sum(axis["tensor"].values()) > 0) != (m > 1):
            sys.exit("%s step %d: tensor-axis bytes %s with M = %d"
                     % (path, s["step"], axis["tensor"], m))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--stages", default="0,3")
    ap.add_argument("--model", default="gpt", choices=["gpt", "llama", "qwen3"])
    ap.add_argument("--meshes", default="1x2,2x2",
                    help="N_dxM meshes to compare with 1x1")
    ap.add_argument("--tp-flags", default="",
                    help="zero-compile flags of the M > 1 runs only (e.g. "
                         "P_a: --checkpoint=block --checkpoint-partition="
                         "tensor); the 1x1 reference is compiled without")
    ap.add_argument("--target", default="cpu", choices=["cpu", "cuda"],
                    help="backend of the runs other than the 1x1 reference "
                         "(always the CPU build)")
    ap.add_argument("--emulated-cxx", default=None,
                    help="compiler command for --target cuda (default: "
                         "zrt-emulated-cxx next to zero-compile)")
    args = ap.parse_args()
    emulated_cxx = args.emulated_cxx or os.path.join(args.bin, "zrt-emulated-cxx")
    meshes = [(1, 1)] + [tuple(int(x) for x in m.split("x"))
                         for m in args.meshes.split(",")]
    os.makedirs(args.work, exist_ok=True)
    mpirun = ["mpirun", "--allow-run-as-root", "--oversubscribe", "--bind-to", "none"]
    if "ZRT_EMU_STREAMS" in os.environ:
        mpirun += ["-x", "ZRT_EMU_STREAMS"]
    zc = os.path.join(args.bin, "zero-compile")
    # Open MPI's session directory under this test's own TMPDIR: lit gives
    # every test of a run the same TMPDIR, and two mpiruns starting at once
    # there can race on it ("mkdir ... ompi.<host>.0: File exists").
    mpi_env = dict(os.environ, TMPDIR=os.path.join(args.work, "tmp"))
    os.makedirs(mpi_env["TMPDIR"], exist_ok=True)
    runs = {}
    for nd, m in meshes:
        model = os.path.join(args.work, "%s_b%d.mlir" % (args.model, 8 // nd))
        run([os.path.join(args.bin, "zero-model")] + MODELS[args.model] +
            ["--batch", str(8 // nd), "-o", model])
        stages = [int(s) for s in args.stages.split(",")]
        # The reference is N = 1 at stage 0, whatever stages are compared.
        for stage in [0] if (nd, m) == (1, 1) else stages:
            exe = os.path.join(args.work, "%s_s%d_%dx%d" % (args.model, stage, nd, m))
            compile_cmd = [zc, model, "--stage=%d" % stage,
                           "--world-size=%d" % (nd * m), "--tensor-parallel=%d" % m]
            if m > 1:
                compile_cmd += args.tp_flags.split()
            if args.target == "cuda" and (nd, m) != (1, 1):
                run(compile_cmd + ["--target=cuda", "--emit=cpp", "-o", exe + ".cpp"])
                run([emulated_cxx, exe + ".cpp", "-o", exe])
            else:
                run(compile_cmd + ["-o", exe])
            # zero-report of the step exactly as it is lowered.
            run(compile_cmd + ["--emit=mlir", "-o", exe + ".mlir"])
            report = json.loads(run([os.path.join(args.bin, "zero-opt"), exe + ".mlir",
                                     "-zero-report=quiet json=-", "-o", os.devnull]))
            metrics = exe + ".jsonl"
            cmd = [exe, "--data", args.data, "--steps", str(args.steps), "--lr", "3e-3",
                   "--warmup", "2", "--seed", "7", "--val-every", "0",
                   "--sample-tokens", "0", "--threads", "1", "--quiet",
                   "--metrics", metrics]
            run((mpirun + ["-np", str(nd * m)] if nd * m > 1 else []) + cmd,
                env=mpi_env)
            config, steps = records(metrics)
            check_axis_split(metrics, steps, m)
            runs[(stage, nd, m)] = ([s["loss"] for s in steps], config, steps, report)
    ref = runs[(0, 1, 1)][0]
    failures = []
    for (stage, nd, m), (ls, config, steps, report) in sorted(runs.items()):
        worst = max(abs(a - b) / abs(a) for a, b in zip(ref, ls))
        if len(ls) != len(ref) or worst > REL_TOL:
            failures.append("stage %d %dx%d: losses %s vs %s (worst rel %.2e)"
                            % (stage, nd, m, ls, ref, worst))
        failures += ["stage %d %dx%d %s" % (stage, nd, m, e)
                     for e in traffic_mismatches(config, steps, report)]
        tensor = report["comm_bytes_per_step_by_axis"]["tensor"]
        data = sum(report["comm_bytes_per_step_by_axis"]["data"].values())
        gathers = (", of it all_gather %d B" % tensor["all_gather"]
                   if tensor["all_gather"] else "")
        print("%sstage %d N_d=%d M=%d: first loss %.6f last loss %.6f worst rel %.1e, "
              "per step data axis %d B, tensor axis %d B%s (measured = plan)"
              % ("cuda " if args.target == "cuda" and (nd, m) != (1, 1) else "",
                 stage, nd, m, ls[0], ls[-1], worst, data, sum(tensor.values()),
                 gathers))
    if failures:
        sys.exit("\n".join(failures))
    print("all %d runs agree with N=1 within %g and with the per-axis plan"
          % (len(runs), REL_TOL))


if __name__ == "__main__":
    main()
