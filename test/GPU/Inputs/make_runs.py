"""Writes a made-up gpu-prepare bundle and gpu-check run directory for
gpu-report.test: two parity runs (one within its tolerance, one not) and
one benchmark run with known numbers."""
import json
import sys

bundle, runs = sys.argv[1:]
manifest = {
    "format": 1, "commit": "test", "data": "data/x.txt", "world_size": 1,
    "parity": [
        {"program": "tiny_f32", "reference": "reference/tiny_f32.jsonl",
         "rtol": 1e-4, "args": ""},
        {"program": "tiny_bf16", "reference": "reference/tiny_bf16.jsonl",
         "rtol": 2e-2, "args": ""},
    ],
    "benchmark": {"model": "m", "batch": 1, "seq": 4, "n_layer": 2,
                  "n_embd": 8, "programs": ["gpt2_s0"], "args": "--steps 4",
                  "skip_steps": 1},
}
json.dump(manifest, open(f"{bundle}/manifest.json", "w"))


def write(path, rows):
    with open(path, "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")


def losses(values):
    return [{"type": "step", "step": i + 1, "loss": v} for i, v in enumerate(values)]


write(f"{bundle}/reference/tiny_f32.jsonl", losses([2.0, 1.5, 1.0]))
write(f"{runs}/tiny_f32.jsonl", losses([2.0001, 1.5, 1.0]))       # 5e-5
write(f"{bundle}/reference/tiny_bf16.jsonl", losses([2.0, 1.5, 1.0]))
write(f"{runs}/tiny_bf16.jsonl", losses([2.0, 1.5, 1.05]))        # 5e-2
# A diverged run: the driver writes a NaN loss as null.
manifest["parity"].append({"program": "tiny_nan", "reference": "reference/tiny_f32.jsonl",
                           "rtol": 1e-4, "args": ""})
json.dump(manifest, open(f"{bundle}/manifest.json", "w"))
write(f"{runs}/tiny_nan.jsonl", losses([2.0, None, 1.0]))
# A run that never started: no metrics, the reason in its log.
manifest["parity"].append({"program": "tiny_dead", "reference": "reference/tiny_f32.jsonl",
                           "rtol": 1e-4, "args": ""})
json.dump(manifest, open(f"{bundle}/manifest.json", "w"))
open(f"{runs}/tiny_dead.log", "w").write("error: cannot start the runtime: no GPU\n")
# The same program run again under other environment variables, under its
# own run name (its files are <run>.jsonl / <run>.log).
manifest["parity"].append({"run": "tiny_bf16_simt", "program": "tiny_bf16",
                           "env": "ZRT_CUDA_ATTENTION=simt",
                           "reference": "reference/tiny_bf16.jsonl",
                           "rtol": 2e-2, "args": ""})
json.dump(manifest, open(f"{bundle}/manifest.json", "w"))
write(f"{runs}/tiny_bf16_simt.jsonl", losses([2.0, 1.51, 1.0]))  # 6.7e-3
state = [100, 100, 200, 200, 200]
config = {"type": "config", "stage": 0, "world_size": 1, "num_params": 1000,
          "measured_state_bytes": state,
          "plan": {"state_bytes": state, "arena_bytes": [100, 100, 200, 400, 1000, 1000, 0]}}
steps = [{"type": "step", "step": s, "loss": 1.0, "ms": 2.0 if s > 1 else 50.0,
          "tokens_per_s": 1000.0 if s > 1 else 10.0,
          "comm_wait_s": 0.001, "peak_bytes": 3000, "allocations": 0}
         for s in range(1, 5)]
write(f"{runs}/gpt2_s0.jsonl", [config] + steps)
json.dump({"device": "test", "bf16_tflops": 1e-5, "f32_tflops": 1e-6},
          open(f"{runs}/gemm_peak.json", "w"))
open(f"{runs}/unit_tests.txt", "w").write(
    "100% tests passed, 0 tests failed out of 3\n")
# The profile: a run of 1 + 3 steps (profile.json) and one of 1 step
# (profile_warm.json); report.py reports their difference.
json.dump({"rank": 0, "world_size": 1, "total_gpu_ms": 10.0, "total_host_ms": 1.0,
           "functions": [{"name": "zrt_matmul_bf16", "calls": 4, "gpu_ms": 7.5, "host_ms": 0.5},
                         {"name": "zrt_wait", "calls": 2, "gpu_ms": 2.5, "host_ms": 0.5}],
           "shapes": [{"name": "zrt_matmul_bf16", "shape": "b1 2x3x4 NT bias", "calls": 4,
                       "gpu_ms": 7.5, "host_ms": 0.5}]},
          open(f"{runs}/profile.json", "w"))
json.dump({"rank": 0, "world_size": 1, "total_gpu_ms": 3.0, "total_host_ms": 0.2,
           "functions": [{"name": "zrt_matmul_bf16", "calls": 1, "gpu_ms": 3.0, "host_ms": 0.2}],
           "shapes": [{"name": "zrt_matmul_bf16", "shape": "b1 2x3x4 NT bias", "calls": 1,
                       "gpu_ms": 3.0, "host_ms": 0.2}]},
          open(f"{runs}/profile_warm.json", "w"))
write(f"{runs}/profile_run.jsonl", [config] + steps)
# The PyTorch yardstick (bench/gpu/torch_gpt2.py's JSON, the fields read).
json.dump({"torch_version": "2.11.0", "tokens_per_s": 500.0, "ms_per_step": 4.0,
           "mfu_measured_peak": 0.25, "peak_memory_bytes": 2e9,
           "gemm": [{"name": "qkv.fwd", "M": 2, "N": 3, "K": 4, "ms": 0.5, "tflops": 1e-7}]},
          open(f"{runs}/torch_eager.json", "w"))
# The timing tests' output (gpu-check's attention_timing.txt): attention
# lines and bandwidth lines, with gtest's own lines around them.
open(f"{runs}/attention_timing.txt", "w").write(
    "[ RUN      ] CudaFlashAttentionTc.DISABLED_TimingGpt2\n"
    "tensor-core forward  0.184 ms (140.3 TFLOP/s)\n"
    "[ RUN      ] CudaBf16.DISABLED_LayerNormTimingGpt2\n"
    "add_layer_norm_bf16                          0.0250 ms  100.7 MB    4.03 TB/s\n"
    "[       OK ] CudaBf16.DISABLED_LayerNormTimingGpt2 (90 ms)\n")
