"""A user's own Llama-style decoder (not Hugging Face's code): nn.RMSNorm,
its own rotary embedding (theta 5e5, rotate_half), grouped-query SDPA with
enable_gqa, a SiLU-gated MLP with a plain SiLU on the side, tied head.
zero-import maps it to train.rms_norm, train.rope_table/train.rope (theta
inferred from the constant cos/sin), train.causal_attention with 2 K/V
heads, train.swiglu and train.silu (test/Tools/zero-import.test)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

V, C, H, HKV, D, FF, T, B = 256, 32, 4, 2, 8, 64, 16, 2


def rotate_half(x):
    return torch.cat((-x[..., D // 2:], x[..., : D // 2]), dim=-1)


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(V, C)
        self.norm1 = nn.RMSNorm(C, eps=1e-5)
        self.q = nn.Linear(C, H * D, bias=False)
        self.kv = nn.Linear(C, 2 * HKV * D, bias=False)
        self.o = nn.Linear(H * D, C, bias=False)
        self.norm2 = nn.RMSNorm(C, eps=1e-5)
        self.gate = nn.Linear(C, FF, bias=False)
        self.up = nn.Linear(C, FF, bias=False)
        self.down = nn.Linear(FF, C, bias=False)
        self.side = nn.Linear(C, C, bias=False)
        self.head = nn.Linear(C, V, bias=False)
        self.head.weight = self.tok.weight
        inv = 1.0 / (500000.0 ** (torch.arange(0, D, 2).float() / D))
        self.register_buffer("inv_freq", inv, persistent=False)

    def forward(self, ids):
        b, t = ids.shape
        x = self.tok(ids)
        pos = torch.arange(t, device=ids.device).float()
        freqs = torch.outer(pos, self.inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos(), emb.sin()
        h = self.norm1(x)
        q = self.q(h).view(b, t, H, D).transpose(1, 2)
        k, v = self.kv(h).view(b, t, 2, HKV, D).unbind(2)
        k, v = k.transpose(1, 2), v.transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        x = x + self.o(a.transpose(1, 2).reshape(b, t, H * D))
        h = self.norm2(x)
        x = x + self.down(F.silu(self.gate(h)) * self.up(h)) + F.silu(self.side(h))
        return self.head(x)


def zero_model():
    torch.manual_seed(0)
    ids = torch.randint(0, V, (B, T))
    return Decoder(), (ids, torch.roll(ids, -1, 1)), \
        lambda logits, t: F.cross_entropy(logits.flatten(0, 1), t.flatten())
