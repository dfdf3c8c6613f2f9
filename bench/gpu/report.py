#!/usr/bin/env python3
"""Evaluates the runs of scripts/gpu-check and writes its one JSON file.

Usage: report.py BUNDLE RUNDIR OUT.json [--quiet]

--quiet writes the JSON without printing and exits 0 (gpu-check rewrites the
file after every step this way, so a run cut short still leaves a report).

BUNDLE is scripts/gpu-prepare's directory (manifest.json, reference/*.jsonl);
RUNDIR holds what gpu-check ran: gemm_peak.json, unit_tests.txt (the
summary line gpu-check writes from the CUDA test binary's output),
attention_timing.txt (the timing tests' output), <run>.jsonl (the driver's
--metrics; a run is named after its program unless its manifest entry has
a "run" name), <run>.log, torch_eager.json / torch_compile.json
(bench/gpu/torch_gpt2.py), profile_warm.json and profile_run.jsonl (the
1-step profiled run, and the metrics of the longer one), and
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
    """The JSON objects of a metrics file, one per line. A line that is not
    a JSON object (a run killed mid-write leaves a truncated last line) is
    skipped, not fatal: what the run measured before it still counts.
    Raises OSError when the file cannot be read."""
    rows = []
    with open(path, errors="replace") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            try:
                row = json.loads(line)
            except ValueError:
                continue
            if isinstance(row, dict):
                rows.append(row)
    return rows


def read_text(path):
    """A text file's contents, undecodable bytes replaced (logs can hold
    anything). Raises OSError."""
    with open(path, errors="replace") as f:
        return f.read()


def load_json(path, kind=dict):
    """A JSON file's value if it is a `kind`, else None (missing, truncated
    or malformed files included)."""
    try:
        with open(path, errors="replace") as f:
            value = json.load(f)
    except (OSError, ValueError):
        return None
    return value if isinstance(value, kind) else None


def steps(rows):
    return [r for r in rows if r.get("type") == "step"]


def finite(x):
    """A finite number (the driver writes NaN and infinities as null)."""
    return isinstance(x, (int, float)) and math.isfinite(x)


def log_tail(rundir, name, lines=5):
    """The last lines of a run's log: why a run left no metrics."""
    try:
        return [l.rstrip() for l in read_text(f"{rundir}/{name}.log").splitlines()[-lines:]]
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
            fails.append({"step": r.get("step"), "cpu": r.get("loss"), "gpu": g.get("loss")})
            continue
        rel = abs(g["loss"] - r["loss"]) / max(abs(r["loss"]), 1e-30)
        worst = max(worst, rel)
        if not rel <= item["rtol"]:
            fails.append({"step": r.get("step"), "cpu": r["loss"], "gpu": g["loss"]})
    out.update(
        steps=len(got),
        expected_steps=len(ref),
        max_rel_diff=worst if finite(worst) else None,  # None: a non-finite loss
        cpu_losses=[r.get("loss") for r in ref],
        gpu_losses=[g.get("loss") for g in got],
        failures=fails[:5],
        passed=len(got) == len(ref) and len(ref) > 0 and not fails,
    )
    return out


def expected_steps(args):
    """The --steps N of a run's arguments (a string), or None."""
    words = str(args).split()
    for i, w in enumerate(words[:-1]):
        if w == "--steps" and words[i + 1].isdigit():
            return int(words[i + 1])
    return None


def number(row, key, default=0.0):
    """row[key] when it is a finite number, else `default` (the driver
    writes NaN as null; a field may be missing in a cut-short run)."""
    v = row.get(key)
    return v if finite(v) else default


def benchmark(bundle, rundir, manifest, peak, sheet):
    """One entry per benchmark program. MFU is per GPU: the driver's
    tokens/s counts the global batch (every rank's tokens), so the model
    FLOP/s is divided by the world size before the one card's rate."""
    spec = manifest["benchmark"]
    L, C, T = spec["n_layer"], spec["n_embd"], spec["seq"]
    want = expected_steps(spec.get("args", ""))
    peak_tflops = peak.get("bf16_tflops")
    results = []
    for name in spec["programs"]:
        entry = {"program": name}
        try:
            rows = load_jsonl(f"{rundir}/{name}.jsonl")
        except OSError as e:
            entry["error"] = str(e)
            entry["log"] = log_tail(rundir, name)
            results.append(entry)
            continue
        cfg = config(rows)
        all_steps = steps(rows)
        st = [r for r in all_steps[spec["skip_steps"]:]
              if finite(r.get("tokens_per_s")) and finite(r.get("ms"))]
        if not st or not finite(cfg.get("num_params")):
            entry["error"] = ("no step metrics" if cfg else
                              "no step metrics (no config row in the metrics)")
            entry["log"] = log_tail(rundir, name)
            results.append(entry)
            continue
        world = cfg.get("world_size")
        world = world if isinstance(world, int) and world > 0 else 1
        n_params = cfg["num_params"] - T * C  # without the position table
        flops_per_token = 6 * n_params + 12 * L * C * T
        tps = statistics.median(r["tokens_per_s"] for r in st)
        model_tflops = tps * flops_per_token / 1e12
        per_gpu = model_tflops / world
        plan = cfg.get("plan") if isinstance(cfg.get("plan"), dict) else {}
        arenas = plan.get("arena_bytes") or []
        planned_arenas = sum(a for a in arenas if finite(a))
        entry.update(
            stage=cfg.get("stage"),
            world_size=world,
            steps_run=len(all_steps),
            steps_expected=want,
            complete=want is None or len(all_steps) >= want,
            steps_measured=len(st),
            step_ms=statistics.median(r["ms"] for r in st),
            tokens_per_s=tps,
            flops_per_token=flops_per_token,
            model_tflops=model_tflops,
            mfu=per_gpu / peak_tflops if peak_tflops else None,
            mfu_datasheet=per_gpu / sheet if sheet else None,
            exposed_comm_s_per_step=statistics.median(number(r, "comm_wait_s") for r in st),
            peak_arena_bytes=max(number(r, "peak_bytes", 0) for r in st),
            planned_arena_bytes=planned_arenas,
            model_state_bytes=cfg.get("measured_state_bytes"),
            planned_model_state_bytes=plan.get("state_bytes"),
            model_state_equals_plan=cfg.get("measured_state_bytes") == plan.get("state_bytes"),
            allocations_per_step=max(number(r, "allocations", 0) for r in st),
            final_loss=all_steps[-1].get("loss"),
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
    manifest = load_json(f"{bundle}/manifest.json")
    if (manifest is None or not isinstance(manifest.get("parity"), list)
            or not isinstance(manifest.get("benchmark"), dict)):
        print(f"report.py: {bundle}/manifest.json is missing or not a bundle "
              f"manifest of scripts/gpu-prepare", file=sys.stderr)
        return 2
    # The card's measured rate: only a positive number counts.
    peak = load_json(f"{rundir}/gemm_peak.json") or {}
    if not (finite(peak.get("bf16_tflops")) and peak["bf16_tflops"] > 0):
        peak.pop("bf16_tflops", None)
    if not isinstance(peak.get("device"), str):
        peak.pop("device", None)
    try:
        unit = read_text(f"{rundir}/unit_tests.txt").strip()
    except OSError:
        unit = "not run"
    unit_ok = "100% tests passed" in unit
    try:
        lines = [l.strip() for l in read_text(f"{rundir}/attention_timing.txt").splitlines()]
        # The attention timing's lines, and the kernel timings that report
        # bandwidth (DISABLED_LayerNormTimingGpt2: "... ms  MB  TB/s").
        attention = [l for l in lines if ("forward" in l or "backward" in l)
                     and "TB/s" not in l]
        kernels = [l for l in lines if l.endswith("TB/s")]
    except OSError:
        attention, kernels = [], []
    # The profile: the steady state when both profiled runs are there and
    # well-formed, else the raw totals (or nothing).
    profile = load_json(f"{rundir}/profile.json")
    warm = load_json(f"{rundir}/profile_warm.json")
    if profile is not None and warm is not None:
        try:
            steady = steady_profile(warm, profile)
        except (KeyError, TypeError, AttributeError, ValueError):
            steady = None
        if steady is not None:
            try:
                rows = steps(load_jsonl(f"{rundir}/profile_run.jsonl"))[1:]
            except OSError:
                rows = []
            steady["steps"] = len(rows) or None  # None: unknown
            steady["step_ms"] = [r["ms"] for r in rows if finite(r.get("ms"))]
            profile = {"raw": profile, "steady": steady}
    sheet = datasheet_tflops(peak.get("device"))
    # The PyTorch yardstick, when its JSON has the fields printed.
    yardstick = {}
    for mode in ("eager", "compile"):
        y = load_json(f"{rundir}/torch_{mode}.json")
        if y is not None and finite(y.get("tokens_per_s")) and finite(y.get("ms_per_step")):
            yardstick[mode] = y
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
              f"{b['model_state_equals_plan']}"
              + ("" if b["complete"] else
                 f" (INCOMPLETE: {b['steps_run']} of {b['steps_expected']} steps)"))
    for mode, y in yardstick.items():
        mfu = y.get("mfu_measured_peak")
        print(f"gpu-check: PyTorch {y.get('torch_version')} {mode}: "
              f"{y['tokens_per_s']:.0f} tok/s, {y['ms_per_step']:.1f} ms/step, MFU "
              + (f"{100 * mfu:.1f}%" if finite(mfu) else "n/a")
              + f", peak {number(y, 'peak_memory_bytes', 0) / 1e9:.2f} GB")
    gemms = yardstick.get("eager", {}).get("gemm") or []
    for g in gemms:
        if not (isinstance(g, dict) and all(finite(g.get(k)) for k in ("M", "N", "K", "ms", "tflops"))):
            continue
        print(f"gpu-check:   torch.matmul {g['name']:<14} {g['M']}x{g['N']}x{g['K']} "
              f"{g['ms']:.3f} ms {g['tflops']:.0f} TFLOP/s")
    for line in attention:
        print(f"gpu-check: attention (B=16 H=12 T=1024 D=64): {line}")
    for line in kernels:
        print(f"gpu-check: kernel (GPT-2 shapes): {line}")
    if profile and "steady" in profile:
        st = profile["steady"]
        n = st.get("steps") or 1
        what = (f"per step, the {st['steps']} steps after the first" if st.get("steps")
                else "all steps after the first together: their number is unknown")
        total = st["total_gpu_ms"] or 1.0
        wall = statistics.median(st["step_ms"]) if st.get("step_ms") else float("nan")
        print(f"gpu-check: profile of gpt2_s0 ({what}): "
              f"{st['total_gpu_ms'] / n:.1f} ms GPU in zrt calls, "
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
