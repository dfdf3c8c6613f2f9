"""DeepSpeedCPUAdam against Zero's zrt_adamw_step on the same flat shard.

DeepSpeed's CPU optimizer (deepspeed.ops.adam.DeepSpeedCPUAdam, the ZeRO-Offload
step: AVX kernels over the fp32 master partition, OpenMP threads) is timed on
a flat fp32 parameter of each element count that bench/membw.cpp timed Zero's
AdamW on, with the same threads (OMP_NUM_THREADS) and the same timing rule
(one untimed step, then the fastest of `reps`). Both read param, m, v, grad
and write param, m, v: 28 bytes per element.

The correctness gate: both optimizers run membw's gate problem (65,536
elements, 5 AdamW steps, lr 1e-3, betas (0.9, 0.999), eps 1e-8, weight decay
0.1; the inputs are exact multiples of 2^-8); the parameters must agree within
0.1 % of how far the steps moved them, or nothing is reported and the script
exits 1.

Usage (bench/memory-bandwidth runs it):
  cpu_adam_peer.py --record membw.jsonl --gate zero_gate.f32
Exit: 0 reported, 1 gate failed, 2 bad input or DeepSpeed unavailable.
"""

import argparse
import json
import sys
import time

GATE_N = 65536
GATE_STEPS = 5
LR, BETAS, EPS, WEIGHT_DECAY = 1e-3, (0.9, 0.999), 1e-8, 0.1


def fail(message, code=2):
    print(f"cpu_adam_peer: {message}", file=sys.stderr)
    sys.exit(code)


def make_optimizer(torch, adam, param):
    return adam([param], lr=LR, betas=BETAS, eps=EPS,
                weight_decay=WEIGHT_DECAY, adamw_mode=True,
                bias_correction=True)


def gate(torch, adam, zero_path):
    """Largest |Zero - DeepSpeed| over the largest |Zero - initial|."""
    i = torch.arange(GATE_N, dtype=torch.int64)
    initial = 1.0 + (i % 64).to(torch.float32) / 128.0
    param = torch.nn.Parameter(initial.clone())
    param.grad = ((37 * i) % 256 - 128).to(torch.float32) / 256.0
    opt = make_optimizer(torch, adam, param)
    for _ in range(GATE_STEPS):
        opt.step()
    try:
        with open(zero_path, "rb") as f:
            raw = f.read()
    except OSError as e:
        fail(f"cannot read {zero_path}: {e.strerror}")
    if len(raw) != 4 * GATE_N:
        fail(f"{zero_path} holds {len(raw)} bytes, not {4 * GATE_N}")
    zero = torch.frombuffer(bytearray(raw), dtype=torch.float32)
    moved = (zero - initial).abs().max().item()
    diff = (zero - param.detach()).abs().max().item()
    return diff, moved


def time_step(torch, adam, n, reps):
    param = torch.nn.Parameter(torch.zeros(n))
    param.grad = torch.full((n,), 0.5)
    opt = make_optimizer(torch, adam, param)
    opt.step()
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        opt.step()
        best = min(best, time.perf_counter() - t0)
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--record", required=True,
                    help="membw --record output (one JSON line per n)")
    ap.add_argument("--gate", required=True,
                    help="membw --gate output (raw f32 parameters)")
    args = ap.parse_args()
    try:
        with open(args.record) as f:
            rows = [json.loads(line) for line in f if line.strip()]
    except (OSError, ValueError) as e:
        fail(f"cannot read {args.record}: {e}")
    try:
        import torch
        from deepspeed.ops.adam import DeepSpeedCPUAdam
    except Exception as e:  # ImportError, or DeepSpeed's op build failing
        fail(f"DeepSpeedCPUAdam is unavailable: {type(e).__name__}: {e}")

    diff, moved = gate(torch, DeepSpeedCPUAdam, args.gate)
    print(f"gate: {GATE_STEPS} steps on {GATE_N} elements moved the parameters "
          f"by up to {moved:.3g}; |Zero - DeepSpeed| <= {diff:.3g}", flush=True)
    if not moved > 0 or diff > 1e-3 * moved:
        fail("the two optimizers disagree (more than 0.1 % of the update): "
             "not reporting", 1)

    print(f"{'n':>12} {'threads':>7} {'zero ms':>9} {'ds ms':>9} "
          f"{'zero GB/s':>10} {'ds GB/s':>9} {'zero/ds':>8} "
          f"{'ds x triad':>10}")
    for row in rows:
        n, threads = int(row["n"]), int(row["threads"])
        if threads != torch.get_num_threads():
            fail(f"{args.record} was timed on {threads} threads, this process "
                 f"has {torch.get_num_threads()} (run both with the same "
                 "OMP_NUM_THREADS)")
        ds = time_step(torch, DeepSpeedCPUAdam, n, int(row["reps"]))
        zero = float(row["adamw_seconds"])
        gb = 28e-9 * n
        print(f"{n:>12} {threads:>7} {1e3 * zero:>9.3f} {1e3 * ds:>9.3f} "
              f"{gb / zero:>10.1f} {gb / ds:>9.1f} {ds / zero:>8.2f} "
              f"{gb / ds / float(row['triad_gbs']):>10.2f}")


if __name__ == "__main__":
    main()
