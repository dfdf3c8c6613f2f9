"""A small builder for `train`-dialect MLIR text.

Values are SSA results of ops recorded in creation order; the builder's
helpers fold what PyTorch's graphs spell out but the train dialect does not
need (no-op reshapes, chains of reshapes or transposes, a linear layer on
flattened rows), and `Function.render` prints only the ops the returned
values depend on (dead-code elimination). Op syntax follows each op's
`assemblyFormat` in dialects/Train/TrainOps.td.
"""
import math
import re

# Element types of the train dialect, by MLIR spelling.
FLOAT_TYPES = ("f32", "bf16", "f16")
ID_TYPE = "i32"


class TensorType:
    """A static tensor type: shape (tuple of ints) and element type."""

    __slots__ = ("shape", "elem")

    def __init__(self, shape, elem):
        self.shape = tuple(int(d) for d in shape)
        self.elem = elem

    def __eq__(self, other):
        return isinstance(other, TensorType) and (self.shape, self.elem) == (
            other.shape, other.elem)

    def __hash__(self):
        return hash((self.shape, self.elem))

    @property
    def rank(self):
        return len(self.shape)

    def numel(self):
        return math.prod(self.shape)

    def with_shape(self, shape):
        return TensorType(shape, self.elem)

    def __str__(self):
        dims = "".join("%dx" % d for d in self.shape)
        return "tensor<%s%s>" % (dims, self.elem)


class Value:
    """Result `index` of `op`."""

    __slots__ = ("op", "index", "type")

    def __init__(self, op, index, type_):
        self.op, self.index, self.type = op, index, type_

    @property
    def shape(self):
        return self.type.shape


class Op:
    """One op: name (without `train.`), operands, attributes, result types."""

    __slots__ = ("name", "operands", "attrs", "results", "order")

    def __init__(self, name, operands, attrs, result_types, order):
        self.name, self.operands, self.attrs = name, list(operands), dict(attrs)
        self.results = [Value(self, i, t) for i, t in enumerate(result_types)]
        self.order = order


_BARE_ID = re.compile(r"^[A-Za-z_][A-Za-z0-9_$.]*$")


def symbol(name):
    """`@name`, quoted when it is not a bare MLIR identifier."""
    if _BARE_ID.match(name):
        return "@" + name
    return '@"%s"' % name.replace("\\", "\\\\").replace('"', '\\"')


def float_attr(x):
    """A float literal MLIR parses back to the same double."""
    s = repr(float(x))
    if s in ("inf", "-inf", "nan"):
        raise ValueError("non-finite float attribute %s" % s)
    mantissa, _, exponent = s.partition("e")
    if "." not in mantissa:
        mantissa += ".0"
    return mantissa + ("e" + exponent if exponent else "")


class Param:
    """A `train.param`: name, type, initializer ("zeros", "ones" or
    ("normal", std)) and trainability."""

    __slots__ = ("name", "type", "init", "trainable")

    def __init__(self, name, type_, init, trainable):
        self.name, self.type, self.init, self.trainable = name, type_, init, trainable

    def render(self):
        if isinstance(self.init, tuple):
            init = "<normal, %s>" % float_attr(self.init[1])
        else:
            init = "<%s>" % self.init
        return "train.param %s : %s init(%s)%s" % (
            symbol(self.name), self.type, init, " trainable" if self.trainable else "")


class Function:
    """A func.func being built: arguments, ops, and the folding helpers."""

    def __init__(self, name, arg_types, params):
        self.name = name
        self.params = params                 # name -> Param
        self.ops = []
        self.args = [Value(None, i, t) for i, t in enumerate(arg_types)]
        self.arg_names = None                # train.name per argument (arrays)
        self.loads = {}                      # param name -> Value
        self.results = []

    # --- raw construction -------------------------------------------------

    def _op(self, name, operands, attrs, result_types):
        op = Op(name, operands, attrs, result_types, len(self.ops))
        self.ops.append(op)
        return op

    def _one(self, name, operands, attrs, result_type):
        return self._op(name, operands, attrs, [result_type]).results[0]

    # --- ops --------------------------------------------------------------

    def load(self, name):
        """The parameter's value (one train.load per parameter)."""
        if name not in self.loads:
            self.loads[name] = self._one("load", [], {"sym": name},
                                         self.params[name].type)
        return self.loads[name]

    def reshape(self, x, shape):
        shape = tuple(shape)
        if x.shape == shape:
            return x
        if x.op is not None and x.op.name == "reshape":
            return self.reshape(x.op.operands[0], shape)
        folded = self._unflatten_linear(x, shape)
        if folded is not None:
            return folded
        return self._one("reshape", [x], {}, x.type.with_shape(shape))

    def _unflatten_linear(self, x, shape):
        """reshape(matmul(reshape(s, [M, K]), W), [..., N]) with s [..., K]
        is one batched linear layer on s: PyTorch flattens the rows
        (HF Conv1D's addmm), the train dialect takes them as they are."""
        op = x.op
        if op is None or op.name != "matmul" or op.attrs.get("transpose_a"):
            return None
        a, b = op.operands[0], op.operands[1]
        if b.type.rank != 2 or a.type.rank != 2 or a.op is None or a.op.name != "reshape":
            return None
        s = a.op.operands[0]
        if s.shape[-1] != a.shape[-1] or tuple(shape[:-1]) != s.shape[:-1] or \
                shape[-1] != x.shape[-1]:
            return None
        return self.matmul(s, b, op.operands[2] if len(op.operands) > 2 else None,
                           transpose_b=bool(op.attrs.get("transpose_b")))

    def transpose(self, x, perm):
        perm = tuple(int(p) for p in perm)
        if perm == tuple(range(len(perm))):
            return x
        if x.op is not None and x.op.name == "transpose":
            inner = x.op.attrs["permutation"]
            return self.transpose(x.op.operands[0], [inner[p] for p in perm])
        shape = tuple(x.shape[p] for p in perm)
        return self._one("transpose", [x], {"permutation": perm},
                         x.type.with_shape(shape))

    def matmul(self, a, b, bias=None, transpose_a=False, transpose_b=False):
        m = a.shape[-1] if transpose_a else a.shape[-2]
        n = b.shape[-2] if transpose_b else b.shape[-1]
        shape = a.shape[:-2] + (m, n)
        attrs = {}
        if transpose_a:
            attrs["transpose_a"] = True
        if transpose_b:
            attrs["transpose_b"] = True
        operands = [a, b] + ([bias] if bias is not None else [])
        return self._one("matmul", operands, attrs, a.type.with_shape(shape))

    def split(self, x, dim, sizes):
        types = [x.type.with_shape(x.shape[:dim] + (s,) + x.shape[dim + 1:])
                 for s in sizes]
        return self._op("split", [x], {"dim": dim}, types).results

    def elementwise(self, name, a, b):
        return self._one(name, [a, b], {}, a.type)

    def unary(self, name, x, **attrs):
        return self._one(name, [x], attrs, x.type)

    def broadcast(self, x, shape):
        return self._one("broadcast", [x], {}, x.type.with_shape(shape))

    def op(self, name, operands, attrs, result_types):
        """Any other op; returns its results."""
        return self._op(name, operands, attrs, result_types).results

    # --- printing ---------------------------------------------------------

    def render(self, indent="  "):
        live = set()
        work = [v.op for v in self.results if v.op is not None]
        while work:
            op = work.pop()
            if id(op) in live:
                continue
            live.add(id(op))
            work.extend(v.op for v in op.operands if v.op is not None)
        names, counter = {}, [0]
        for i, a in enumerate(self.args):
            names[id(a)] = "%%arg%d" % i

        def name_results(op):
            if len(op.results) == 1:
                names[id(op.results[0])] = "%%%d" % counter[0]
                counter[0] += 1
                return names[id(op.results[0])]
            base = "%%%d" % counter[0]
            counter[0] += 1
            for i, r in enumerate(op.results):
                names[id(r)] = "%s#%d" % (base, i)
            return "%s:%d" % (base, len(op.results))

        lines = []
        sig = ", ".join("%%arg%d: %s%s" % (i, a.type, ' {train.name = "%s"}' % self.arg_names[i]
                                            if self.arg_names else "")
                        for i, a in enumerate(self.args))
        res = ", ".join(str(v.type) for v in self.results)
        if len(self.results) > 1:
            res = "(" + res + ")"
        lines.append("func.func @%s(%s) -> %s {" % (self.name, sig, res))
        for op in self.ops:
            if id(op) not in live:
                continue
            ops = [names[id(v)] for v in op.operands]
            lhs = name_results(op)
            lines.append(indent * 2 + lhs + " = " + _render_op(op, ops))
        lines.append(indent * 2 + "return %s : %s" % (
            ", ".join(names[id(v)] for v in self.results),
            ", ".join(str(v.type) for v in self.results)))
        lines.append(indent + "}")
        return indent + ("\n".join(lines))


def _render_op(op, ops):
    """The op's custom assembly (TrainOps.td assemblyFormat)."""
    n, a, t = op.name, op.attrs, [v.type for v in op.operands]
    r = [v.type for v in op.results]
    if n == "load":
        return "train.load %s : %s" % (symbol(a["sym"]), r[0])
    if n in ("add", "mul"):
        return "train.%s %s, %s : %s" % (n, ops[0], ops[1], r[0])
    if n in ("gelu", "relu", "softmax", "silu"):
        return "train.%s %s : %s" % (n, ops[0], r[0])
    if n == "scale":
        return "train.scale %s, %s : %s" % (ops[0], float_attr(a["factor"]), r[0])
    if n in ("reshape", "broadcast", "cast"):
        return "train.%s %s : %s -> %s" % (n, ops[0], t[0], r[0])
    if n == "transpose":
        return "train.transpose %s [%s] : %s -> %s" % (
            ops[0], ", ".join(str(p) for p in a["permutation"]), t[0], r[0])
    if n == "embedding":
        return "train.embedding %s, %s : %s, %s -> %s" % (ops[0], ops[1], t[0], t[1], r[0])
    if n == "matmul":
        flags = [f for f in ("transpose_a", "transpose_b") if a.get(f)]
        text = "train.matmul %s, %s" % (ops[0], ops[1])
        if len(ops) > 2:
            text += " bias %s" % ops[2]
        if flags:
            text += " {%s}" % ", ".join(flags)
        return text + " : %s -> %s" % (", ".join(str(x) for x in t), r[0])
    if n == "layer_norm":
        return "train.layer_norm %s, %s, %s eps(%s) : %s, %s" % (
            ops[0], ops[1], ops[2], float_attr(a["eps"]), t[0], t[1])
    if n == "causal_attention":
        # The key/value type is printed only when it differs (GQA).
        kv = ", %s" % t[1] if t[1] != t[0] else ""
        return "train.causal_attention %s, %s, %s : %s%s" % (ops[0], ops[1], ops[2], r[0], kv)
    if n == "rms_norm":
        return "train.rms_norm %s, %s eps(%s) : %s, %s" % (
            ops[0], ops[1], float_attr(a["eps"]), t[0], t[1])
    if n == "swiglu":
        return "train.swiglu %s, %s : %s" % (ops[0], ops[1], r[0])
    if n == "rope_table":
        text = "train.rope_table theta(%s)" % float_attr(a["theta"])
        if a.get("llama3") is not None:
            factor, low, high, original = a["llama3"]
            text += (" llama3(factor(%s) low_freq_factor(%s) high_freq_factor(%s) "
                     "original_max_positions(%d))" % (float_attr(factor), float_attr(low),
                                                      float_attr(high), int(original)))
        return text + " : %s" % r[0]
    if n == "rope":
        return "train.rope %s, %s layout(<%s>) : %s, %s" % (
            ops[0], ops[1], a["layout"], t[0], t[1])
    if n == "causal_attention_packed":
        return "train.causal_attention_packed %s heads(%d) : %s -> %s, %s" % (
            ops[0], a["heads"], t[0], r[0], r[1])
    if n == "split":
        return "train.split %s dim(%d) : %s -> %s" % (
            ops[0], a["dim"], t[0], ", ".join(str(x) for x in r))
    if n == "concat":
        return "train.concat %s dim(%d) : %s -> %s" % (
            ", ".join(ops), a["dim"], ", ".join(str(x) for x in t), r[0])
    if n == "cross_entropy":
        extra = ""
        if a.get("num_classes") is not None:
            extra = " {num_classes = %d : i64}" % a["num_classes"]
        return "train.cross_entropy %s, %s%s : %s, %s -> %s" % (
            ops[0], ops[1], extra, t[0], t[1], r[0])
    if n == "mse":
        return "train.mse %s, %s : %s -> %s" % (ops[0], ops[1], t[0], r[0])
    if n == "fill":
        return "train.fill %s : %s" % (float_attr(a["value"]), r[0])
    raise AssertionError("no printer for train.%s" % n)


def render_module(params, functions, attrs=None):
    """The module text: parameters in declaration order, then functions."""
    head = "module"
    if attrs:
        head += " attributes {%s}" % ", ".join(
            '%s = "%s"' % (k, v.replace("\\", "\\\\").replace('"', '\\"'))
            for k, v in attrs.items())
    lines = [head + " {"]
    lines += ["  " + p.render() for p in params.values()]
    lines += [f.render() for f in functions]
    lines.append("}")
    return "\n".join(lines) + "\n"
