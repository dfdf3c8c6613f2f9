"""torch.export graph (ATen ops) -> train-dialect functions.

`lower_program` walks the graph of an ExportedProgram in order and maps each
node the loss depends on to train ops (ops.py holds the per-op rules).
Nodes that depend on no input or parameter (position ids from arange,
causal masks built from shapes) are evaluated with PyTorch on the CPU
instead; their values are what the rules see (e.g. an embedding of
arange(T) is the table's first T rows, a mask equal to the causal mask is
`is_causal`). A node without a rule is an ImportFailure naming the op, the
user's source line and the supported ops.
"""
import operator

import torch

from . import ir
from .errors import ImportFailure, node_source
from . import ops as rules


def elem_type(dtype, what):
    """The train element type of a torch dtype (ids become i32)."""
    if dtype == torch.float32:
        return "f32"
    if dtype == torch.bfloat16:
        return "bf16"
    if dtype == torch.float16:
        return "f16"
    if dtype in (torch.int64, torch.int32):
        return ir.ID_TYPE
    raise ImportFailure(
        "unsupported dtype %s of %s (the train dialect has f32, bf16 and f16 "
        "tensors and i32 ids; int64 ids are imported as i32)"
        % (str(dtype).replace("torch.", ""), what))


class Const:
    """A value computed at import time (no input or parameter behind it)."""

    __slots__ = ("tensor", "facts")

    def __init__(self, tensor):
        self.tensor = tensor
        self.facts = {}     # memoized properties (e.g. "is the causal mask")


def _aten_name(node):
    """`zeros_like` for aten.zeros_like.default; "" for other targets."""
    parts = str(node.target).split(".")
    return parts[1] if len(parts) > 2 and parts[0] == "aten" else ""


def _to_cpu(x):
    if isinstance(x, torch.device) and x.type == "meta":
        return torch.device("cpu")
    if isinstance(x, (list, tuple)):
        return type(x)(_to_cpu(v) for v in x)
    if isinstance(x, dict):
        return {k: _to_cpu(v) for k, v in x.items()}
    return x


# Ops whose value depends only on their first operand's shape and dtype.
_SHAPE_ONLY = ("zeros_like", "ones_like", "full_like", "new_zeros", "new_ones",
               "new_full")

# Ops never evaluated at import time even without tensor inputs.
_RANDOM = ("rand", "randn", "randint", "randperm", "normal", "bernoulli",
           "dropout", "native_dropout", "uniform", "multinomial", "empty")


class Lowering:
    """One function's worth of lowering state over one exported graph."""

    def __init__(self, program, params, placeholder_params, constants, hints=None):
        self.program = program
        self.params = params                          # name -> ir.Param
        self.placeholder_params = placeholder_params  # placeholder -> name
        self.constants = constants                    # placeholder -> tensor | None
        self.fn = None
        self.env = {}
        self.node = None                              # the node being lowered
        # What the source knows beyond the graph: "rope" = (theta, llama3
        # (factor, low, high, original) or None) of a Hugging Face config.
        self.hints = hints or {}
        self.memo = {}                                # per function: shared ops

    # --- diagnostics ------------------------------------------------------

    def fail(self, what, node=None, extra=""):
        """An ImportFailure for `what` at the node's source line."""
        node = node if node is not None else self.node
        raise ImportFailure("%s at %s%s; supported: %s" % (
            what, node_source(node), extra, rules.supported_summary()))

    # --- values -----------------------------------------------------------

    def value(self, x):
        """A node argument: ir.Value, Const, or a Python value."""
        if isinstance(x, torch.fx.Node):
            v = self.env[x]
            return self.fn.load(v.name) if isinstance(v, ParamRef) else v
        if isinstance(x, (list, tuple)):
            return type(x)(self.value(v) for v in x)
        return x

    def tensor(self, x, what="operand"):
        """An argument that must be an IR tensor value."""
        v = self.value(x)
        if isinstance(v, ir.Value):
            return v
        if isinstance(v, Const):
            t = v.tensor
            if t.numel() > 0 and t.is_floating_point() and bool((t == t.flatten()[0]).all()):
                ty = ir.TensorType(t.shape, elem_type(t.dtype, what))
                return self.fn.op("fill", [], {"value": float(t.flatten()[0])}, [ty])[0]
            self.fail("a constant tensor %s of shape %s (a buffer or tensor "
                      "literal that is not one repeated float) has no train op"
                      % (what, list(t.shape)))
        self.fail("%s %r where a tensor was expected" % (what, v))

    def meta_type(self, node, what=None):
        val = node.meta.get("val")
        if not isinstance(val, torch.Tensor):
            self.fail("%s produces %r, not one tensor" % (node.target, type(val).__name__), node)
        return ir.TensorType(val.shape, elem_type(val.dtype, what or "the result of %s" % node.target))

    # --- the walk ---------------------------------------------------------

    def live_nodes(self, outputs):
        """The nodes the outputs depend on (through the rules' patterns)."""
        live, work = set(), list(outputs)
        while work:
            n = work.pop()
            if not isinstance(n, torch.fx.Node) or n in live:
                continue
            live.add(n)
            inputs = rules.pattern_inputs(n)
            if inputs is None:
                inputs = n.all_input_nodes
            work.extend(inputs)
        return live

    def is_constant(self, node, constant):
        if node.op != "call_function":
            return False
        if _aten_name(node) in _SHAPE_ONLY:
            return True
        name = getattr(node.target, "__name__", str(node.target))
        if any(r in str(node.target) for r in _RANDOM) and "arange" not in name:
            return False
        return all(constant.get(i, False) for i in node.all_input_nodes)

    def evaluate(self, node):
        if _aten_name(node) in _SHAPE_ONLY:
            # zeros_like(x) and friends read only x's shape and dtype.
            like = node.args[0].meta["val"]
            args = (Const(torch.zeros(like.shape, dtype=like.dtype)),) + \
                tuple(_to_cpu(self.value(node.args[1:])))
        else:
            args = _to_cpu(self.value(node.args))
        kwargs = _to_cpu(self.value(dict(node.kwargs)))
        unwrap = lambda x: x.tensor if isinstance(x, Const) else (
            type(x)(unwrap(v) for v in x) if isinstance(x, (list, tuple)) else x)
        with torch.no_grad():
            out = node.target(*unwrap(args), **{k: unwrap(v) for k, v in kwargs.items()})
        if isinstance(out, torch.Tensor):
            return Const(out)
        if isinstance(out, (list, tuple)):
            return type(out)(Const(o) if isinstance(o, torch.Tensor) else o for o in out)
        return out

    def run(self, name, outputs, inputs):
        """Lowers the graph into function `name` with `inputs` (placeholder
        nodes, in order) as arguments and `outputs` (nodes) as results."""
        graph = self.program.graph_module.graph
        arg_types = [self.meta_type(n, "input '%s'" % n.name) for n in inputs]
        self.fn = ir.Function(name, arg_types, self.params)
        self.env = {}
        self.memo = {}
        for n, a in zip(inputs, self.fn.args):
            self.env[n] = a
        live = self.live_nodes(outputs)
        constant = {}
        for n in graph.nodes:
            if n.op == "placeholder":
                constant[n] = n in self.constants and self.constants[n] is not None
        # The first op without a rule, before any rule runs: its name is
        # the message (an op with a rule may fail on an input it cannot
        # take, which says less).
        structural = dict(constant)
        missing = []
        for n in graph.nodes:
            if n.op == "call_function" and n not in structural:
                structural[n] = self.is_constant(n, structural)
            if n in live and n.op == "call_function" and not structural[n] and \
                    not rules.has_rule(n):
                missing.append(n)
        if missing:
            self.node = missing[0]
            others = []
            for n in missing[1:]:
                desc = rules.describe(n)
                if desc not in others and desc != rules.describe(missing[0]):
                    others.append(desc)
            self.fail("unsupported op %s" % rules.describe(missing[0]),
                      extra="; also without a train op in this model: " +
                      ", ".join(others) if others else "")
        for n in graph.nodes:
            if n not in live or n in self.env:
                continue
            self.node = n
            if n.op == "placeholder":
                self.env[n] = self.placeholder(n, inputs)
                continue
            if n.op != "call_function":
                self.fail("graph node %s (%s) has no train op" % (n.name, n.op), n)
            if self.is_constant(n, constant):
                try:
                    self.env[n] = self.evaluate(n)
                    constant[n] = True
                    continue
                except ImportFailure:
                    raise
                except Exception:  # noqa: BLE001 - not foldable: lower it
                    pass
            constant[n] = False
            self.env[n] = rules.lower(self, n)
            v = self.env[n]
            if isinstance(v, ir.Value):
                want = self.meta_type(n)
                if v.type.shape != want.shape:
                    raise AssertionError("%s: lowered to %s, export says %s"
                                         % (n.format_node(), v.type, want))
        results = []
        for o in outputs:
            self.node = o
            results.append(self.tensor(o, "result"))
        self.fn.results = results
        return self.fn

    def placeholder(self, n, inputs):
        if n in self.placeholder_params:
            return ParamRef(self.placeholder_params[n])
        if n in self.constants:
            t = self.constants[n]
            if t is None:
                self.fail("buffer or constant '%s' has no value (the model is on "
                          "the meta device)" % n.target, n)
            return Const(t)
        self.fail("input '%s' is used by the loss but is not an argument of "
                  "this function" % n.name, n)


class ParamRef:
    """A parameter placeholder: loaded on first use as a tensor."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name


def getitem(lowering, node):
    """operator.getitem on a multi-result node."""
    seq = lowering.value(node.args[0])
    return seq[node.args[1]]


rules.register_python(operator.getitem, getitem)
