#!/usr/bin/python3
"""Reference values for runtime/test/optim_test.cpp (AdamWTest.*).

Run with Debian's PyTorch (python3-torch, 1.13):
    /usr/bin/python3 runtime/test/gen_adamw_reference.py
and paste the printed arrays into optim_test.cpp.
"""
import torch

torch.set_printoptions(precision=10)

P0 = [0.5, -1.25, 2.0, 0.0, 3.5e-3, -0.75]
GRADS = [
    [0.1, -0.2, 0.3, -0.4, 0.5, 0.0],
    [-0.3, 0.25, 0.05, 1.5, -0.125, 0.01],
    [0.7, -0.6, -0.2, 0.1, 0.0, 2.0],
]


def fmt(name, t):
    vals = ", ".join("%.9ef" % v for v in t.tolist())
    print("// %s\n{%s}," % (name, vals))


def run(lr, betas, eps, wd, max_norm):
    p = torch.nn.Parameter(torch.tensor(P0, dtype=torch.float32))
    opt = torch.optim.AdamW([p], lr=lr, betas=betas, eps=eps, weight_decay=wd,
                            foreach=False)
    for step, g in enumerate(GRADS, start=1):
        p.grad = torch.tensor(g, dtype=torch.float32)
        if max_norm is not None:
            norm = torch.nn.utils.clip_grad_norm_([p], max_norm)
            print("// step %d total_norm %.9e" % (step, norm.item()))
        opt.step()
        st = opt.state[p]
        fmt("step %d param" % step, p.detach())
        fmt("step %d exp_avg" % step, st["exp_avg"])
        fmt("step %d exp_avg_sq" % step, st["exp_avg_sq"])
        bf = p.detach().to(torch.bfloat16).view(torch.int16).to(torch.int32) & 0xFFFF
        print("// step %d param as bf16 bits\n{%s}," % (
            step, ", ".join("0x%04x" % v for v in bf.tolist())))


print("// Case A: lr=0.1, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.1")
run(0.1, (0.9, 0.95), 1e-8, 0.1, None)
print("// Case B: lr=0.01, betas=(0.8, 0.999), eps=1e-6, weight_decay=0.5,"
      " clip_grad_norm_(max_norm=0.5)")
run(0.01, (0.8, 0.999), 1e-6, 0.5, 0.5)
