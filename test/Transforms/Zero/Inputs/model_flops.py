"""The model FLOPs of one micro-batch by the textbook formula, against
zero-report's JSON (model_flops_per_micro_batch).

Usage: model_flops.py REPORT.json gpt  B T L C V
       model_flops.py REPORT.json llama B T L C H KV D F V

Forward FLOPs F (2 per multiply-add of every matrix product; attention over
the whole T x T square, as PaLM appendix B and torchtitan count it):
  gpt:   L (24 B T C^2 + 4 B T^2 C) + 2 B T C V           (qkv, proj, fc, fc2)
  llama: L (2 B T C (2 H D + 2 KV D) + 6 B T C F + 4 B H T^2 D) + 2 B T C V
Model FLOPs = 3 F. Prints both; exits 1 unless they are equal.
"""
import json
import sys


def main():
    report, family, *dims = sys.argv[1:]
    dims = [int(x) for x in dims]
    got = json.load(open(report))["model_flops_per_micro_batch"]
    if family == "gpt":
        b, t, layers, c, v = dims
        fwd = layers * (24 * b * t * c * c + 4 * b * t * t * c) + 2 * b * t * c * v
    else:
        b, t, layers, c, h, kv, d, f, v = dims
        fwd = layers * (2 * b * t * c * (2 * h * d + 2 * kv * d) + 6 * b * t * c * f
                        + 4 * b * h * t * t * d) + 2 * b * t * c * v
    want = 3 * fwd
    print(f"model FLOPs per micro-batch: zero-report {got:.0f}, formula {want}")
    if got != want:
        sys.exit("model_flops: they differ")
    print("model_flops: equal")


if __name__ == "__main__":
    main()
