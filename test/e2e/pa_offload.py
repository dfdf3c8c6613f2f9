#!/usr/bin/env python3
"""P_a+cpu on the CUDA emulator: the checkpoint slices leave the device.

Compiles one GPT (2 layers, 4 heads, width 64, vocab 256, seq 32, f32,
batch 8) for the mesh (N_d, M) = (1, 2) with block checkpointing and P_a
(--checkpoint=block --checkpoint-partition=tensor) for the CUDA backend,
once as it is and once with --checkpoint-offload=host, builds both with
the CPU emulator's compiler command (zrt-emulated-cxx) and trains each for
a few steps on 2 ranks. Checks, exiting non-zero with a message on the
first mismatch:

* the per-step losses of the two runs are bit-identical;
* the activation arena the runtime allocated shrinks by exactly the P_a
  slices' bytes, and the host-slot bytes agree three ways: zero-report's
  `host_slot_bytes`, the plan's `zero.host_slot_bytes` (zero-buffer-assign)
  and the pinned block the runtime allocated (`host_slot_bytes` of the
  config record); zero-report's activation arena without offload is the
  run without offload's;
* the same program with its copy-back waits (zrt_fetch_wait) taken out of
  the C++ trains to other losses: the first check would catch a missing
  wait (run the emulator's streams late, ZRT_EMU_STREAMS=late, so that a
  copy runs only when compute waits for it).

Prints one line per run and the OK line only after every check held.
"""
import argparse
import json
import os
import re
import sys

from e2e_runs import records, run

MODEL = ["gpt", "--n-layer", "2", "--n-head", "4", "--n-embd", "64",
         "--vocab", "256", "--seq", "32", "--batch", "8"]
PA = ["--world-size=2", "--tensor-parallel=2", "--checkpoint=block",
      "--checkpoint-partition=tensor", "--target=cuda"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--steps", type=int, default=6)
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    zc = os.path.join(args.bin, "zero-compile")
    cxx = os.path.join(args.bin, "zrt-emulated-cxx")
    model = os.path.join(args.work, "gpt.mlir")
    run([os.path.join(args.bin, "zero-model")] + MODEL + ["-o", model])
    mpirun = ["mpirun", "--allow-run-as-root", "--oversubscribe",
              "--bind-to", "none", "-np", "2"]
    if "ZRT_EMU_STREAMS" in os.environ:
        mpirun += ["-x", "ZRT_EMU_STREAMS"]
    # Open MPI's session directory under this test's own TMPDIR (as
    # tensor_parallel.py).
    env = dict(os.environ, TMPDIR=os.path.join(args.work, "tmp"))
    os.makedirs(env["TMPDIR"], exist_ok=True)

    def train(name, cpp):
        exe = os.path.join(args.work, name)
        run([cxx, cpp, "-o", exe])
        metrics = exe + ".jsonl"
        run(mpirun + [exe, "--data", args.data, "--steps", str(args.steps),
                      "--lr", "3e-3", "--warmup", "2", "--seed", "7",
                      "--val-every", "0", "--sample-tokens", "0",
                      "--threads", "1", "--quiet", "--metrics", metrics], env=env)
        config, steps = records(metrics)
        return config, [s["loss"] for s in steps]

    runs = {}
    for name, flags in [("kept", []), ("offload", ["--checkpoint-offload=host"])]:
        base = os.path.join(args.work, name)
        run([zc, model] + PA + flags + ["--emit=cpp", "-o", base + ".cpp"])
        run([zc, model] + PA + flags + ["--emit=mlir", "-o", base + ".mlir"])
        report = json.loads(run([os.path.join(args.bin, "zero-opt"), base + ".mlir",
                                 "-zero-report=quiet json=-", "-o", os.devnull]))
        m = re.search(r"zero\.host_slot_bytes = (\d+)", open(base + ".mlir").read())
        plan_host = int(m.group(1)) if m else 0
        config, losses = train(name, base + ".cpp")
        runs[name] = (config, losses, report, plan_host)
        print("%s: losses %s, activation arena %d B, host slots %d B (report %d, "
              "plan %d)" % (name, " ".join("%.6f" % l for l in losses),
                            config["arena_bytes"][4],
                            config.get("host_slot_bytes", 0),
                            report["host_slot_bytes"], plan_host))

    kept, offload = runs["kept"], runs["offload"]
    failures = []
    if kept[1] != offload[1]:
        failures.append("losses differ: %s without offload, %s with" %
                        (kept[1], offload[1]))
    slices = offload[2]["checkpoint_slice_bytes"]
    host = offload[0].get("host_slot_bytes", 0)
    shrink = kept[0]["arena_bytes"][4] - offload[0]["arena_bytes"][4]
    if not slices or shrink != slices:
        failures.append("the activation arena shrinks by %d B, not by the %d B "
                        "of the P_a slices" % (shrink, slices))
    if not host or not (host == offload[2]["host_slot_bytes"] == offload[3] == slices):
        failures.append("host-slot bytes: runtime %d, report %d, plan %d, "
                        "slices %d" % (host, offload[2]["host_slot_bytes"],
                                       offload[3], slices))
    if kept[2]["host_slot_bytes"] or kept[3] or "host_slot_bytes" in kept[0]:
        failures.append("the run without offload has host slots")
    without = offload[2].get("planned_activation_arena_bytes_without_offload")
    if without != kept[0]["arena_bytes"][4]:
        failures.append("zero-report's activation arena without offload %s != "
                        "the run without offload's %d" %
                        (without, kept[0]["arena_bytes"][4]))
    if failures:
        sys.exit("\n".join(failures))

    # Without its copy-back waits the program reads the fetched slices
    # before the copies land: other losses.
    cpp = open(os.path.join(args.work, "offload.cpp")).read()
    broken, n = re.subn(r"zrt_fetch_wait\((\w+)\)", r"ZRT_OK + 0 * sizeof(\1)", cpp)
    if n == 0:
        sys.exit("offload.cpp calls no zrt_fetch_wait")
    path = os.path.join(args.work, "no_wait.cpp")
    open(path, "w").write(broken)
    _, losses = train("no_wait", path)
    print("without its %d zrt_fetch_wait calls: losses %s" %
          (n, " ".join("%.6f" % l for l in losses)))
    if losses == offload[1]:
        sys.exit("the program without zrt_fetch_wait trains to the same "
                 "losses: the comparison would not catch a missing wait")
    print("OK: P_a+cpu losses bit-identical over %d steps; activation arena "
          "%d -> %d B (-%d B, the P_a slices); host slots %d B (report = plan "
          "= runtime)" % (len(offload[1]), kept[0]["arena_bytes"][4],
                          offload[0]["arena_bytes"][4], shrink, host))


if __name__ == "__main__":
    main()
