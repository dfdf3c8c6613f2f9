#!/usr/bin/env python3
"""Times training steps of the GPT of test/e2e/reference_gpt.py in PyTorch.

usage: torch_gpt_step.py --data FILE --n-layer L --n-head H --n-embd C
                         --seq T --batch B --threads N --steps S --warmup W

The model is exactly the one Zero generates (zero-model gpt): token +
learned position embeddings, pre-LayerNorm blocks (eps 1e-5), causal
attention, tanh GELU, LM head tied to wte (padded vocabulary Vp = V rounded
up to 128, cross-entropy over the first V columns), f32. A step is
zero_grad + forward + backward + clip_grad_norm_(1.0) + AdamW (decay 0.01
on matrices, as train-optimizer), on random windows of the text (byte
tokens). Prints one line: `pytorch: <ms> ms/step <tok/s> tok/s` (mean over
the timed steps after the warmup steps; also the median).
"""
import argparse
import math
import statistics
import time

import torch
import torch.nn.functional as F


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    for name, default in (("n-layer", 4), ("n-head", 4), ("n-embd", 128),
                          ("seq", 128), ("batch", 8), ("vocab", 256),
                          ("threads", 1), ("steps", 20), ("warmup", 5)):
        ap.add_argument("--" + name, type=int, default=default)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    L, H, C, T, B, V = a.n_layer, a.n_head, a.n_embd, a.seq, a.batch, a.vocab
    vp = (V + 127) // 128 * 128

    def w(*shape, std=0.02):
        return (torch.randn(*shape) * std).requires_grad_(True)

    def z(*shape, fill=0.0):
        return torch.full(shape, fill).requires_grad_(True)

    p = {"wte": w(vp, C), "wpe": w(T, C), "ln_f.weight": z(C, fill=1.0),
         "ln_f.bias": z(C)}
    for i in range(L):
        h = "h%d." % i
        p.update({h + "ln_1.weight": z(C, fill=1.0), h + "ln_1.bias": z(C),
                  h + "attn.c_attn.weight": w(3 * C, C), h + "attn.c_attn.bias": z(3 * C),
                  h + "attn.c_proj.weight": w(C, C), h + "attn.c_proj.bias": z(C),
                  h + "ln_2.weight": z(C, fill=1.0), h + "ln_2.bias": z(C),
                  h + "mlp.c_fc.weight": w(4 * C, C), h + "mlp.c_fc.bias": z(4 * C),
                  h + "mlp.c_proj.weight": w(C, 4 * C), h + "mlp.c_proj.bias": z(C)})
    mask = torch.ones(T, T, dtype=torch.bool).tril()

    # gpt_loss of test/e2e/reference_gpt.py, with the sizes as arguments.
    def gpt_loss(ids, targets):
        b, t = ids.shape
        x = p["wte"][ids] + p["wpe"][:t]
        for i in range(L):
            h = "h%d." % i
            y = F.layer_norm(x, (C,), p[h + "ln_1.weight"], p[h + "ln_1.bias"], eps=1e-5)
            qkv = F.linear(y, p[h + "attn.c_attn.weight"], p[h + "attn.c_attn.bias"])
            q, k, v = qkv.split(C, dim=2)
            q, k, v = (u.view(b, t, H, C // H).transpose(1, 2) for u in (q, k, v))
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(C // H))
            att = att.masked_fill(~mask[:t, :t], float("-inf")).softmax(dim=-1)
            y = (att @ v).transpose(1, 2).contiguous().view(b, t, C)
            x = x + F.linear(y, p[h + "attn.c_proj.weight"], p[h + "attn.c_proj.bias"])
            m = F.layer_norm(x, (C,), p[h + "ln_2.weight"], p[h + "ln_2.bias"], eps=1e-5)
            m = F.gelu(F.linear(m, p[h + "mlp.c_fc.weight"], p[h + "mlp.c_fc.bias"]),
                       approximate="tanh")
            x = x + F.linear(m, p[h + "mlp.c_proj.weight"], p[h + "mlp.c_proj.bias"])
        x = F.layer_norm(x, (C,), p["ln_f.weight"], p["ln_f.bias"], eps=1e-5)
        logits = (x @ p["wte"].t())[..., :V]
        return F.cross_entropy(logits.reshape(-1, V), targets.reshape(-1))

    decay = [t for t in p.values() if t.dim() >= 2]
    no_decay = [t for t in p.values() if t.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=1e-3, betas=(0.9, 0.999), eps=1e-8)
    with open(a.data, "rb") as f:
        tokens = torch.tensor(list(f.read()), dtype=torch.long)
    gen = torch.Generator().manual_seed(1)
    times = []
    for step in range(a.warmup + a.steps):
        starts = torch.randint(0, tokens.numel() - T - 1, (B,), generator=gen)
        ids = torch.stack([tokens[s:s + T] for s in starts])
        targets = torch.stack([tokens[s + 1:s + T + 1] for s in starts])
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss = gpt_loss(ids, targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(list(p.values()), 1.0)
        opt.step()
        dt = time.perf_counter() - t0
        if step >= a.warmup:
            times.append(dt)
    mean = sum(times) / len(times)
    med = statistics.median(times)
    print("pytorch: %.2f ms/step %.0f tok/s (median %.2f ms/step %.0f tok/s) "
          "final loss %.4f" % (mean * 1e3, B * T / mean, med * 1e3, B * T / med,
                               loss.item()))


if __name__ == "__main__":
    main()
