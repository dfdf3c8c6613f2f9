"""The importer's inputs: a Hugging Face model or a user's Python file.

Either way the result is a `Source`: an nn.Module whose forward(*inputs)
returns the scalar training loss, its example inputs, the name prefix of
the user's model inside it, and (for Hugging Face models) the config.
"""
import contextlib
import importlib.util
import inspect
import json
import os
import re
import sys

import torch
import torch.nn.functional as F

from .errors import ImportFailure, exception_source

# Family name -> (transformers config class name, what the family is).
FAMILIES = {
    "gpt2": "GPT2Config",
    "llama": "LlamaConfig",
    "qwen3": "Qwen3Config",
    "mistral": "MistralConfig",
}

DEFAULT_ENTRY = "zero_model"

# Config fields that are sizes or counts (an override must be positive).
_SIZE = re.compile(r"^(n_.*|num_.*|.*_size|.*_dim|.*_layers|.*_heads|.*_positions|"
                   r".*_embeddings|vocab_size)$")


class Source:
    def __init__(self, module, inputs, prefix, hf_config=None, has_weights=True,
                 description="", input_names=None):
        self.module = module          # forward(*inputs) -> scalar loss
        self.inputs = inputs          # example inputs (tuple of tensors)
        self.prefix = prefix          # "model." : stripped from parameter names
        self.hf_config = hf_config    # transformers config (HF inputs)
        self.has_weights = has_weights
        self.description = description
        # The inputs' names (train.name) for a model that trains on arrays;
        # None for token models (ids, targets), which train on text/tokens.
        self.input_names = input_names


def is_token_contract(inputs):
    """Whether example inputs are the driver's token batch: two integer
    tensors (ids, next-token targets) of one shape [B, T]."""
    return (len(inputs) == 2 and all(not t.is_floating_point() and t.dim() == 2
                                     for t in inputs)
            and inputs[0].shape == inputs[1].shape)


def input_names(model, inputs, with_loss):
    """Names of the example inputs for an array model: the parameters of
    model.forward (the last input, with a loss_fn, is "target"); input<i>
    where the signature does not name one."""
    count = len(inputs) - 1 if with_loss else len(inputs)
    try:
        params = [p for p in inspect.signature(model.forward).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    names = [params[i].name if i < len(params) and params[i].name.isidentifier()
             and params[i].name.isascii() else "input%d" % i for i in range(count)]
    if with_loss:
        names.append("target" if "target" not in names else "loss_target")
    return names


class CausalLMLoss(torch.nn.Module):
    """Next-token cross-entropy of a causal LM on pre-shifted targets: the
    driver's batches are ids [B, T] and targets [B, T] (ids shifted by
    one), as for zero-model gpt."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, targets):
        logits = self.model(input_ids=input_ids, use_cache=False).logits
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


class WithLoss(torch.nn.Module):
    """loss_fn(model(*inputs[:-1]), inputs[-1]): the last input is the target."""

    def __init__(self, model, loss_fn):
        super().__init__()
        self.model = model
        self.loss_fn = loss_fn

    def forward(self, *inputs):
        return self.loss_fn(self.model(*inputs[:-1]), inputs[-1])


def parse_overrides(items):
    """["key=value", ...] -> {key: value}; values are JSON when they parse
    (numbers, true/false, null, lists), else strings."""
    out = {}
    for item in items:
        key, sep, text = item.partition("=")
        if not sep or not key:
            raise ImportFailure("bad --set '%s' (expected KEY=VALUE, e.g. --set n_layer=2)" % item)
        try:
            out[key] = json.loads(text)
        except ValueError:
            out[key] = text
    return out


def _transformers():
    try:
        import transformers
    except ImportError as e:  # pragma: no cover - the venv has it
        raise ImportFailure("Hugging Face models need the transformers package "
                            "(scripts/setup-deps installs it into .venv): %s" % e)
    transformers.logging.set_verbosity_error()
    transformers.logging.disable_progress_bar()
    return transformers


def _apply_overrides(config, overrides, what):
    for key, value in overrides.items():
        if not hasattr(config, key):
            raise ImportFailure("--set %s: %s has no field '%s'" % (key, what, key))
        old = getattr(config, key)
        kind = type(old)
        if isinstance(old, bool) and not isinstance(value, bool):
            raise ImportFailure("--set %s=%s: expected true or false" % (key, value))
        if kind is int and (not isinstance(value, int) or isinstance(value, bool)):
            raise ImportFailure("--set %s=%s: expected an integer" % (key, value))
        if kind is float and (not isinstance(value, (int, float)) or isinstance(value, bool)):
            raise ImportFailure("--set %s=%s: expected a number" % (key, value))
        if kind is int and _SIZE.match(key) and value < 1:
            raise ImportFailure("--set %s=%s: must be positive" % (key, value))
        if kind is float and value < 0:
            raise ImportFailure("--set %s=%s: must not be negative" % (key, value))
        setattr(config, key, float(value) if kind is float else value)


def _no_dropout(config):
    """A copy of the config with every dropout probability 0 (the train
    dialect has no dropout); returns the names it changed."""
    changed = []
    for key, value in list(vars(config).items()):
        if isinstance(value, float) and value > 0 and (
                key.endswith("pdrop") or key.endswith("dropout") or key.endswith("dropout_prob")):
            setattr(config, key, 0.0)
            changed.append(key)
    return changed


def _seq_of(config, seq):
    if seq:
        return seq
    for key in ("n_positions", "max_position_embeddings"):
        if getattr(config, key, None):
            return int(getattr(config, key))
    raise ImportFailure("the config has no n_positions or max_position_embeddings: give --seq")


def huggingface(spec, overrides, batch, seq, dtype):
    """A Hugging Face causal LM: a directory with config.json (and weights
    when model.safetensors or its sharded index is there) or a family name."""
    transformers = _transformers()
    if os.path.isdir(spec):
        cfg_path = os.path.join(spec, "config.json")
        if not os.path.isfile(cfg_path):
            raise ImportFailure("'%s' is a directory without config.json (not a "
                                "Hugging Face model directory)" % spec)
        try:
            config = transformers.AutoConfig.from_pretrained(spec)
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise ImportFailure("cannot read %s: %s" % (cfg_path, str(e).splitlines()[0]))
        what = "%s (%s)" % (type(config).__name__, cfg_path)
        has_weights = any(os.path.isfile(os.path.join(spec, f)) for f in (
            "model.safetensors", "model.safetensors.index.json"))
        _apply_overrides(config, overrides, what)
    elif spec in FAMILIES:
        config = _family_config(getattr(transformers, FAMILIES[spec]), overrides)
        what = FAMILIES[spec]
        has_weights = False
    else:
        raise ImportFailure("'%s' is neither a .py file, a Hugging Face model "
                            "directory nor a family (%s)" % (spec, ", ".join(FAMILIES)))
    user_config = config.to_dict()
    changed = _no_dropout(config)
    seq = _seq_of(config, seq)
    hints = _decoder_hints(config, seq)
    attention = _causal_sdpa(transformers)
    try:
        if has_weights:
            model, info = transformers.AutoModelForCausalLM.from_pretrained(
                spec, config=config, dtype=dtype, attn_implementation=attention,
                output_loading_info=True)
            tied = {k for k in getattr(model, "_tied_weights_keys", None) or ()}
            problems = [("missing", [k for k in info.get("missing_keys", ()) if k not in tied]),
                        ("unexpected", list(info.get("unexpected_keys", ()))),
                        ("mismatched", [k[0] if isinstance(k, tuple) else k
                                        for k in info.get("mismatched_keys", ())])]
            problems = [(what, keys) for what, keys in problems if keys]
            if problems:
                raise ImportFailure(
                    "the weights in %s do not fit its config%s: %s" % (
                        spec, " with the --set overrides" if overrides else "",
                        "; ".join("%s %s%s" % (what, ", ".join(sorted(keys)[:3]),
                                               " (and %d more)" % (len(keys) - 3)
                                               if len(keys) > 3 else "")
                                  for what, keys in problems)))
        else:
            with torch.device("meta"):
                model = transformers.AutoModelForCausalLM.from_config(
                    config, dtype=dtype, attn_implementation=attention)
    except ImportFailure:
        raise
    except Exception as e:  # noqa: BLE001 - transformers raises many kinds
        raise ImportFailure("cannot build the %s model: %s"
                            % (type(config).__name__, str(e).splitlines()[0] if str(e) else type(e).__name__))
    model.train()
    device = "cpu" if has_weights else "meta"
    ids = torch.zeros(batch, seq, dtype=torch.long, device=device)
    targets = torch.zeros(batch, seq, dtype=torch.long, device=device)
    vocab = getattr(config, "vocab_size", None)
    if vocab is not None and vocab < 2:
        raise ImportFailure("vocab_size %d is too small" % vocab)
    desc = "%s %s" % (type(model).__name__, "with weights" if has_weights else "on the meta device")
    if changed:
        desc += " (dropout set to 0: %s)" % ", ".join(changed)
    src = Source(CausalLMLoss(model), (ids, targets), "model.", config, has_weights, desc)
    src.user_config = user_config
    src.hints = hints
    src.export_context = _no_packed_sequences
    if not has_weights:
        src.buffers = _rotary_buffers(model)
    return src


_CAUSAL_SDPA = "zero_causal_sdpa"


def _causal_sdpa(transformers):
    """The attention implementation the import uses: HF's SDPA attention
    with a mask function that gives no mask (SDPA's is_causal=True) where
    HF's mask is the plain causal one over the whole sequence, and HF's
    own sdpa_mask otherwise (a sliding window: the lowering then checks
    the materialized mask). Without it the [B, 1, T, T] mask is a constant
    the import evaluates (T = 8192: gigabytes). Registered through
    transformers' AttentionInterface / AttentionMaskInterface; "sdpa" when
    this transformers lacks them."""
    try:
        from transformers import AttentionInterface
        from transformers import masking_utils as mu
        from transformers.integrations.sdpa_attention import sdpa_attention_forward
    except ImportError:  # pragma: no cover - other transformers versions
        return "sdpa"
    if not all(hasattr(mu, n) for n in ("AttentionMaskInterface", "sdpa_mask",
                                        "causal_mask_function")):
        return "sdpa"

    def mask(batch_size, q_length, kv_length, q_offset=0, kv_offset=0,
             mask_function=mu.causal_mask_function, attention_mask=None, **kwargs):
        if mask_function is mu.causal_mask_function and attention_mask is None and \
                q_length == kv_length and isinstance(q_offset, int) and \
                isinstance(kv_offset, int) and q_offset == kv_offset == 0:
            return None
        return mu.sdpa_mask(batch_size=batch_size, q_length=q_length, kv_length=kv_length,
                            q_offset=q_offset, kv_offset=kv_offset,
                            mask_function=mask_function, attention_mask=attention_mask,
                            **kwargs)

    AttentionInterface.register(_CAUSAL_SDPA, sdpa_attention_forward)
    mu.AttentionMaskInterface.register(_CAUSAL_SDPA, mask)
    return _CAUSAL_SDPA


@contextlib.contextmanager
def _no_packed_sequences():
    """During torch.export of a CausalLMLoss: HF's test for packed
    sequences (position ids that restart within a row) answers "none".
    CausalLMLoss passes no position ids, so HF's are arange(T) in every
    row — what the test finds when it can read the values; under tracing
    it cannot and would add a packed-sequence mask to the causal one."""
    try:
        from transformers import masking_utils as mu
    except ImportError:  # pragma: no cover
        yield
        return
    saved = getattr(mu, "find_packed_sequence_indices", None)
    if saved is None:
        yield
        return
    mu.find_packed_sequence_indices = lambda position_ids: None
    try:
        yield
    finally:
        mu.find_packed_sequence_indices = saved


def _family_config(cls, overrides):
    """The family's config built with the overrides as constructor
    arguments (so derived fields follow: head_dim = hidden_size /
    num_attention_heads, rope_parameters from rope_theta), each checked
    against the default config's field of that name (or the constructor's
    parameter)."""
    import inspect
    default = cls()
    known = set(inspect.signature(cls.__init__).parameters)
    theta = overrides.get("rope_theta")
    if theta is not None and not hasattr(default, "rope_theta") and \
            isinstance(getattr(default, "rope_parameters", None), dict):
        # --set rope_theta=X: transformers 5 keeps it in rope_parameters.
        if isinstance(theta, bool) or not isinstance(theta, (int, float)) or theta <= 0:
            raise ImportFailure("--set rope_theta=%s: expected a positive number" % theta)
        overrides = dict(overrides)
        del overrides["rope_theta"]
        rope = dict(overrides.get("rope_parameters") or default.rope_parameters)
        rope["rope_theta"] = float(theta)
        overrides["rope_parameters"] = rope
    checked = {k: v for k, v in overrides.items() if k not in known or hasattr(default, k)}
    _apply_overrides(default, checked, cls.__name__)
    # The checked values (ints given for floats are floats).
    kwargs = dict(overrides, **{k: getattr(default, k) for k in checked})
    try:
        return cls(**kwargs)
    except Exception as e:  # noqa: BLE001 - transformers validates in __init__
        raise ImportFailure("cannot build the %s model: %s" % (
            cls.__name__, str(e).splitlines()[0] if str(e) else type(e).__name__))


# Hugging Face rope types train.rope_table computes.
_ROPE_TYPES = ("default", "llama3")


def _decoder_hints(config, seq):
    """What the lowering needs to know of a decoder's config: {"rope":
    (theta, llama3 (factor, low, high, original) or None)}. Refuses rope
    types train.rope_table lacks and sliding windows shorter than seq."""
    hints = {}
    rope = getattr(config, "rope_parameters", None)
    if isinstance(rope, dict) and "rope_theta" in rope:
        kind = rope.get("rope_type", rope.get("type", "default"))
        if kind not in _ROPE_TYPES:
            raise ImportFailure(
                "unsupported rope_type '%s' (%s's rope_parameters): train.rope_table "
                "has the default frequencies and llama3 scaling (%s)"
                % (kind, type(config).__name__, ", ".join(_ROPE_TYPES)))
        llama3 = None
        if kind == "llama3":
            llama3 = (float(rope["factor"]), float(rope["low_freq_factor"]),
                      float(rope["high_freq_factor"]),
                      int(rope["original_max_position_embeddings"]))
        hints["rope"] = (float(rope["rope_theta"]), llama3)
    window = getattr(config, "sliding_window", None)
    layers = getattr(config, "layer_types", None)   # Qwen3: per layer; Mistral: None
    if layers is not None and "sliding_attention" not in layers:
        window = None
    if window is not None and window < seq:
        raise ImportFailure(
            "sliding-window attention (sliding_window = %d < the sequence length "
            "%d) is not supported: train.causal_attention attends to every earlier "
            "position (use --seq %d or less, or --set sliding_window=null)"
            % (window, seq, window))
    return hints


def _rotary_buffers(model):
    """A meta-device model's rotary inv_freq buffers computed on the CPU
    from its config (HF keeps them as non-persistent buffers computed in
    __init__, so on the meta device they have no values):
    {"model." + buffer name: tensor}."""
    out = {}
    for name, module in model.named_modules():
        if not type(module).__name__.endswith("RotaryEmbedding"):
            continue
        buffers = dict(module.named_buffers(recurse=False))
        if not any(b.is_meta for b in buffers.values()):
            continue
        try:
            cpu = type(module)(module.config)
        except Exception:  # noqa: BLE001 - a rotary class we cannot rebuild
            continue
        for b, t in cpu.named_buffers(recurse=False):
            out["model." + (name + "." if name else "") + b] = t
    return out


def python_file(path, entry):
    """A user's file: `entry()` returns (model, inputs) with model(*inputs)
    the loss, or (model, inputs, loss_fn) with loss_fn(model(*inputs[:-1]),
    inputs[-1]) the loss."""
    if not os.path.isfile(path):
        raise ImportFailure("cannot open '%s': no such file" % path)
    name = "zero_import_user_" + os.path.splitext(os.path.basename(path))[0].replace("-", "_")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    try:
        spec.loader.exec_module(module)
    except SyntaxError as e:
        raise ImportFailure("%s:%s: syntax error: %s" % (path, e.lineno, e.msg))
    except Exception as e:  # noqa: BLE001 - the user's code
        raise ImportFailure("loading %s raised %s: %s at %s" % (
            path, type(e).__name__, e, exception_source(e)))
    finally:
        sys.path.pop(0)
    fn = getattr(module, entry, None)
    if not callable(fn):
        found = sorted(k for k, v in vars(module).items()
                       if inspect.isfunction(v) and v.__module__ == name
                       and _no_required_args(v))
        raise ImportFailure("%s has no function '%s'%s (the entry point returns "
                            "(model, example_inputs[, loss_fn]); --entry NAME "
                            "picks another)" % (path, entry,
                                                " (functions: %s)" % ", ".join(found) if found else ""))
    try:
        result = fn()
    except Exception as e:  # noqa: BLE001 - the user's code
        raise ImportFailure("%s() raised %s: %s at %s" % (entry, type(e).__name__, e,
                                                          exception_source(e)))
    what = "%s() in %s" % (entry, path)
    if isinstance(result, dict):
        result = (result.get("model"), result.get("inputs"), result.get("loss"))
    if not isinstance(result, (tuple, list)) or len(result) not in (2, 3):
        raise ImportFailure("%s returned %s; expected (model, example_inputs) or "
                            "(model, example_inputs, loss_fn)" % (what, type(result).__name__))
    model, inputs = result[0], result[1]
    loss_fn = result[2] if len(result) == 3 else None
    if not isinstance(model, torch.nn.Module):
        raise ImportFailure("%s: the model is a %s, not a torch.nn.Module" % (what, type(model).__name__))
    if isinstance(inputs, torch.Tensor):
        inputs = (inputs,)
    if not isinstance(inputs, (tuple, list)) or not inputs or \
            not all(isinstance(t, torch.Tensor) for t in inputs):
        raise ImportFailure("%s: example_inputs must be a tensor or a non-empty "
                            "tuple of tensors" % what)
    if loss_fn is not None and not callable(loss_fn):
        raise ImportFailure("%s: loss_fn is a %s, not callable" % (what, type(loss_fn).__name__))
    if loss_fn is not None and len(inputs) < 2:
        raise ImportFailure("%s: with a loss_fn, the last example input is the "
                            "target, so at least two are needed" % what)
    # Distinct tensors: torch.export merges inputs that are one object.
    inputs = tuple(t.detach().clone() for t in inputs)
    model.train()
    wrapped = WithLoss(model, loss_fn) if loss_fn is not None else _Plain(model)
    on_meta = any(p.is_meta for p in model.parameters())
    # Token ids and targets train on text; any other inputs are named
    # arrays (the driver's array datasets).
    names = None if is_token_contract(inputs) else \
        input_names(model, inputs, loss_fn is not None)
    return Source(wrapped, inputs, "model.", None, not on_meta, type(model).__name__,
                  input_names=names)


def _no_required_args(fn):
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return False
    return all(p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
               for p in sig.parameters.values())


class _Plain(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, *inputs):
        return self.model(*inputs)
