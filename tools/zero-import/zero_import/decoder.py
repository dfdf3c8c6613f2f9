"""Graph patterns of the Llama / Qwen3 / Mistral decoder, as torch.export
spells Hugging Face's modules, and the rotary table they fold into.

Each `match_*` takes an FX node and returns the pattern's inputs (FX nodes
and numbers) when the node is the root of the pattern, else None; ops.py
lowers a match to one train op and `ops.pattern_inputs` makes liveness skip
the pattern's inner ops. The matchers look at the graph only (no values),
so a match never depends on the weights.

  * RMSNorm (HF `LlamaRMSNorm`, `Qwen3RMSNorm`, `MistralRMSNorm`):
    `w * to(to(x, f32) * rsqrt(mean(pow(to(x, f32), 2), [-1], keepdim) + eps), x.dtype)`
    -> `train.rms_norm(x, w, eps)` (the casts are optional; the weight may
    multiply from either side).
  * SwiGLU (HF `LlamaMLP`): `silu(gate) * up` -> `train.swiglu(gate, up)`.
  * RoPE (HF `apply_rotary_pos_emb`): `x * cos + rotate_half(x) * sin` with
    `rotate_half(x) = cat(-x[..., D/2:], x[..., :D/2])` -> `train.rope` with
    `layout(<rotate_half>)`; cos and sin must be constants of the import
    (HF computes them from the `inv_freq` buffer and arange position ids),
    and equal to a `train.rope_table` (checked numerically, `rope_table`).
  * GQA (HF `repeat_kv`): `reshape(expand(unsqueeze(kv, 2), [B, Hkv, n, T,
    D]), [B, Hkv·n, T, D])` -> kv itself, read by `train.causal_attention`
    with Hkv heads.
"""
import math

import torch

# Casts that keep the values of a float tensor apart from rounding.
_CASTS = ("aten.to.dtype", "aten._to_copy.default", "aten.to.dtype_layout",
          "aten.type_as.default")
_RESHAPES = ("aten.view.default", "aten.reshape.default", "aten._unsafe_view.default")


def is_op(n, name):
    """Whether n is an FX call of the ATen op `name` (`aten.x.overload`)."""
    return isinstance(n, torch.fx.Node) and n.op == "call_function" and \
        str(n.target) == name


def num(x, want, tol=1e-6):
    """Whether x is the Python number `want` (within tol, relative)."""
    return isinstance(x, (int, float)) and not isinstance(x, bool) and \
        abs(float(x) - want) <= tol * max(1.0, abs(want))


def _shape(n):
    val = n.meta.get("val") if isinstance(n, torch.fx.Node) else None
    return tuple(val.shape) if isinstance(val, torch.Tensor) else None


def _uncast(n):
    """n without the float casts around it."""
    while isinstance(n, torch.fx.Node) and str(n.target) in _CASTS and \
            n.op == "call_function":
        n = n.args[0]
    return n


def _pairs(node):
    """(a, b) and (b, a) for a binary node's two operands."""
    a, b = node.args[0], node.args[1]
    return ((a, b), (b, a))


def match_rms_norm(node):
    """(x, weight, eps) when node is HF's RMSNorm of x [..., C] with the
    weight [C] (see the module docstring)."""
    if not is_op(node, "aten.mul.Tensor"):
        return None
    for w, normed in _pairs(node):
        m = _uncast(normed)
        if not is_op(m, "aten.mul.Tensor") or _shape(w) is None:
            continue
        for xf, r in _pairs(m):
            if not is_op(r, "aten.rsqrt.default"):
                continue
            s = r.args[0]
            if not is_op(s, "aten.add.Tensor") or len(s.args) < 2:
                continue
            mean, eps = s.args[0], s.args[1]
            if not (isinstance(eps, (int, float)) and eps > 0):
                continue
            if not is_op(mean, "aten.mean.dim") or not isinstance(mean.args[0], torch.fx.Node):
                continue
            dims = list(mean.args[1]) if len(mean.args) > 1 else []
            keep = mean.args[2] if len(mean.args) > 2 else mean.kwargs.get("keepdim", False)
            p = mean.args[0]
            if not (is_op(p, "aten.pow.Tensor_Scalar") and num(p.args[1], 2.0)) or \
                    _uncast(p.args[0]) is not _uncast(xf) or not keep:
                continue
            x = _uncast(xf)
            shape = _shape(x)
            if shape is None or len(dims) != 1 or dims[0] % len(shape) != len(shape) - 1:
                continue
            if _shape(w) != (shape[-1],) or _shape(node) != shape or \
                    x.meta["val"].dtype != node.meta["val"].dtype:
                continue
            return x, w, float(eps)
    return None


def match_swiglu(node):
    """(gate, up) when node is silu(gate) * up of equal shapes."""
    if not is_op(node, "aten.mul.Tensor"):
        return None
    for s, up in _pairs(node):
        if is_op(s, "aten.silu.default") and isinstance(up, torch.fx.Node) and \
                _shape(s) is not None and _shape(s) == _shape(up) == _shape(node):
            return s.args[0], up
    return None


def _slice_of(n, x, dim, start, end):
    """Whether n is x[..., start:end] along the last dim `dim` (step 1)."""
    if not is_op(n, "aten.slice.Tensor") or n.args[0] is not x:
        return False
    args = list(n.args) + [None] * (5 - len(n.args))
    d, s, e, step = args[1], args[2] or 0, args[3], args[4] or 1
    size = _shape(x)[dim]
    e = size if e is None or e >= size else e
    return d is not None and d % len(_shape(x)) == dim and step == 1 and (s, e) == (start, end)


def _rotate_half_of(n):
    """x when n is cat(-x[..., D/2:], x[..., :D/2], -1) (HF rotate_half)."""
    if not is_op(n, "aten.cat.default") or len(n.args[0]) != 2:
        return None
    neg, lo = n.args[0]
    if not is_op(neg, "aten.neg.default"):
        return None
    hi = neg.args[0]
    x = hi.args[0] if isinstance(hi, torch.fx.Node) and hi.args else None
    shape = _shape(x)
    if shape is None or shape[-1] % 2:
        return None
    rank, d = len(shape), shape[-1]
    dim = n.args[1] if len(n.args) > 1 else n.kwargs.get("dim", 0)
    if dim % rank != rank - 1:
        return None
    if _slice_of(hi, x, rank - 1, d // 2, d) and _slice_of(lo, x, rank - 1, 0, d // 2):
        return x
    return None


def match_rope(node):
    """(x, cos, sin) when node is x * cos + rotate_half(x) * sin."""
    if not is_op(node, "aten.add.Tensor") or len(node.args) != 2 or node.kwargs.get("alpha", 1) != 1:
        return None
    for plain, rotated in _pairs(node):
        if not (is_op(plain, "aten.mul.Tensor") and is_op(rotated, "aten.mul.Tensor")):
            continue
        for rot, sin in _pairs(rotated):
            x = _rotate_half_of(rot)
            if x is None or not isinstance(sin, torch.fx.Node):
                continue
            for xx, cos in _pairs(plain):
                if xx is x and isinstance(cos, torch.fx.Node) and _shape(node) == _shape(x):
                    return x, cos, sin
    return None


def repeat_kv_source(node):
    """kv [B, Hkv, T, D] when node is HF's repeat_kv of it to [B, Hkv·n, T, D]."""
    if not isinstance(node, torch.fx.Node) or str(node.target) not in _RESHAPES:
        return None
    e = node.args[0]
    if not is_op(e, "aten.expand.default"):
        return None
    u = e.args[0]
    if not (is_op(u, "aten.unsqueeze.default") and u.args[1] == 2):
        return None
    kv, shape, expanded = u.args[0], _shape(node), _shape(e)
    src = _shape(kv)
    if src is None or len(src) != 4 or shape is None or expanded is None:
        return None
    b, hkv, t, d = src
    n = expanded[2]
    if expanded != (b, hkv, n, t, d) or shape != (b, hkv * n, t, d):
        return None
    return kv


# --- the rotary table ----------------------------------------------------------

def rope_table(theta, half, positions, llama3=None):
    """[T, half, 2] f32: cos and sin of t · f_i, as train.rope_table computes
    it (runtime/src/common/rope_table.h: f_i = 1 / theta^(2i / 2half) in f32, the
    llama3 rescaling (factor, low, high, original) in f32, the angle in f32,
    its cos/sin rounded to f32)."""
    f32 = torch.float32
    exponent = torch.arange(half, dtype=f32) * 2 / torch.tensor(2 * half, dtype=f32)
    inv = 1.0 / torch.pow(torch.tensor(theta, dtype=f32), exponent)
    if llama3 is not None:
        factor, low, high, original = (torch.tensor(float(v), dtype=f32) for v in llama3)
        wavelen = 2.0 * torch.tensor(math.pi, dtype=f32) / inv
        smooth = (original / wavelen - low) / (high - low)
        mid = (1.0 - smooth) * inv / factor + smooth * inv
        inv = torch.where(wavelen > original / low, inv / factor,
                          torch.where(wavelen < original / high, inv, mid))
    angle = (torch.arange(positions, dtype=f32)[:, None] * inv[None, :]).double()
    return torch.stack((angle.cos(), angle.sin()), dim=-1).float()


def infer_theta(table):
    """theta from a [T, half, 2] cos/sin table (T >= 2, half >= 2): the
    angle of position 1 at frequency 1 is theta^(-1/half); rounded to 4
    significant digits (the values models use: 1e4, 5e5, 1e6)."""
    angle = math.atan2(float(table[1, 1, 1]), float(table[1, 1, 0]))
    if not angle > 0:
        return None
    theta = angle ** (-table.shape[1])
    digits = 3 - int(math.floor(math.log10(theta)))
    return round(theta, digits)


def table_difference(table, theta, llama3, dtype):
    """The largest |table - rope_table(theta, llama3)| after rounding the
    latter to dtype (the model's cos/sin dtype)."""
    want = rope_table(theta, table.shape[1], table.shape[0], llama3).to(dtype).float()
    return float((table.float() - want).abs().max())
