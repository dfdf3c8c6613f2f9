#!/usr/bin/env python3
"""PyTorch yardstick for the GPU benchmark: GPT-2 training-step throughput.

Times full training steps (zero_grad + forward + cross-entropy + backward +
grad-norm clip 1.0 + AdamW) of a minimal nanoGPT-style GPT-2 in plain torch:
bf16 autocast with f32 master weights on CUDA (f32 on CPU), SDPA causal
attention (manual masked softmax on torch 1.x), tanh GELU, lm_head tied to
wte, no dropout, one fixed batch of random tokens. Default: GPT-2 124M
(L=12 H=12 C=768, V=50304 padded as llm.c, T=1024, B=16).

Reports median ms/step, tokens/s = B*T/median, peak allocated memory and MFU
against --peak-tflops (a measured bf16 GEMM rate) and the datasheet's dense
bf16 peak of the card (report.py's table: 989.4 TFLOP/s for H100/H200 SXM,
less for PCIe and NVL cards). Model FLOPs per token = 6*N + 12*L*C*T (PaLM, Chowdhery et al. 2022, appendix B; llm.c's convention),
N = parameters without the position table, tied embedding counted once.

--gemm-table times torch.matmul (bf16) on one step's GEMM shapes: forward
Y = X @ W^T, backward dX = dY @ W and dW = dY^T @ X for qkv, attn proj, fc,
fc proj and lm_head (triton.testing.do_bench median if triton imports).
"""
import argparse
import contextlib
import json
import math
import os
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

# The datasheet's dense bf16 rate by device name: report.py's table, so that
# PyTorch's and Zero's datasheet MFU share one denominator.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report import datasheet_tflops  # noqa: E402


class Block(nn.Module):
    def __init__(self, C, H):
        super().__init__()
        self.H = H
        self.ln1, self.ln2 = nn.LayerNorm(C), nn.LayerNorm(C)
        self.qkv, self.proj = nn.Linear(C, 3 * C), nn.Linear(C, C)
        self.fc, self.fc_proj = nn.Linear(C, 4 * C), nn.Linear(4 * C, C)
        self.gelu = nn.GELU(approximate="tanh")

    def attn(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.H, C // self.H).transpose(1, 2) for t in (q, k, v))
        if hasattr(F, "scaled_dot_product_attention"):  # torch >= 2.0
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:  # torch 1.x: explicit causal mask + softmax
            att = (q @ k.transpose(-2, -1)) / math.sqrt(k.size(-1))
            mask = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
            y = att.masked_fill(~mask, float("-inf")).softmax(dim=-1) @ v
        return self.proj(y.transpose(1, 2).reshape(B, T, C))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.fc_proj(self.gelu(self.fc(self.ln2(x))))


class GPT(nn.Module):
    def __init__(self, L, H, C, V, T):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(V, C), nn.Embedding(T, C)
        self.blocks = nn.ModuleList(Block(C, H) for _ in range(L))
        self.ln_f = nn.LayerNorm(C)
        self.lm_head = nn.Linear(C, V, bias=False)
        self.lm_head.weight = self.wte.weight  # tied
        for name, p in self.named_parameters():  # GPT-2 init
            if p.dim() == 2:
                std = 0.02 / math.sqrt(2 * L) if name.endswith("proj.weight") else 0.02
                nn.init.normal_(p, 0.0, std)
            elif name.endswith("bias"):
                nn.init.zeros_(p)

    def forward(self, idx, targets):
        pos = torch.arange(idx.size(1), device=idx.device)
        x = self.wte(idx) + self.wpe(pos)
        for b in self.blocks:
            x = b(x)
        logits = self.lm_head(self.ln_f(x))
        return F.cross_entropy(logits.float().view(-1, logits.size(-1)), targets.view(-1))


def pos_int(s):
    if not s.isdigit() or int(s) <= 0:
        raise argparse.ArgumentTypeError("must be a positive integer: %r" % s)
    return int(s)


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    for name, default in (("n-layer", 12), ("n-head", 12), ("n-embd", 768), ("vocab", 50304),
                          ("seq", 1024), ("batch", 16), ("steps", 20)):
        ap.add_argument("--" + name, type=pos_int, default=default)
    ap.add_argument("--warmup", type=int, default=5, help="untimed steps first (>= 0)")
    ap.add_argument("--compile", action="store_true", help="torch.compile the model")
    ap.add_argument("--peak-tflops", type=float, default=None, help="measured bf16 GEMM TFLOP/s")
    ap.add_argument("--json", metavar="PATH", help="write all results as one JSON object")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--gemm-table", dest="gemm_table", action="store_true", default=None)
    g.add_argument("--no-gemm-table", dest="gemm_table", action="store_false")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    a = ap.parse_args()
    if a.warmup < 0:
        ap.error("--warmup must be >= 0")
    if a.n_embd % a.n_head:
        ap.error("--n-embd must be a multiple of --n-head")
    if a.peak_tflops is not None and not a.peak_tflops > 0:
        ap.error("--peak-tflops must be > 0")
    try:
        a.dev = torch.device(a.device)
    except RuntimeError as e:
        ap.error("--device: %s" % e)
    if a.dev.type not in ("cuda", "cpu") or (a.dev.type == "cuda" and not torch.cuda.is_available()):
        ap.error("--device %s is not available" % a.device)
    if a.compile and not hasattr(torch, "compile"):
        ap.error("--compile needs torch >= 2.0")
    if a.json:  # said now, not after the whole run
        d = os.path.dirname(os.path.abspath(a.json))
        if not os.path.isdir(d) or not os.access(d, os.W_OK):
            ap.error("--json %s: directory %s does not exist or is not writable" % (a.json, d))
    if a.gemm_table is None:  # default: on for CUDA, off for CPU
        a.gemm_table = a.dev.type == "cuda"
    return a


def timer(dev):
    """Returns start(), stop() -> ms; CUDA events on GPU, perf_counter on CPU."""
    if dev.type == "cuda":
        def start():
            e = torch.cuda.Event(enable_timing=True)
            e.record()
            return e

        def stop(s):
            e = torch.cuda.Event(enable_timing=True)
            e.record()
            e.synchronize()
            return s.elapsed_time(e)
        return start, stop
    return time.perf_counter, lambda s: (time.perf_counter() - s) * 1e3


def train(a):
    torch.manual_seed(0)
    L, H, C, V, T, B = a.n_layer, a.n_head, a.n_embd, a.vocab, a.seq, a.batch
    cuda = a.dev.type == "cuda"
    model = GPT(L, H, C, V, T).to(a.dev)
    n_params = sum(p.numel() for p in model.parameters()) - model.wpe.weight.numel()
    flops_per_token = 6 * n_params + 12 * L * C * T
    # AdamW as nanoGPT/llm.c: decay matrices and embeddings, not biases/LayerNorm.
    params = list(model.parameters())
    groups = [{"params": [p for p in params if p.dim() >= 2], "weight_decay": 0.1},
              {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0}]
    kw = dict(lr=6e-4, betas=(0.9, 0.95))
    opt, fused = None, False
    if cuda:  # fused AdamW where this torch has it (TypeError on 1.x)
        try:
            opt, fused = torch.optim.AdamW(groups, fused=True, **kw), True
        except (TypeError, RuntimeError):
            pass
    if opt is None:
        opt = torch.optim.AdamW(groups, **kw)
    step_model = torch.compile(model) if a.compile else model
    amp = torch.autocast("cuda", dtype=torch.bfloat16) if cuda else contextlib.nullcontext()
    g = torch.Generator().manual_seed(1234)  # one fixed batch, reused every step
    data = torch.randint(0, V, (B, T + 1), generator=g).to(a.dev)
    x, y = data[:, :-1].contiguous(), data[:, 1:].contiguous()

    def step():
        opt.zero_grad(set_to_none=True)
        with amp:
            loss = step_model(x, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        return loss

    start, stop = timer(a.dev)
    if cuda:
        torch.cuda.reset_peak_memory_stats(a.dev)
    losses, times = [], []
    for i in range(a.warmup + a.steps):
        s = start()
        loss = step()
        losses.append(loss.item())  # synchronizes
        ms = stop(s)
        if i >= a.warmup:
            times.append(ms)
    med = statistics.median(times)
    tok_s = B * T / (med / 1e3)
    achieved_tflops = tok_s * flops_per_token / 1e12
    name = torch.cuda.get_device_name(a.dev) if cuda else "cpu"
    datasheet = datasheet_tflops(name)
    return {
        "device": name, "torch_version": torch.__version__,
        "config": {"n_layer": L, "n_head": H, "n_embd": C, "vocab": V, "seq": T, "batch": B,
                   "steps": a.steps, "warmup": a.warmup, "compile": a.compile,
                   "precision": "bf16-autocast" if cuda else "f32", "fused_adamw": fused,
                   "sdpa": hasattr(F, "scaled_dot_product_attention")},
        "n_params": n_params, "flops_per_token": flops_per_token,
        "ms_per_step": med, "step_ms": times, "losses": losses,
        "tokens_per_s": tok_s, "achieved_tflops": achieved_tflops,
        "peak_tflops_measured": a.peak_tflops, "peak_tflops_datasheet": datasheet,
        "mfu_measured_peak": achieved_tflops / a.peak_tflops if a.peak_tflops else None,
        "mfu_datasheet_peak": achieved_tflops / datasheet if datasheet else None,
        "peak_memory_bytes": torch.cuda.max_memory_allocated(a.dev) if cuda else None,
    }


def bench_ms(fn, dev):
    """Median ms of fn(): triton's do_bench on CUDA when available, else 5 + 20 calls."""
    if dev.type == "cuda":
        try:
            from triton.testing import do_bench
            return float(do_bench(fn, warmup=25, rep=100, return_mode="median"))
        except ImportError:
            pass
    start, stop = timer(dev)
    for _ in range(5):
        fn()
    ts = []
    for _ in range(20):
        s = start()
        fn()
        ts.append(stop(s))
    return statistics.median(ts)


def gemm_table(a):
    """Times the forward/backward GEMMs of one training step (bf16 inputs)."""
    C, V, M = a.n_embd, a.vocab, a.batch * a.seq  # M = B*T rows
    g = torch.Generator(device=a.dev).manual_seed(0)
    rnd = lambda *s: torch.randn(*s, generator=g, device=a.dev, dtype=torch.bfloat16)
    rows = []
    for lname, N, K in (("qkv", 3 * C, C), ("attn_proj", C, C), ("fc", 4 * C, C),
                        ("fc_proj", C, 4 * C), ("lm_head", V, C)):
        X, W, dY = rnd(M, K), rnd(N, K), rnd(M, N)  # W stored [N, K] like nn.Linear
        for kind, fn, (m, n, k) in (
                ("fwd", lambda: torch.matmul(X, W.t()), (M, N, K)),   # Y = X W^T
                ("dX", lambda: torch.matmul(dY, W), (M, K, N)),       # dX = dY W
                ("dW", lambda: torch.matmul(dY.t(), X), (N, K, M))):  # dW = dY^T X
            ms = bench_ms(fn, a.dev)
            rows.append({"name": "%s.%s" % (lname, kind), "M": m, "N": n, "K": k,
                         "ms": ms, "tflops": 2.0 * m * n * k / (ms / 1e3) / 1e12})
    return rows


def main():
    a = parse_args()
    r = train(a)
    c = r["config"]
    print("torch %s on %s (%s, compile=%s, fused AdamW=%s, sdpa=%s)" % (
        r["torch_version"], r["device"], c["precision"], c["compile"], c["fused_adamw"], c["sdpa"]))
    print("GPT-2 L=%d H=%d C=%d V=%d T=%d B=%d  N=%d (no wpe)  FLOPs/token=%.4g" % (
        c["n_layer"], c["n_head"], c["n_embd"], c["vocab"], c["seq"], c["batch"],
        r["n_params"], r["flops_per_token"]))
    lines = [("loss first/last", "%.4f / %.4f" % (r["losses"][0], r["losses"][-1])),
             ("ms/step (median)", "%.3f  (min %.3f, max %.3f, %d steps)" % (
                 r["ms_per_step"], min(r["step_ms"]), max(r["step_ms"]), len(r["step_ms"]))),
             ("tokens/s", "%.1f" % r["tokens_per_s"]),
             ("model TFLOP/s", "%.3f" % r["achieved_tflops"])]
    for label, key, peak in (("MFU vs measured", "mfu_measured_peak", "peak_tflops_measured"),
                             ("MFU vs datasheet", "mfu_datasheet_peak", "peak_tflops_datasheet")):
        if r[key] is not None:
            lines.append((label, "%.2f%% of %.1f TFLOP/s" % (100 * r[key], r[peak])))
    if r["peak_memory_bytes"] is not None:
        lines.append(("peak memory", "%d bytes (%.2f GiB)" % (
            r["peak_memory_bytes"], r["peak_memory_bytes"] / 2**30)))
    for label, text in lines:
        print("%-20s %s" % (label, text))
    r["gemm"] = gemm_table(a) if a.gemm_table else None
    if r["gemm"]:
        print("\n%-18s %7s %7s %7s %10s %9s" % ("gemm (bf16)", "M", "N", "K", "ms", "TFLOP/s"))
        for g in r["gemm"]:
            print("%-18s %7d %7d %7d %10.4f %9.2f" % (
                g["name"], g["M"], g["N"], g["K"], g["ms"], g["tflops"]))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(r, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
