"""Source -> torch.export -> train module text + initial weights.

Parameter symbols are the model's state_dict names; a parameter with
requires_grad=False is a frozen `train.param` (no `trainable`); parameters
that are one tensor under several names (tied embeddings) are one symbol,
the first name in state_dict order.
"""
import contextlib
import logging
import os
import sys

import torch
from torch.export import graph_signature as gs

from . import ir
from .errors import ImportFailure, exception_source, node_source
from .lower import Lowering, elem_type
from . import ops as rules


@contextlib.contextmanager
def _stderr_discarded():
    """File descriptor 2 to /dev/null (torch.export prints graphs and
    warnings of failed traces there; the message says what failed)."""
    sys.stderr.flush()
    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


def export(source):
    """torch.export of the training forward, user errors as ImportFailure."""
    quiet = logging.getLogger("torch")
    level = quiet.level
    quiet.setLevel(logging.CRITICAL)    # its warnings would repeat our message
    try:
        with _stderr_discarded(), getattr(source, "export_context", contextlib.nullcontext)():
            return torch.export.export(source.module, source.inputs)
    except Exception as e:  # noqa: BLE001 - classified below
        text = str(e)
        where = exception_source(e)
        name = type(e).__name__
        if "data-dependent" in text or "DataDependent" in name:
            raise ImportFailure(
                "data-dependent control flow (a Python branch, loop or size that "
                "depends on a tensor's values) at %s: torch.export needs one graph "
                "for every batch; supported: %s" % (where, rules.supported_summary()))
        if "in-place operation" in text and "leaf Variable" in text:
            raise ImportFailure(
                "in-place op on a parameter at %s (parameters change only through "
                "the optimizer); supported: %s" % (where, rules.supported_summary()))
        first = text.strip().splitlines()[0] if text.strip() else name
        raise ImportFailure("torch.export failed at %s: %s: %s" % (where, name, first))
    finally:
        quiet.setLevel(level)


def _init_of(name, tensor):
    """The train.param initializer: from the values when there are any
    (zeros, ones, else normal with their standard deviation), else the
    usual one for the name (LayerNorm gains ones, biases zeros, else
    normal(0.02) as GPT-2, Llama and Qwen initialize)."""
    if tensor is not None and not tensor.is_meta:
        t = tensor.detach().float()
        if t.numel() and bool((t == 0).all()):
            return "zeros"
        if t.numel() and bool((t == 1).all()):
            return "ones"
        std = float(t.std()) if t.numel() > 1 else 0.02
        return ("normal", std if std > 0 else 0.02)
    leaf = name.rsplit(".", 1)[-1]
    if leaf == "bias":
        return "zeros"
    if tensor is not None and tensor.dim() == 1:
        return "ones"
    return ("normal", 0.02)


def collect_params(source, program):
    """ir.Param per canonical name, placeholder node -> name, the tensors."""
    wrapper = source.module
    prefix = source.prefix
    canonical, tensors = {}, {}
    for fqn, p in wrapper.named_parameters(remove_duplicate=False):
        key = id(p)
        if key not in canonical:
            name = fqn[len(prefix):] if fqn.startswith(prefix) else fqn
            canonical[key] = name
            tensors[name] = p
    by_fqn = {fqn: canonical[id(p)] for fqn, p in wrapper.named_parameters(remove_duplicate=False)}
    placeholders = {n.name: n for n in program.graph.nodes if n.op == "placeholder"}
    params, mapping, constants, user_inputs = {}, {}, {}, []
    for spec in program.graph_signature.input_specs:
        node = placeholders[spec.arg.name]
        if spec.kind == gs.InputKind.PARAMETER:
            name = by_fqn[spec.target]
            mapping[node] = name
        elif spec.kind in (gs.InputKind.BUFFER, gs.InputKind.CONSTANT_TENSOR):
            t = program.state_dict.get(spec.target)
            if t is None:
                t = program.constants.get(spec.target)
            if t is None or t.is_meta:
                # A meta-device model's buffers computed from its config
                # (frontend: the rotary embedding's inv_freq), else none.
                t = getattr(source, "buffers", {}).get(spec.target)
            constants[node] = None if t is None or t.is_meta else t.detach()
        elif spec.kind == gs.InputKind.USER_INPUT:
            user_inputs.append(node)
        else:
            raise ImportFailure("unsupported export input %s (%s)" % (spec.arg.name, spec.kind))
    for name, p in tensors.items():
        ty = ir.TensorType(p.shape, elem_type(p.dtype, "parameter '%s'" % name))
        if ty.elem == ir.ID_TYPE:
            raise ImportFailure("unsupported dtype %s of parameter '%s'" % (p.dtype, name))
        params[name] = ir.Param(name, ty, _init_of(name, p), bool(p.requires_grad))
    return params, mapping, constants, user_inputs, tensors


def _check_mutations(program):
    out = list(program.graph.nodes)[-1]
    results = out.args[0]
    for spec, node in zip(program.graph_signature.output_specs, results):
        kind = spec.kind
        if kind == gs.OutputKind.USER_OUTPUT:
            continue
        what = {gs.OutputKind.BUFFER_MUTATION: "in-place update of buffer '%s' (e.g. "
                                               "BatchNorm running statistics)",
                gs.OutputKind.PARAMETER_MUTATION: "in-place op on parameter '%s'",
                gs.OutputKind.USER_INPUT_MUTATION: "in-place op on input '%s'"}.get(
                    kind, "unsupported output %s" % kind + " '%s'")
        raise ImportFailure("%s at %s; supported: %s" % (
            what % spec.target, node_source(node if isinstance(node, torch.fx.Node) else None),
            rules.supported_summary()))


def _check_higher_order(program):
    """torch.no_grad() regions (wrap_with_set_grad_enabled) around in-place
    ops on parameters: the one way export lets a forward mutate them."""
    gm = program.graph_module
    for n in gm.graph.nodes:
        target = str(n.target)
        if n.op != "call_function" or not isinstance(n.target, torch._ops.HigherOrderOperator):
            continue
        sub = None
        for a in n.args:
            if isinstance(a, torch.fx.Node) and a.op == "get_attr":
                sub = getattr(gm, a.target, None)
        if sub is not None:
            for m in sub.graph.nodes:
                overload = getattr(m.target, "_schema", None)
                if m.op == "call_function" and overload is not None and overload.is_mutable:
                    raise ImportFailure(
                        "in-place op %s on a parameter (under torch.no_grad()) at %s "
                        "(parameters change only through the optimizer); supported: %s"
                        % (m.target, node_source(m), rules.supported_summary()))
        raise ImportFailure("unsupported construct %s (torch.no_grad()/autocast "
                            "regions) at %s; supported: %s"
                            % (target, node_source(n), rules.supported_summary()))


def _logits_node(loss):
    """For a loss `cross_entropy(reshape(logits [B, T, V]), ...)`: logits."""
    if not (loss.op == "call_function" and str(loss.target) == "aten.cross_entropy_loss.default"):
        return None
    n = loss.args[0]
    while isinstance(n, torch.fx.Node) and str(n.target) in (
            "aten.view.default", "aten.reshape.default", "aten._unsafe_view.default",
            "aten.flatten.using_ints"):
        n = n.args[0]
    val = n.meta.get("val") if isinstance(n, torch.fx.Node) else None
    return n if isinstance(val, torch.Tensor) and val.dim() == 3 else None


def import_source(source):
    """(module text, {name: initial tensor} or None, summary line)."""
    program = export(source)
    _check_mutations(program)
    _check_higher_order(program)
    params, mapping, constants, user_inputs, tensors = collect_params(source, program)
    out = list(program.graph.nodes)[-1]
    results = [r for r, s in zip(out.args[0], program.graph_signature.output_specs)
               if s.kind == gs.OutputKind.USER_OUTPUT]
    if len(results) != 1 or not isinstance(results[0], torch.fx.Node):
        raise ImportFailure("the training forward returns %d values; it must return "
                            "one scalar loss" % len(results))
    loss = results[0]
    val = loss.meta.get("val")
    if not isinstance(val, torch.Tensor) or val.dim() != 0 or not val.is_floating_point():
        raise ImportFailure("the training forward returns %s at %s; it must return "
                            "one scalar float loss" % (
                                "a tensor of shape %s" % list(val.shape)
                                if isinstance(val, torch.Tensor) else type(val).__name__,
                                node_source(loss)))
    hints = getattr(source, "hints", {})
    lowering = Lowering(program, params, mapping, constants, hints)
    forward = lowering.run("forward", [loss], user_inputs)
    if forward.results[0].type.elem != "f32":
        forward.results[0] = forward.op("cast", [forward.results[0]], {},
                                        [ir.TensorType((), "f32")])[0]
    functions = [forward]
    if source.input_names is not None:
        # An array model: its named inputs (and no @logits: no sampling).
        forward.arg_names = source.input_names
    logits = _logits_node(loss)
    if logits is not None and user_inputs and source.input_names is None:
        try:
            functions.append(Lowering(program, params, mapping, constants, hints).run(
                "logits", [logits], user_inputs[:1]))
        except ImportFailure:
            pass  # the logits need more than the ids: no @logits (no sampling)
    # Only the parameters the loss reads are the model's.
    used = {op.attrs["sym"] for f in functions for op in f.ops if op.name == "load"}
    live = {n: p for n, p in params.items() if n in used}
    for f in functions:
        f.params = live
    text = ir.render_module(live, functions)
    weights = None
    if source.has_weights:
        weights = {n: tensors[n].detach().contiguous() for n in live}
    return text, weights, live
