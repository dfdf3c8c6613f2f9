#!/usr/bin/env python3
"""Same numbers at every ZeRO stage and world size.

Compiles one tiny GPT (f32) for stages 0-3 x world sizes 1, 2, 4 with the
same global batch (each of N ranks takes 1/N of it), trains each for a few
steps on real text, and checks that
  * every run's per-step loss equals the stage-0, N=1 run within 1e-5
    relative (also with gradient accumulation),
  * the bytes the runtime counted per collective kind in forward_backward
    and optimizer_step equal zero-report's plan compiled into the program,
  * the model-state bytes the runtime allocated per category equal the plan,
  * the peak the runtime measures (zrt_memory_peak_total_bytes: every arena,
    model states + activations + temporaries) equals zero-report's planned
    peak of the same step (zero-buffer-assign's arenas) byte for byte, and
    the arena sizes compiled into the program (zrt_plan_desc::arena_bytes),
  * no step makes a heap allocation in the runtime (zrt_heap_allocations).
Exits non-zero with a message on the first mismatch.
"""
import argparse
import json
import os
import subprocess
import sys

REL_TOL = 1e-5


def run(cmd, **kw):
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, **kw)
    if proc.returncode != 0:
        sys.exit("command failed (%d): %s\n%s" % (proc.returncode, " ".join(cmd),
                                                  proc.stdout[-4000:]))
    return proc.stdout


def read_metrics(path):
    config, steps = None, []
    with open(path) as f:
        for line in f:
            rec = json.loads(line)
            if rec.get("type") == "config":
                config = rec
            elif rec.get("type") == "step":
                steps.append(rec)
    if config is None or not steps:
        sys.exit("%s: no config or step records" % path)
    return config, steps


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True, help="directory with zero-model, zero-compile")
    ap.add_argument("--data", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--grad-accum", type=int, default=1)
    ap.add_argument("--global-batch", type=int, default=8)
    ap.add_argument("--model", default="gpt", choices=["gpt", "llama", "qwen3"],
                    help="gpt: 2 layers, width 32; llama: 2 layers, dim 64, 4 heads, "
                         "2 KV heads, llama3 RoPE scaling, untied head; qwen3: QK-norm, "
                         "head_dim 32, tied head")
    ap.add_argument("--stages", default="0,1,2,3")
    ap.add_argument("--world-sizes", default="1,2,4")
    ap.add_argument("--compile-flags", default="",
                    help="extra zero-compile flags, e.g. '--prefetch=1 --bucket-bytes=4096'")
    ap.add_argument("--bitwise-against", default=None,
                    help="work dir of another run whose losses must be bit-identical")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    mpirun = ["mpirun", "--allow-run-as-root", "--oversubscribe", "--bind-to", "none"]

    runs = {}
    for n in [int(x) for x in args.world_sizes.split(",")]:
        model = os.path.join(args.work, "gpt_n%d.mlir" % n)
        flags = {
            "gpt": ["gpt", "--n-layer", "2", "--n-head", "2", "--n-embd", "32"],
            "llama": ["llama", "--n-layers", "2", "--dim", "64", "--n-heads", "4",
                      "--n-kv-heads", "2", "--head-dim", "16", "--ffn-dim", "128",
                      "--rope-theta", "10000", "--rope-scaling", "llama3:8,1,4,32",
                      "--tie-embeddings=false"],
            "qwen3": ["qwen3", "--n-layers", "2", "--dim", "64", "--n-heads", "4",
                      "--n-kv-heads", "2", "--head-dim", "32", "--ffn-dim", "128",
                      "--qk-norm", "--tie-embeddings", "--rope-scaling", "none"],
        }[args.model]
        run([os.path.join(args.bin, "zero-model")] + flags +
            ["--vocab", "256", "--seq", "32", "--batch", str(args.global_batch // n),
             "-o", model])
        for stage in [int(x) for x in args.stages.split(",")]:
            exe = os.path.join(args.work, "train_s%d_n%d" % (stage, n))
            compile_cmd = [os.path.join(args.bin, "zero-compile"), model,
                           "--stage=%d" % stage, "--world-size=%d" % n] \
                + args.compile_flags.split()
            run(compile_cmd + ["--emit=exe", "-o", exe])
            # zero-report of the step exactly as it is lowered.
            run(compile_cmd + ["--emit=mlir", "-o", exe + ".mlir"])
            report = json.loads(run([os.path.join(args.bin, "zero-opt"), exe + ".mlir",
                                     "-zero-report=quiet json=-", "-o", os.devnull]))
            metrics = exe + ".k%d.jsonl" % args.grad_accum
            cmd = [exe, "--data", args.data, "--steps", str(args.steps),
                   "--grad-accum", str(args.grad_accum), "--lr", "3e-3",
                   "--warmup", "2", "--seed", "7", "--val-every", "0",
                   "--sample-tokens", "0", "--threads", "1", "--quiet",
                   "--metrics", metrics]
            run((mpirun + ["-np", str(n)] if n > 1 else []) + cmd)
            runs[(stage, n)] = read_metrics(metrics) + (report,)

    ref_config, ref_steps, _ = runs[min(runs)]
    failures = []
    for (stage, n), (config, steps, report) in sorted(runs.items()):
        for a, b in zip(ref_steps, steps):
            rel = abs(a["loss"] - b["loss"]) / max(abs(a["loss"]), 1e-30)
            if rel > REL_TOL:
                failures.append("stage %d N=%d step %d: loss %.9g vs %.9g (rel %.2e)"
                                % (stage, n, b["step"], b["loss"], a["loss"], rel))
                break
        plan = config["plan"]
        if config["measured_state_bytes"] != plan["state_bytes"]:
            failures.append("stage %d N=%d: measured state bytes %s != plan %s"
                            % (stage, n, config["measured_state_bytes"], plan["state_bytes"]))
        for s in steps:
            if s["comm_bytes_micro_measured"] != plan["comm_bytes_micro"] or \
               s["comm_bytes_step_measured"] != plan["comm_bytes_step"]:
                failures.append("stage %d N=%d step %d: measured traffic %s/%s != plan %s/%s"
                                % (stage, n, s["step"], s["comm_bytes_micro_measured"],
                                   s["comm_bytes_step_measured"], plan["comm_bytes_micro"],
                                   plan["comm_bytes_step"]))
                break
        peak = max(s["peak_bytes"] for s in steps)
        planned = report.get("planned_peak_bytes")
        if peak != planned or sum(plan["arena_bytes"]) != planned:
            failures.append("stage %d N=%d: measured peak %d != zero-report's planned "
                            "peak %s (program's arenas %s)"
                            % (stage, n, peak, planned, plan["arena_bytes"]))
        allocs = [s["allocations"] for s in steps]
        if any(allocs):
            failures.append("stage %d N=%d: heap allocations in steps: %s"
                            % (stage, n, allocs))
        print("stage %d N=%d: first loss %.6f last loss %.6f state bytes %s "
              "peak %d = planned %s (activations %s, temporaries %s)"
              % (stage, n, steps[0]["loss"], steps[-1]["loss"],
                 config["measured_state_bytes"], peak, planned,
                 report.get("planned_activation_arena_bytes"),
                 report.get("planned_temporary_arena_bytes")))
    if args.bitwise_against:
        for (stage, n), (config, steps, _) in sorted(runs.items()):
            other = os.path.join(args.bitwise_against, "train_s%d_n%d.k%d.jsonl"
                                 % (stage, n, args.grad_accum))
            _, other_steps = read_metrics(other)
            if [s["loss"] for s in steps] != [s["loss"] for s in other_steps]:
                failures.append("stage %d N=%d: losses are not bit-identical to %s"
                                % (stage, n, other))
        print("losses bit-identical to %s" % args.bitwise_against)
    if failures:
        sys.exit("FAILED:\n  " + "\n  ".join(failures))
    print("all %d runs agree with stage 0, N=1 within %g and with the plan "
          "(traffic, state bytes, peak memory, no allocations in steps)" % (len(runs), REL_TOL))


if __name__ == "__main__":
    main()
