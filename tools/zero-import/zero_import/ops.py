"""The ATen -> train op rules, one function per ATen op (or op family).

Each rule takes the Lowering and the FX node and returns the node's value
(an ir.Value, or a list of them for multi-result ops). `SUPPORTED` is what
`zero-import --help` lists; `pattern_inputs` names the inputs of composite
patterns (the tanh GELU that Hugging Face spells out) so that liveness
skips their inner ops.
"""
import math

import torch

from . import decoder, ir
from .decoder import is_op as _is_op, num as _num
from .decoder import match_rms_norm, match_rope, match_swiglu, repeat_kv_source

_RULES = {}       # "aten.x.overload" -> rule
_PYTHON = {}      # Python callable (operator.getitem) -> rule
SUPPORTED = []    # (ATen ops, train op / what) for --help


def rule(*names, doc):
    def register(fn):
        for n in names:
            _RULES[n] = fn
        SUPPORTED.append((", ".join(n.replace(".default", "") for n in names), doc))
        return fn
    return register


def register_python(target, fn):
    _PYTHON[target] = fn


def supported_summary():
    ops = sorted({n.rsplit(".", 1)[0] if n.count(".") > 1 else n for n in _RULES})
    return ", ".join(ops)


def has_rule(node):
    return node.target in _PYTHON or str(node.target) in _RULES


def describe(node):
    """`aten.cos.default (rotary position embedding (RoPE))`."""
    name = str(node.target)
    hint = HINTS.get(name.split(".")[1] if name.startswith("aten.") else "", "")
    return name + (" (%s)" % hint if hint else "")


def lower(L, node):
    if node.target in _PYTHON:
        return _PYTHON[node.target](L, node)
    fn = _RULES.get(str(node.target))
    if fn is None:
        L.fail("unsupported op %s" % describe(node))
    return fn(L, node)


# Ops without a train op, with the layer that may use them (the message
# names both). RMSNorm, RoPE and SiLU have train ops in the forms
# decoder.py matches; these are what is left of other forms.
_ROPE_INPUT = ("rotary position embedding (RoPE) of positions that depend on an "
               "input: train.rope_table has positions 0..T-1")
_RMS_OTHER = "an RMSNorm not of the form w * (x * rsqrt(mean(x^2, -1) + eps))?"
HINTS = {
    "rsqrt": _RMS_OTHER, "mean": "a mean (%s)" % _RMS_OTHER,
    "pow": "a power (%s)" % _RMS_OTHER, "sigmoid": "sigmoid/SiLU",
    "cos": _ROPE_INPUT, "sin": _ROPE_INPUT,
    "neg": "negation (RoPE's rotate_half?)", "repeat_interleave": "grouped-query attention",
    "tanh": "tanh", "exp": "exp", "dropout": "dropout with p > 0",
    "native_dropout": "dropout with p > 0", "batch_norm": "BatchNorm",
    "_native_batch_norm_legit_functional": "BatchNorm",
    "_native_batch_norm_legit_no_training": "BatchNorm",
}


def arg(node, i, name, default=None):
    if len(node.args) > i:
        return node.args[i]
    return node.kwargs.get(name, default)


def out_shape(L, node):
    return L.meta_type(node).shape


def scalar(L, x):
    """A Python number or 0-d constant as float; None otherwise."""
    from .lower import Const
    v = L.value(x) if isinstance(x, torch.fx.Node) else x
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return float(v)
    if isinstance(v, Const) and v.tensor.dim() == 0:
        return float(v.tensor)
    return None


# --- views and copies ---------------------------------------------------------

@rule("aten.alias.default", "aten.clone.default", "aten.contiguous.default",
      "aten.lift_fresh_copy.default", "aten.type_as.default",
      doc="no op (same values)")
def identity(L, node):
    x = L.tensor(node.args[0])
    want = L.meta_type(node)
    if want.elem != x.type.elem:
        if ir.ID_TYPE in (want.elem, x.type.elem):
            L.fail("unsupported conversion %s of %s to %s (train.cast converts "
                   "floats; integer tensors are ids)" % (node.target, x.type.elem, want.elem))
        return L.fn.op("cast", [x], {}, [want])[0]
    return x


@rule("aten.to.dtype", "aten._to_copy.default", "aten.to.dtype_layout", "aten.to.device",
      doc="train.cast (float to float), or no op")
def to_dtype(L, node):
    return identity(L, node)


@rule("aten.dropout.default", doc="no op when p = 0 (dropout is not a train op)")
def dropout(L, node):
    p, train = arg(node, 1, "p"), arg(node, 2, "train")
    if p and train:
        L.fail("unsupported op aten.dropout with p = %g (the train dialect has no "
               "dropout; set the model's dropout probabilities to 0)" % p)
    return L.tensor(node.args[0])


@rule("aten.view.default", "aten.reshape.default", "aten._unsafe_view.default",
      "aten.unsqueeze.default", "aten.squeeze.dim", "aten.squeeze.dims",
      "aten.squeeze.default", "aten.flatten.using_ints", "aten.unflatten.int",
      "aten.view_as.default", "aten.reshape_as.default",
      doc="train.reshape")
def reshape(L, node):
    return L.fn.reshape(L.tensor(node.args[0]), out_shape(L, node))


@rule("aten.expand.default", "aten.expand_as.default",
      doc="train.broadcast (new or size-1 leading dimensions)")
def expand(L, node):
    x = L.tensor(node.args[0])
    return broadcast_to(L, x, out_shape(L, node))


def strip_leading_ones(L, x):
    shape = list(x.shape)
    while shape and shape[0] == 1:
        shape.pop(0)
    return L.fn.reshape(x, shape)


def broadcast_to(L, x, shape):
    shape = tuple(shape)
    if x.shape == shape:
        return x
    s = strip_leading_ones(L, x)
    if s.type.rank <= len(shape) and shape[len(shape) - s.type.rank:] == s.shape:
        return L.fn.reshape(s, shape) if s.type.numel() == math.prod(shape) else \
            L.fn.broadcast(s, shape)
    L.fail("broadcast of %s to %s along a non-leading dimension has no train op"
           % (list(x.shape), list(shape)))


@rule("aten.transpose.int", "aten.permute.default", "aten.t.default",
      "aten.swapaxes.default", doc="train.transpose")
def transpose(L, node):
    x = L.tensor(node.args[0])
    r = x.type.rank
    name = str(node.target)
    if name.startswith("aten.permute"):
        perm = [d % r for d in node.args[1]]
    else:
        perm = list(range(r))
        if name.startswith("aten.t."):
            d0, d1 = (0, 1) if r == 2 else (0, 0)
        else:
            d0, d1 = node.args[1] % r, node.args[2] % r
        perm[d0], perm[d1] = perm[d1], perm[d0]
    return L.fn.transpose(x, perm)


@rule("aten.split.Tensor", "aten.split_with_sizes.default", "aten.chunk.default",
      "aten.unsafe_split.Tensor", doc="train.split")
def split(L, node):
    x = L.tensor(node.args[0])
    dim = arg(node, 2, "dim", 0) % x.type.rank
    sizes = [v.shape[dim] for v in node.meta["val"]]
    return L.fn.split(x, dim, sizes)


@rule("aten.unbind.int", doc="train.split into size-1 pieces + train.reshape")
def unbind(L, node):
    x = L.tensor(node.args[0])
    dim = arg(node, 1, "dim", 0) % x.type.rank
    shape = x.shape[:dim] + x.shape[dim + 1:]
    return [L.fn.reshape(p, shape) for p in L.fn.split(x, dim, [1] * x.shape[dim])]


@rule("aten.slice.Tensor", doc="train.split (the piece kept), step 1")
def slice_(L, node):
    x = L.tensor(node.args[0])
    dim = arg(node, 1, "dim", 0) % x.type.rank
    step = arg(node, 4, "step", 1)
    if step != 1:
        L.fail("unsupported op aten.slice with step %d" % step)
    size = x.shape[dim]
    start = arg(node, 2, "start", 0) or 0
    end = arg(node, 3, "end", size)
    start = max(0, min(size, start + size if start < 0 else start))
    end = max(start, min(size, size if end is None else (end + size if end < 0 else end)))
    if (start, end) == (0, size):
        return x
    sizes = [s for s in (start, end - start, size - end) if s > 0]
    pieces = L.fn.split(x, dim, sizes)
    return pieces[1 if start > 0 else 0]


@rule("aten.cat.default", "aten.concat.default", doc="train.concat")
def concat(L, node):
    xs = [L.tensor(t) for t in node.args[0]]
    dim = arg(node, 1, "dim", 0) % xs[0].type.rank
    return L.fn.op("concat", xs, {"dim": dim}, [L.meta_type(node)])[0]


# --- matrix products ---------------------------------------------------------

def _untransposed(L, b):
    """(source, True) when b is a transpose of the last two dims."""
    op = b.op
    if op is not None and op.name == "transpose":
        perm = op.attrs["permutation"]
        r = len(perm)
        if r >= 2 and tuple(perm) == tuple(range(r - 2)) + (r - 1, r - 2):
            return op.operands[0], True
    return b, False


@rule("aten.linear.default", doc="train.matmul {transpose_b} (+ bias)")
def linear(L, node):
    x = L.tensor(node.args[0])
    w = L.tensor(node.args[1], "weight")
    b = arg(node, 2, "bias")
    bias = L.tensor(b, "bias") if b is not None else None
    if w.type.rank != 2 or x.type.rank < 2:
        L.fail("aten.linear of a %d-d input with a %d-d weight has no train op"
               % (x.type.rank, w.type.rank))
    return L.fn.matmul(x, w, bias, transpose_b=True)


@rule("aten.addmm.default", doc="train.matmul + bias (beta = alpha = 1)")
def addmm(L, node):
    if arg(node, 3, "beta", 1) != 1 or arg(node, 4, "alpha", 1) != 1:
        L.fail("unsupported op aten.addmm with beta or alpha other than 1")
    x = L.tensor(node.args[1])
    w, tb = _untransposed(L, L.tensor(node.args[2], "weight"))
    bias = L.tensor(node.args[0], "bias")
    if bias.type.rank != 1:
        L.fail("aten.addmm with a %d-d bias (the train op adds a [N] bias)" % bias.type.rank)
    return L.fn.matmul(x, w, bias, transpose_b=tb)


@rule("aten.mm.default", "aten.matmul.default", "aten.bmm.default",
      doc="train.matmul (shared [K, N] matrix, or equal batch dimensions)")
def matmul(L, node):
    a = L.tensor(node.args[0])
    b = L.tensor(node.args[1])
    if a.type.rank < 2 or b.type.rank < 2:
        L.fail("%s of %d-d and %d-d operands has no train op"
               % (node.target, a.type.rank, b.type.rank))
    b, tb = _untransposed(L, b)
    if b.type.rank == 2:
        return L.fn.matmul(a, b, None, transpose_b=tb)
    a, ta = _untransposed(L, a)
    if a.shape[:-2] != b.shape[:-2]:
        L.fail("%s with batch dimensions %s and %s (broadcast batches) has no "
               "train op" % (node.target, list(a.shape[:-2]), list(b.shape[:-2])))
    return L.fn.matmul(a, b, None, transpose_a=ta, transpose_b=tb)


# --- element-wise --------------------------------------------------------------

def binary(L, node, name, a, b):
    shape = out_shape(L, node)
    a, b = broadcast_to(L, a, shape), broadcast_to(L, b, shape)
    if a.type.elem != b.type.elem:
        L.fail("%s of %s and %s tensors (mixed element types)" % (node.target, a.type.elem, b.type.elem))
    if a.type.elem == ir.ID_TYPE:
        L.fail("unsupported op %s on integer tensors (train arithmetic is on "
               "floats; integer inputs are ids)" % node.target)
    return L.fn.elementwise(name, a, b)


@rule("aten.add.Tensor", "aten.sub.Tensor", "aten.add.Scalar", "aten.sub.Scalar",
      doc="train.add (a - b = a + scale(b, -1); + 0 is no op); "
          "x*cos + rotate_half(x)*sin: train.rope")
def add(L, node):
    rotary = match_rope(node)
    if rotary is not None:
        return rope_of(L, node, *rotary)
    sign = -1.0 if "sub" in str(node.target) else 1.0
    alpha = float(arg(node, 2, "alpha", 1)) * sign
    ca, cb = scalar(L, node.args[0]), scalar(L, node.args[1])
    if cb is not None and cb == 0:
        return L.tensor(node.args[0])
    if ca is not None and ca == 0 and sign > 0:
        return _scaled(L, L.tensor(node.args[1]), alpha)
    if ca is not None or cb is not None:
        L.fail("unsupported op %s of a tensor and the constant %g (train has no "
               "add-constant op)" % (node.target, cb if cb is not None else ca))
    a = L.tensor(node.args[0])
    b = _scaled(L, L.tensor(node.args[1]), alpha)
    return binary(L, node, "add", a, b)


def _scaled(L, x, factor):
    if factor == 1:
        return x
    if x.type.elem == ir.ID_TYPE:
        L.fail("unsupported op %s on integer tensors (train arithmetic is on "
               "floats; integer inputs are ids)" % L.node.target)
    return L.fn.unary("scale", x, factor=factor)


@rule("aten.mul.Tensor", "aten.mul.Scalar", "aten.div.Tensor", "aten.div.Scalar",
      doc="train.mul, or train.scale by a constant (x / c = scale(x, 1/c)); "
          "HF's RMSNorm: train.rms_norm; silu(g) * u: train.swiglu")
def mul(L, node):
    gelu = match_gelu_tanh(node)
    if gelu is not None:
        return L.fn.unary("gelu", L.tensor(gelu))
    norm = match_rms_norm(node)
    if norm is not None:
        return rms_norm_of(L, node, *norm)
    glu = match_swiglu(node)
    if glu is not None:
        return swiglu_of(L, node, *glu)
    div = "div" in str(node.target)
    ca, cb = scalar(L, node.args[0]), scalar(L, node.args[1])
    if div and (arg(node, 2, "rounding_mode") is not None):
        L.fail("unsupported op %s with rounding_mode" % node.target)
    if cb is not None:
        return _scaled(L, L.tensor(node.args[0]), 1.0 / cb if div else cb)
    if ca is not None and not div:
        return _scaled(L, L.tensor(node.args[1]), ca)
    if div:
        L.fail("unsupported op %s of two tensors (train has no division)" % node.target)
    return binary(L, node, "mul", L.tensor(node.args[0]), L.tensor(node.args[1]))


@rule("aten.neg.default", doc="train.scale by -1")
def neg(L, node):
    return _scaled(L, L.tensor(node.args[0]), -1.0)


@rule("aten.relu.default", doc="train.relu")
def relu(L, node):
    return L.fn.unary("relu", L.tensor(node.args[0]))


@rule("aten.gelu.default", doc="train.gelu (approximate='tanh' only)")
def gelu(L, node):
    if arg(node, 1, "approximate", "none") != "tanh":
        L.fail("unsupported op aten.gelu with approximate='none' (train.gelu is "
               "the tanh approximation: use approximate='tanh')")
    return L.fn.unary("gelu", L.tensor(node.args[0]))


@rule("aten.softmax.int", "aten._softmax.default",
      doc="train.softmax (last dimension)")
def softmax(L, node):
    x = L.tensor(node.args[0])
    if node.args[1] % x.type.rank != x.type.rank - 1:
        L.fail("unsupported op %s over dimension %d (train.softmax is over the "
               "last one)" % (node.target, node.args[1]))
    return L.fn.unary("softmax", x)


def match_gelu_tanh(node):
    """x when node is 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))) — the
    tanh-approximate GELU as Hugging Face's NewGELUActivation writes it."""
    if not _is_op(node, "aten.mul.Tensor"):
        return None
    for half, one_plus in ((node.args[0], node.args[1]), (node.args[1], node.args[0])):
        if not (_is_op(half, "aten.mul.Tensor") and _num(half.args[1], 0.5)):
            continue
        x = half.args[0]
        if not (_is_op(one_plus, "aten.add.Tensor") and _num(one_plus.args[1], 1.0)):
            continue
        t = one_plus.args[0]
        if not _is_op(t, "aten.tanh.default"):
            continue
        inner = t.args[0]
        if not (_is_op(inner, "aten.mul.Tensor") and _num(inner.args[1], math.sqrt(2 / math.pi))):
            continue
        s = inner.args[0]
        if not (_is_op(s, "aten.add.Tensor") and s.args[0] is x):
            continue
        c = s.args[1]
        if not (_is_op(c, "aten.mul.Tensor") and _num(c.args[1], 0.044715)):
            continue
        p = c.args[0]
        if _is_op(p, "aten.pow.Tensor_Scalar") and p.args[0] is x and _num(p.args[1], 3.0):
            return x
    return None


def match_nll_of_log_softmax(node):
    """(logits, targets) when node is nll_loss(log_softmax(logits, -1),
    targets): the cross-entropy written in two steps."""
    if not (_is_op(node, "aten.nll_loss_nd.default") or _is_op(node, "aten.nll_loss.default")
            or _is_op(node, "aten.nll_loss_forward.default")):
        return None
    ls = node.args[0]
    if not (_is_op(ls, "aten.log_softmax.int") or _is_op(ls, "aten._log_softmax.default")):
        return None
    rank = ls.meta["val"].dim()
    if ls.args[1] % rank != rank - 1:
        return None
    return ls.args[0], node.args[1]


def pattern_inputs(node):
    """The inputs of the composite pattern rooted at node, or None."""
    x = match_gelu_tanh(node)
    if x is not None:
        return [x]
    for match in (match_rms_norm, match_swiglu, match_rope):
        found = match(node)
        if found is not None:
            return [v for v in found if isinstance(v, torch.fx.Node)]
    if _is_op(node, "aten.scaled_dot_product_attention.default"):
        k, v = (repeat_kv_source(a) for a in node.args[1:3])
        if k is not None or v is not None:
            args = list(node.args)
            args[1], args[2] = k or args[1], v or args[2]
            return [a for a in args + list(node.kwargs.values()) if isinstance(a, torch.fx.Node)]
    pair = match_nll_of_log_softmax(node)
    return list(pair) if pair is not None else None


# --- normalization, embedding, attention -------------------------------------

@rule("aten.layer_norm.default", "aten.native_layer_norm.default",
      doc="train.layer_norm (last dimension, with weight and bias)")
def layer_norm(L, node):
    x = L.tensor(node.args[0])
    shape = list(node.args[1])
    native = "native" in str(node.target)
    w, b = arg(node, 2, "weight"), arg(node, 3, "bias")
    eps = arg(node, 4, "eps", 1e-5)
    if len(shape) != 1 or shape[0] != x.shape[-1]:
        L.fail("unsupported op %s over %d dimensions (train.layer_norm is over "
               "the last one)" % (node.target, len(shape)))
    if w is None or b is None:
        L.fail("unsupported op %s without weight or bias (elementwise_affine="
               "False or bias=False)" % node.target)
    y = L.fn.op("layer_norm", [x, L.tensor(w, "weight"), L.tensor(b, "bias")],
                {"eps": eps}, [x.type])[0]
    if native:
        return [y, None, None]
    return y


@rule("aten.embedding.default", doc="train.embedding (constant arange ids: the table's rows)")
def embedding(L, node):
    from .lower import Const
    table = L.tensor(node.args[0], "table")
    ids = L.value(node.args[1])
    if arg(node, 2, "padding_idx", -1) not in (-1, None):
        L.fail("unsupported op aten.embedding with padding_idx")
    if isinstance(ids, Const):
        t = ids.tensor
        flat = t.reshape(-1)
        n = flat.numel()
        if n and bool((flat == torch.arange(n, dtype=flat.dtype)).all()) and n <= table.shape[0]:
            rows = table if n == table.shape[0] else \
                L.fn.split(table, 0, [n, table.shape[0] - n])[0]
            return L.fn.reshape(rows, tuple(t.shape) + (table.shape[1],))
        L.fail("aten.embedding with constant ids other than arange(n)")
    if not isinstance(ids, ir.Value) or ids.type.elem != ir.ID_TYPE:
        L.fail("aten.embedding with non-integer ids")
    return L.fn.op("embedding", [table, ids], {}, [L.meta_type(node)])[0]


def _causal_mask(t):
    """Whether a constant attention mask [.., T, T] is the causal mask."""
    if t.dim() < 2 or t.shape[-1] != t.shape[-2]:
        return False
    n = t.shape[-1]
    causal = torch.ones(n, n, dtype=torch.bool).tril()
    if t.dtype == torch.bool:
        return bool((t == causal).all())
    if t.is_floating_point():
        allowed = t == 0
        blocked = torch.isneginf(t) | (t <= torch.finfo(t.dtype).min / 2)
        return bool((allowed == causal).all() and (blocked == ~causal).all())
    return False


def _packed_source(L, q, k, v, heads):
    """qkv [B, T, 3C] when q, k, v are its three C-wide pieces split into
    heads ([B, T, H, D] transposed to [B, H, T, D]): the packed form."""
    pieces = []
    for x in (q, k, v):
        op = x.op
        if op is None or op.name != "transpose" or tuple(op.attrs["permutation"]) != (0, 2, 1, 3):
            return None
        r = op.operands[0]
        if r.op is None or r.op.name != "reshape":
            return None
        pieces.append(r.op.operands[0])
    split_op = pieces[0].op
    if split_op is None or split_op.name != "split" or len(split_op.results) != 3:
        return None
    if [p.op for p in pieces] != [split_op] * 3 or [p.index for p in pieces] != [0, 1, 2]:
        return None
    qkv = split_op.operands[0]
    if qkv.type.rank != 3 or split_op.attrs["dim"] != 2:
        return None
    c = pieces[0].shape[2]
    if qkv.shape[2] != 3 * c or c % heads or pieces[0].shape[:2] != q.shape[:1] + q.shape[2:3]:
        return None
    return qkv


@rule("aten.scaled_dot_product_attention.default",
      doc="train.causal_attention(_packed): is_causal or the causal mask, scale "
          "1/sqrt(D), no dropout; k, v with fewer heads (enable_gqa, or HF's "
          "repeat_kv of them): grouped-query attention")
def sdpa(L, node):
    from .lower import Const
    q = L.tensor(node.args[0])
    k, v = (L.tensor(repeat_kv_source(node.args[i]) or node.args[i]) for i in (1, 2))
    mask = L.value(arg(node, 3, "attn_mask"))
    dropout_p = arg(node, 4, "dropout_p", 0.0)
    is_causal = arg(node, 5, "is_causal", False)
    scale = node.kwargs.get("scale", node.args[6] if len(node.args) > 6 else None)
    if q.type.rank != 4 or k.type.rank != 4:
        L.fail("scaled_dot_product_attention of %d-d tensors" % q.type.rank)
    if k.shape != v.shape or q.shape[0] != k.shape[0] or q.shape[2:] != k.shape[2:] or \
            q.shape[1] % k.shape[1]:
        L.fail("scaled_dot_product_attention with q %s, k %s, v %s (cross "
               "attention or other head dims; train.causal_attention takes q "
               "[B, H, T, D] and k, v [B, Hkv, T, D] with Hkv dividing H)"
               % (list(q.shape), list(k.shape), list(v.shape)))
    if dropout_p:
        L.fail("scaled_dot_product_attention with dropout_p = %g" % dropout_p)
    d = q.shape[-1]
    if scale is not None and abs(scale * math.sqrt(d) - 1) > 1e-6:
        L.fail("scaled_dot_product_attention with scale %g (train.causal_attention "
               "scales by 1/sqrt(D) = %g)" % (scale, 1 / math.sqrt(d)))
    if mask is not None:
        if isinstance(mask, Const) and "causal" not in mask.facts:
            mask.facts["causal"] = _causal_mask(mask.tensor)   # one mask, every layer
        if not isinstance(mask, Const) or not mask.facts["causal"]:
            L.fail("scaled_dot_product_attention with an attention mask that is "
                   "not the constant causal mask (padding masks are not supported)")
    elif not is_causal:
        L.fail("scaled_dot_product_attention without a causal mask (train has "
               "causal attention only)")
    b, h, t, _ = q.shape
    lse_type = ir.TensorType((b, h, t), "f32")
    qkv = _packed_source(L, q, k, v, h) if k.shape == q.shape else None
    if qkv is not None:
        y, _ = L.fn.op("causal_attention_packed", [qkv], {"heads": h},
                       [qkv.type.with_shape((b, t, h * d)), lse_type])
        return L.fn.transpose(L.fn.reshape(y, (b, t, h, d)), (0, 2, 1, 3))
    o, _ = L.fn.op("causal_attention", [q, k, v], {}, [q.type, lse_type])
    return o


# --- the decoder: RMSNorm, SiLU/SwiGLU, RoPE (decoder.py's patterns) ---------

def rms_norm_op(L, x, w, eps):
    """train.rms_norm of x [..., C] with the weight w [C] (eps > 0)."""
    if w.type.shape != (x.shape[-1],) or w.type.elem != x.type.elem:
        L.fail("RMSNorm of a %s input with a %s weight (train.rms_norm takes a "
               "[C] weight of the input's element type)" % (x.type, w.type))
    return L.fn.op("rms_norm", [x, w], {"eps": eps}, [x.type])[0]


def rms_norm_of(L, node, x, w, eps):
    return rms_norm_op(L, L.tensor(x), L.tensor(w, "weight"), eps)


@rule("aten.rms_norm.default", doc="train.rms_norm (last dimension, with weight)")
def rms_norm(L, node):
    x = L.tensor(node.args[0])
    shape, w = list(arg(node, 1, "normalized_shape")), arg(node, 2, "weight")
    eps = arg(node, 3, "eps")
    if len(shape) != 1 or shape[0] != x.shape[-1]:
        L.fail("unsupported op aten.rms_norm over %d dimensions (train.rms_norm "
               "is over the last one)" % len(shape))
    if w is None:
        L.fail("unsupported op aten.rms_norm without weight (elementwise_affine=False)")
    if eps is None:
        eps = float(torch.finfo(node.args[0].meta["val"].dtype).eps)
    return rms_norm_op(L, x, L.tensor(w, "weight"), float(eps))


@rule("aten.silu.default", doc="train.silu (silu(g) * u: train.swiglu)")
def silu(L, node):
    return L.fn.unary("silu", L.tensor(node.args[0]))


def swiglu_of(L, node, gate, up):
    g, u = L.tensor(gate), L.tensor(up)
    if g.type != u.type:
        L.fail("silu(gate) * up of %s and %s tensors (train.swiglu takes equal "
               "types)" % (g.type, u.type))
    return L.fn.op("swiglu", [g, u], {}, [g.type])[0]


def rope_of(L, node, x, cos, sin):
    """train.rope of x ([B, H, T, D] as HF applies it, or [B, T, H, D]) by
    the constant cos/sin, which must be a train.rope_table (the config's
    theta and llama3 scaling, else theta inferred from the values)."""
    from .lower import Const
    xv = L.tensor(x)
    c, s = L.value(cos), L.value(sin)
    if not (isinstance(c, Const) and isinstance(s, Const)):
        L.fail("rotary position embedding whose cos/sin depend on the inputs "
               "(position ids passed to the model?); train.rope takes the "
               "positions 0..T-1 of the batch")
    if xv.type.rank != 4:
        L.fail("rotary position embedding of a %d-d tensor (train.rope takes "
               "[B, T, H, D])" % xv.type.rank)
    table, seq_dim = _rope_table_of(L, xv, c.tensor, s.tensor)
    rows, half = table.shape[0], table.shape[1]
    theta, llama3 = _rope_parameters(L, table, c.tensor.dtype)
    attrs = {"theta": theta}
    if llama3 is not None:
        attrs["llama3"] = tuple(llama3)
    key = ("rope_table", rows, half, theta, llama3)
    tab = L.memo.get(key)
    if tab is None:
        tab = L.memo[key] = L.fn.op("rope_table", [], attrs,
                                    [ir.TensorType((rows, half, 2), "f32")])[0]
    perm = (0, 2, 1, 3) if seq_dim == 2 else (0, 1, 2, 3)
    xt = L.fn.transpose(xv, perm)
    y = L.fn.op("rope", [xt, tab], {"layout": "rotate_half"}, [xt.type])[0]
    return L.fn.transpose(y, perm)


def _rope_table_of(L, x, cos, sin):
    """The [T, D/2, 2] table of HF's cos/sin ([..., T, D], repeated as
    cat(freqs, freqs), broadcast over batch and heads) for x [B, H, T, D]
    (seq dim 2) or [B, T, H, D] (seq dim 1)."""
    d = x.shape[-1]
    for seq_dim in (2, 1):
        t = x.shape[seq_dim]
        ok = cos.shape == sin.shape and cos.dim() <= 4 and cos.shape[-1] == d
        full = (1,) * (4 - cos.dim()) + tuple(cos.shape) if ok else ()
        if not ok or full[seq_dim] != t or full[3 - seq_dim] != 1:
            continue
        c = cos.reshape(full).movedim(seq_dim, 2).reshape(-1, t, d)
        s = sin.reshape(full).movedim(seq_dim, 2).reshape(-1, t, d)
        if not (bool((c == c[:1]).all()) and bool((s == s[:1]).all())):
            L.fail("rotary position embedding whose positions differ between "
                   "the batch's rows (train.rope uses positions 0..T-1 for each)")
        c, s = c[0], s[0]
        h = d // 2
        if not (bool((c[:, :h] == c[:, h:]).all()) and bool((s[:, :h] == s[:, h:]).all())):
            L.fail("rotary position embedding whose cos/sin are not repeated as "
                   "cat(freqs, freqs) (rotate_half pairs i and i + D/2 with one "
                   "frequency)")
        return torch.stack((c[:, :h].float(), s[:, :h].float()), dim=-1), seq_dim
    L.fail("rotary position embedding of %s by cos/sin %s (train.rope: [B, T, H, D] "
           "or [B, H, T, D] by [T, D] tables)" % (list(x.shape), list(cos.shape)))


def _rope_parameters(L, table, dtype):
    """(theta, llama3 or None) of the train.rope_table equal to `table`:
    the Hugging Face config's (L.hints["rope"]) or, without one, theta
    inferred from the values with the default frequencies."""
    tol = 2e-6 if dtype == torch.float32 else 8e-3
    hint = L.hints.get("rope")
    candidates = [hint] if hint is not None else []
    if table.shape[0] >= 2 and table.shape[1] >= 2:
        theta = decoder.infer_theta(table)
        if theta is not None:
            candidates.append((theta, None))
    tried = []
    for theta, llama3 in candidates:
        diff = decoder.table_difference(table, theta, llama3, dtype)
        if diff <= tol:
            return float(theta), None if llama3 is None else tuple(llama3)
        tried.append("theta %g%s%s: max difference %.2g" % (
            theta, " with llama3 scaling" if llama3 else "",
            " (the config's)" if hint is not None and (theta, llama3) == hint
            else " (inferred)", diff))
    L.fail("rotary position embedding whose cos/sin are not a train.rope_table "
           "(%s; the table has the frequencies theta^(-2i/D), optionally with "
           "llama3 scaling, at positions 0..T-1, without attention scaling)"
           % ("; ".join(tried) or "too small to infer theta"))


# --- losses --------------------------------------------------------------------

@rule("aten.cross_entropy_loss.default",
      doc="train.cross_entropy (logits [N, V], mean, no weights or smoothing)")
def cross_entropy(L, node):
    logits = L.tensor(node.args[0])
    targets = L.tensor(node.args[1], "targets")
    weight = arg(node, 2, "weight")
    reduction = arg(node, 3, "reduction", 1)
    smoothing = arg(node, 5, "label_smoothing", 0.0)
    if weight is not None or reduction != 1 or smoothing:
        L.fail("unsupported op aten.cross_entropy_loss with class weights, "
               "reduction other than 'mean' or label smoothing")
    if logits.type.rank != 2 or targets.type.rank != 1 or targets.type.elem != ir.ID_TYPE:
        L.fail("aten.cross_entropy_loss of logits %s and targets %s (train takes "
               "[N, V] logits and [N] integer targets)"
               % (list(logits.shape), list(targets.shape)))
    return L.fn.op("cross_entropy", [logits, targets], {},
                   [ir.TensorType((), "f32")])[0]


@rule("aten.nll_loss_nd.default", "aten.nll_loss.default", "aten.nll_loss_forward.default",
      doc="train.cross_entropy, of log_softmax(logits, -1) (mean, no weights)")
def nll_loss(L, node):
    pair = match_nll_of_log_softmax(node)
    if pair is None:
        L.fail("unsupported op %s of something other than log_softmax over the "
               "last dimension (train has the fused cross-entropy only)" % node.target)
    if arg(node, 2, "weight") is not None or arg(node, 3, "reduction", 1) != 1:
        L.fail("unsupported op %s with class weights or reduction other than 'mean'"
               % node.target)
    logits, targets = L.tensor(pair[0]), L.tensor(pair[1], "targets")
    if logits.type.rank != 2 or targets.type.rank != 1 or targets.type.elem != ir.ID_TYPE:
        L.fail("%s of logits %s and targets %s (train takes [N, V] logits and [N] "
               "integer targets)" % (node.target, list(logits.shape), list(targets.shape)))
    return L.fn.op("cross_entropy", [logits, targets], {}, [ir.TensorType((), "f32")])[0]


@rule("aten.mse_loss.default", doc="train.mse (mean)")
def mse(L, node):
    x, y = L.tensor(node.args[0]), L.tensor(node.args[1], "target")
    if arg(node, 2, "reduction", 1) != 1:
        L.fail("unsupported op aten.mse_loss with reduction other than 'mean'")
    if x.shape != y.shape:
        y = broadcast_to(L, y, x.shape)
    return L.fn.op("mse", [x, y], {}, [ir.TensorType((), "f32")])[0]


@rule("aten.broadcast_tensors.default", doc="train.broadcast of each operand")
def broadcast_tensors(L, node):
    xs = [L.tensor(t) for t in node.args[0]]
    shapes = [tuple(v.shape) for v in node.meta["val"]]
    return [broadcast_to(L, x, s) for x, s in zip(xs, shapes)]
