#!/usr/bin/env python3
"""Evaluates the runs of scripts/gpu-check and writes its one JSON file.

Usage: report.py BUNDLE RUNDIR OUT.json [--quiet]

--quiet writes the JSON without printing and exits 0 (gpu-check rewrites the
file after every step this way, so a run cut short still leaves a report).

BUNDLE is scripts/gpu-prepare's directory (manifest.json, reference/*.jsonl);
RUNDIR holds what gpu-check ran: gemm_peak.json, unit_tests.txt (ctest's
summary line), <run>.jsonl (the driver's --metrics; a run is named after its
program unless its manifest entry has a "run" name), <run>.log and
profile.json (ZRT_PROFILE of a GPT-2 run: GPU time per zrt_* function).

Parity: every step's loss of a GPU run against the CPU build's loss of the
same step, |gpu - cpu| <= rtol * |cpu| (rtol from the manifest: 1e-4 for f32,
2e-2 for bf16-mixed).

Benchmark (GPT-2 124M at each ZeRO stage), over the steps after the first
`skip_steps` (warm-up):
  tokens/s     median of the driver's tokens_per_s;
  MFU          model FLOP/s / the card's measured bf16 GEMM rate
               (gemm_peak: median, random operands); mfu_datasheet against
               the vendor's dense bf16 rate (DATASHEET_BF16_TFLOPS; the
               denominator llm.c and PaLM use), model FLOPs per token =
               6 N + 12 L C T
               (PaLM, Chowdhery et al. 2022, appendix B: 6 FLOPs per
               parameter per token for forward + backward, plus attention's
               QK^T and PV, 2 x 2 x L x T x C forward, twice that backward),
               N the parameter count without the position table (as PaLM and
               llm.c count it);
  memory       peak arena bytes against the plan's arena bytes, model-state
               bytes against the plan's (zero-report);
  exposed comm median comm_wait_s per step (time compute waited on NCCL).
Exit status 1 if a parity check or the unit tests failed, else 0.
"""
import json
import math
import statistics
import sys

# Dense bf16 tensor-core TFLOP/s from NVIDIA's datasheets (without
# sparsity), by the CUDA device name; the first substring that matches wins.
DATASHEET_BF16_TFLOPS = [
    ("H200 NVL", 835.0), ("H200", 989.4), ("H100 NVL", 835.0),
    ("H100 PCIe", 756.5), ("H100", 989.4), ("A100", 312.0),
]


def datasheet_tflops(device):
    for key, tflops in DATASHEET_BF16_TFLOPS:
        if device and key in device:
            return tflops
    return None


def steady_profile(warm, full):
    """The profile of the steps after the first: the per-function (and
    per-shape) totals of a run of 1 + n steps minus those of a run of 1 step
    (the first step also pays for cuBLAS's heuristics and module loading;
    initialization is in both)."""
    def sub(rows_full, rows_warm, key):
        base = {key(r): r for r in rows_warm}
        out = []
        for r in rows_full:
            w = base.get(key(r), {})
            d = dict(r)
            for f in ("calls", "gpu_ms", "host_ms"):
                d[f] = r[f] - w.get(f, 0)
            if d["calls"] > 0:
                out.append(d)
        out.sort(key=lambda r: -r["gpu_ms"])
        return out
    fns = sub(full.get("functions", []), warm.get("functions", []),
              lambda r: r["name"])
    shapes = sub(full.get("shapes", []), warm.get("shapes", []),
                 lambda r: (r["name"], r["shape"]))
    return {"functions": fns, "shapes": shapes,
            "total_gpu_ms": sum(r["gpu_ms"] for r in fns),
            "total_host_ms": sum(r["host_ms"] for r in fns)}


def load_jsonl(path):
    rows = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line:
                rows.append(json.loads(line))
    return rows


def steps(rows):
    return [r for r in rows if r.get("type") == "step"]


def finite(x):
    """A finite number (the driver writes NaN and infinities as null)."""
    return isinstance(x, (int, float)) and math.isfinite(x)


def log_tail(rundir, name, lines=5):
    """The last lines of a run's log: why a run left no metrics."""
    try:
        with open(f"{rundir}/{name}.log") as f:
            return [l.rstrip() for l in f.readlines()[-lines:]]
    except OSError:
        return []


def config(rows):
    for r in rows:
        if r.get("type") == "config":
            return r
    return {}


def parity(bundle, rundir, item):
    # A run is named after its program unless the manifest names it (the
    # same program run again with other environment variables).
    name = item.get("run", item["program"])
    out = {"program": name, "rtol": item["rtol"]}
    if "env" in item:
        out["env"] = item["env"]
    try:
        ref = steps(load_jsonl(f"{bundle}/{item['reference']}"))
        got = steps(load_jsonl(f"{rundir}/{name}.jsonl"))
    except (OSError, ValueError) as e:
        out.update(passed=False, error=str(e), log=log_tail(rundir, name))
        return out
    worst = 0.0
    fails = []
    for r, g in zip(ref, got):
        if not finite(g.get("loss")) or not finite(r.get("loss")):
            worst = math.inf
            fails.append({"step": r["step"], "cpu": r.get("loss"), "gpu": g.get("loss")})
            continue
        rel = abs(g["loss"] - r["loss"]) / max(abs(r["loss"]), 1e-30)
        worst = max(worst, rel)
        if not rel <= item["rtol"]:
            fails.append({"step": r["step"], "cpu": r["loss"], "gpu": g["loss"]})
    out.update(
        steps=len(got),
        expected_steps=len(ref),
        max_rel_diff=worst if finite(worst) else None,  # None: a non-finite loss
        cpu_losses=[r["loss"] for r in ref],
        gpu_losses=[g["loss"] for g in got],
        failures=fails[:5],
        passed=len(got) == len(ref) and len(ref) > 0 and not fails,
    )
    return out


def benchmark(bundle, rundir, manifest, peak, sheet):
    spec = manifest["benchmark"]
    L, C, T = spec["n_layer"], spec["n_embd"], spec["seq"]
    results = []
    for name in spec["programs"]:
        entry = {"program": name}
        try:
            rows = load_jsonl(f"{rundir}/{name}.jsonl")
        except (OSError, ValueError) as e:
            entry["error"] = str(e)
            entry["log"] = log_tail(rundir, name)
            results.append(entry)
            continue
        cfg = config(rows)
        st = steps(rows)[spec["skip_steps"]:]
        if not st or not all(finite(s.get("tokens_per_s")) for s in st):
            entry["error"] = "no step metrics"
            entry["log"] = log_tail(rundir, name)
            results.append(entry)
            continue
        n_params = cfg["num_params"] - T * C  # without the position table
        flops_per_token = 6 * n_params + 12 * L * C * T
        tps = statistics.median(s["tokens_per_s"] for s in st)
        model_tflops = tps * flops_per_token / 1e12
        plan = cfg.get("plan", {})
        planned_arenas = sum(plan.get("arena_bytes", []))
        entry.update(
            stage=cfg.get("stage"),
            world_size=cfg.get("world_size"),
            steps_measured=len(st),
            step_ms=statistics.median(s["ms"] for s in st),
            tokens_per_s=tps,
            flops_per_token=flops_per_token,
            model_tflops=model_tflops,
            mfu=model_tflops / peak["bf16_tflops"] if peak.get("bf16_tflops") else None,
            mfu_datasheet=model_tflops / sheet if sheet else None,
            exposed_comm_s_per_step=statistics.median(s.get("comm_wait_s", 0.0) for s in st),
            peak_arena_bytes=max(s.get("peak_bytes", 0) for s in st),
            planned_arena_bytes=planned_arenas,
            model_state_bytes=cfg.get("measured_state_bytes"),
            planned_model_state_bytes=plan.get("state_bytes"),
            model_state_equals_plan=cfg.get("measured_state_bytes") == plan.get("state_bytes"),
            allocations_per_step=max(s.get("allocations", 0) for s in st),
            final_loss=steps(rows)[-1]["loss"],
        )
        results.append(entry)
    return results


def main():
    args = [a for a in sys.argv[1:] if a != "--quiet"]
    quiet = len(args) != len(sys.argv) - 1
    if len(args) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    bundle, rundir, out_path = args
    with open(f"{bundle}/manifest.json") as f:
        manifest = json.load(f)
    try:
        with open(f"{rundir}/gemm_peak.json") as f:
            peak = json.load(f)
    except (OSError, ValueError):
        peak = {}
    try:
        with open(f"{rundir}/unit_tests.txt") as f:
            unit = f.read().strip()
    except OSError:
        unit = "not run"
    unit_ok = "100% tests passed" in unit
    try:
        with open(f"{rundir}/attention_timing.txt") as f:
            lines = [l.strip() for l in f]
        # The attention timing's lines, and the kernel timings that report
        # bandwidth (DISABLED_LayerNormTimingGpt2: "... ms  MB  TB/s").
        attention = [l for l in lines if ("forward" in l or "backward" in l)
                     and "TB/s" not in l]
        kernels = [l for l in lines if l.endswith("TB/s")]
    except OSError:
        attention, kernels = [], []
    profile = None
    try:
        with open(f"{rundir}/profile.json") as f:
            profile = json.load(f)
        with open(f"{rundir}/profile_warm.json") as f:
            profile = {"raw": profile, "steady": steady_profile(json.load(f), profile)}
        rows = steps(load_jsonl(f"{rundir}/profile_run.jsonl"))[1:]
        profile["steady"]["steps"] = len(rows)
        profile["steady"]["step_ms"] = [r["ms"] for r in rows]
    except (OSError, ValueError, KeyError):
        pass
    sheet = datasheet_tflops(peak.get("device"))
    yardstick = {}
    for mode in ("eager", "compile"):
        try:
            with open(f"{rundir}/torch_{mode}.json") as f:
                yardstick[mode] = json.load(f)
        except (OSError, ValueError):
            pass
    par = [parity(bundle, rundir, item) for item in manifest["parity"]]
    bench = benchmark(bundle, rundir, manifest, peak, sheet)
    report = {
        "bundle_commit": manifest.get("commit"),
        "device": peak.get("device"),
        "gemm_peak": peak,
        "datasheet_bf16_tflops": sheet,
        "unit_tests": {"summary": unit, "passed": unit_ok},
        "parity": par,
        "benchmark": bench,
        "profile": profile,
        "attention_timing": attention,
        "kernel_timing": kernels,
        "pytorch": yardstick,
        "passed": unit_ok and all(p["passed"] for p in par),
    }
    with open(out_path + ".tmp", "w") as f:
        json.dump(report, f, indent=2)
    import os
    os.replace(out_path + ".tmp", out_path)
    if quiet:
        return 0
    print(f"gpu-check: unit tests: {unit}")
    for p in par:
        if "error" in p:
            print(f"gpu-check: parity {p['program']}: FAILED ({p['error']})")
            for line in p.get("log", []):
                print(f"gpu-check:   {line}")
            continue
        diff = (f"{p['max_rel_diff']:.2e}" if p["max_rel_diff"] is not None
                else "inf: a non-finite loss")
        print(f"gpu-check: parity {p['program']}: "
              f"{'ok' if p['passed'] else 'FAILED'} "
              f"(max rel diff {diff}, rtol {p['rtol']:g}, {p['steps']} steps)")
    for b in bench:
        if "error" in b:
            print(f"gpu-check: {b['program']}: {b['error']}")
            for line in b.get("log", []):
                print(f"gpu-check:   {line}")
            continue
        mfu = f"{100 * b['mfu']:.1f}%" if b["mfu"] is not None else "n/a"
        if b["mfu_datasheet"] is not None:
            mfu += f" ({100 * b['mfu_datasheet']:.1f}% of the datasheet's {sheet:g})"
        print(f"gpu-check: {b['program']} stage {b['stage']} x{b['world_size']}: "
              f"{b['tokens_per_s']:.0f} tok/s, {b['step_ms']:.1f} ms/step, MFU {mfu}, "
              f"exposed comm {1e3 * b['exposed_comm_s_per_step']:.2f} ms/step, "
              f"peak {b['peak_arena_bytes'] / 1e9:.2f} GB (plan "
              f"{b['planned_arena_bytes'] / 1e9:.2f} GB), model states = plan: "
              f"{b['model_state_equals_plan']}")
    for mode, y in yardstick.items():
        mfu = y.get("mfu_measured_peak")
        print(f"gpu-check: PyTorch {y.get('torch_version')} {mode}: "
              f"{y['tokens_per_s']:.0f} tok/s, {y['ms_per_step']:.1f} ms/step, MFU "
              + (f"{100 * mfu:.1f}%" if mfu else "n/a")
              + f", peak {(y.get('peak_memory_bytes') or 0) / 1e9:.2f} GB")
    gemms = yardstick.get("eager", {}).get("gemm") or []
    for g in gemms:
        print(f"gpu-check:   torch.matmul {g['name']:<14} {g['M']}x{g['N']}x{g['K']} "
              f"{g['ms']:.3f} ms {g['tflops']:.0f} TFLOP/s")
    for line in attention:
        print(f"gpu-check: attention (B=16 H=12 T=1024 D=64): {line}")
    for line in kernels:
        print(f"gpu-check: kernel (GPT-2 shapes): {line}")
    if profile and "steady" in profile:
        st = profile["steady"]
        n = max(st.get("steps", 0), 1)
        total = st["total_gpu_ms"] or 1.0
        wall = statistics.median(st["step_ms"]) if st.get("step_ms") else float("nan")
        print(f"gpu-check: profile of gpt2_s0 (per step, the {n} steps after the "
              f"first): {st['total_gpu_ms'] / n:.1f} ms GPU in zrt calls, "
              f"{st['total_host_ms'] / n:.1f} ms host in zrt calls, "
              f"{wall:.1f} ms per profiled step")
        for fn in st["functions"][:14]:
            print(f"gpu-check:   {fn['name']:<36} {fn['calls'] / n:>6.0f} calls "
                  f"{fn['gpu_ms'] / n:>7.2f} ms gpu {fn['host_ms'] / n:>6.2f} ms host "
                  f"{100 * fn['gpu_ms'] / total:5.1f}%")
        for sh in st["shapes"][:16]:
            print(f"gpu-check:   {sh['name'] + ' ' + sh['shape']:<58} "
                  f"{sh['calls'] / n:>4.0f} calls {sh['gpu_ms'] / n:>6.2f} ms")
    print(f"gpu-check: wrote {out_path}")
    return 0 if report["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
