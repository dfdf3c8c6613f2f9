"""Models zero-import refuses, one entry point per construct (see
test/Tools/zero-import-errors.test)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Linear(nn.Module):
    def __init__(self, op):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.op = op

    def forward(self, x):
        return self.op(self, x)


def inputs():
    torch.manual_seed(0)
    return (torch.randn(2, 4), torch.randn(2, 4))


def branch(m, x):
    if x.sum() > 0:                                    # data-dependent
        return m.fc(x)
    return x


def inplace(m, x):
    m.fc.weight.mul_(0.5)                               # in-place on a parameter
    return m.fc(x)


def inplace_no_grad(m, x):
    with torch.no_grad():
        m.fc.weight.add_(1.0)                           # in-place under no_grad
    return m.fc(x)


def sigmoid(m, x):
    return torch.sigmoid(m.fc(x))                       # no train op


def gelu_exact(m, x):
    return F.gelu(m.fc(x))                              # approximate='none'


def dropout(m, x):
    return F.dropout(m.fc(x), 0.1, training=True)       # dropout p > 0


def make(op):
    return lambda: (Linear(op), inputs(), F.mse_loss)


data_dependent = make(branch)
inplace_param = make(inplace)
inplace_param_no_grad = make(inplace_no_grad)
unsupported_op = make(sigmoid)
exact_gelu = make(gelu_exact)
with_dropout = make(dropout)


def float64():
    m = Linear(lambda m, x: m.fc(x)).double()
    x, y = inputs()
    return m, (x.double(), y.double()), F.mse_loss


class Norm(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.bn = nn.BatchNorm1d(4)                     # running statistics

    def forward(self, x):
        return self.bn(self.fc(x))


def batch_norm():
    return Norm(), inputs(), F.mse_loss


def not_a_loss():
    return Linear(lambda m, x: m.fc(x)), inputs()[:1]   # returns [2, 4]


def raises():
    raise ValueError("no data here")


def not_a_module():
    return 3, inputs()


not_callable = 42


class Shifted(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(16, 4)

    def forward(self, ids, y):
        return F.mse_loss(self.emb(ids + 1), y)           # arithmetic on ids


def id_arithmetic():
    return Shifted(), (torch.zeros(2, 3, dtype=torch.long), torch.zeros(2, 3, 4))


class Rotary(nn.Module):
    """q * cos + rotate_half(q) * sin with positions 1..T (not 0..T-1)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x, y):
        q = self.fc(x).view(2, 4, 1, 8).transpose(1, 2)
        inv = 1.0 / (10000.0 ** (torch.arange(0, 8, 2).float() / 8))
        freqs = torch.outer(torch.arange(4).float() + 1, inv)
        emb = torch.cat((freqs, freqs), dim=-1)
        rot = torch.cat((-q[..., 4:], q[..., :4]), dim=-1)
        return F.mse_loss(q * emb.cos() + rot * emb.sin(), y)


def rope_offset():
    return Rotary(), (torch.randn(2, 4, 8), torch.randn(2, 1, 4, 8))


def _rotate(q, cos, sin):
    return q * cos + torch.cat((-q[..., 4:], q[..., :4]), dim=-1) * sin


class RotaryOf(nn.Module):
    """The rotation of q [2, 1, 4, 8] (or [2, 4, 8]) by a table `kind`."""

    def __init__(self, kind):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.kind = kind

    def forward(self, x, pos, y):
        q = self.fc(x)
        inv = 1.0 / (10000.0 ** (torch.arange(0, 8, 2).float() / 8))
        if self.kind == "input":                          # positions from an input
            freqs = pos[:, None] * inv
        else:
            freqs = torch.outer(torch.arange(4).float(), inv)
        emb = torch.cat((freqs, freqs), dim=-1)
        if self.kind == "interleaved":                    # (f0, f0, f1, f1, ...)
            emb = freqs.repeat_interleave(2, dim=-1)
        if self.kind != "3d":
            q = q.view(2, 4, 1, 8).transpose(1, 2)
        return F.mse_loss(_rotate(q, emb.cos(), emb.sin()), y)


def rope_entry(kind):
    shape = (2, 4, 8) if kind == "3d" else (2, 1, 4, 8)
    return lambda: (RotaryOf(kind), (torch.randn(2, 4, 8), torch.arange(4).float(),
                                     torch.randn(*shape)))


rope_from_input = rope_entry("input")
rope_3d = rope_entry("3d")
rope_interleaved = rope_entry("interleaved")


class Cross(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x, mem, y):
        q = self.fc(x).view(2, 1, 4, 8)
        k = mem.view(2, 1, 6, 8)                          # 6 keys for 4 queries
        return F.mse_loss(F.scaled_dot_product_attention(q, k, k, is_causal=True), y)


def cross_attention():
    return Cross(), (torch.randn(2, 4, 8), torch.randn(2, 6, 8), torch.randn(2, 1, 4, 8))


class PlainRMSNorm(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.norm = nn.RMSNorm(4, elementwise_affine=False)

    def forward(self, x):
        return self.norm(self.fc(x))


def rms_norm_no_weight():
    return PlainRMSNorm(), inputs(), F.mse_loss
