"""Checks the MFU fields of a run's --metrics against zero-report's count.

Usage: mfu_check.py METRICS.jsonl REPORT.json GRAD_ACCUM PEAK_TFLOPS

Every step line must hold model_tflops_per_rank = model_flops_per_micro_batch
x GRAD_ACCUM / (ms / 1e3) / 1e12 and mfu = model_tflops_per_rank /
PEAK_TFLOPS (relative 1e-6: the JSON's ten digits). Prints one line.
"""
import json
import sys


def main():
    metrics, report, accum, peak = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
    flops = json.load(open(report))["model_flops_per_micro_batch"]
    n = 0
    for line in open(metrics):
        r = json.loads(line)
        if r.get("type") != "step":
            continue
        want = flops * accum / (r["ms"] / 1e3) / 1e12
        got = r["model_tflops_per_rank"]
        if abs(got - want) > 1e-6 * want:
            sys.exit(f"mfu_check: step {r['step']}: {got} TFLOP/s, expected {want}")
        if abs(r["mfu"] - got / peak) > 1e-6 * got / peak:
            sys.exit(f"mfu_check: step {r['step']}: mfu {r['mfu']}, expected {got / peak}")
        n += 1
    print(f"mfu_check: {n} steps agree with {flops:.0f} model FLOPs per micro-batch")


if __name__ == "__main__":
    main()
