"""zero-import: a PyTorch or Hugging Face model -> train-dialect MLIR + weights.

  zero-import MODEL [-o model.mlir] [--set KEY=VALUE]... [--batch B] [--seq T]
  zero-import --to-hf EXPORTED.safetensors --config model.config.json -o DIR

Exit status: 0 on success, 1 on a user error (one line on stderr, nothing
written), 2 on an internal error.
"""
import argparse
import os
import sys
import textwrap

USAGE_EPILOG = """\
MODEL is one of
  DIR        a Hugging Face model directory: config.json, and optionally
             model.safetensors (or model.safetensors.index.json + shards);
             without weights the model is built on the meta device
  FAMILY     gpt2, llama, qwen3 or mistral: that family's default config with
             --set overrides (constructor arguments: head_dim follows
             hidden_size / num_attention_heads; --set rope_theta=X and
             --set rope_parameters={...} set the rotary frequencies), on
             the meta device
  FILE.py    a Python file whose function ENTRY (--entry, default zero_model)
             returns (model, example_inputs) with model(*example_inputs) the
             scalar loss, or (model, example_inputs, loss_fn) with
             loss_fn(model(*example_inputs[:-1]), example_inputs[-1]) the loss;
             two integer inputs of one shape [B, T] are token ids and targets
             (trained on text), any other inputs are named after forward's
             parameters (the last with a loss_fn: target) and trained on
             arrays of those names (--data FILE.safetensors or a .npy dir)

Hugging Face causal LMs train on next-token cross-entropy of
@forward(ids [B, T], targets [B, T]) (targets = ids shifted by one, what the
training driver feeds); their dropout probabilities are set to 0. The module
also gets @logits(ids) for sampling. Outputs next to -o OUT.mlir: OUT.safetensors
(the initial weights, when the model has any: load them with the compiled
program's --import) and, for Hugging Face models, OUT.config.json (for --to-hf).

Supported ATen ops (torch.export's graph) and their train ops:
%s
  + the tanh GELU written out (0.5*x*(1+tanh(sqrt(2/pi)*(x+0.044715*x^3))),
    Hugging Face's gelu_new) -> train.gelu; ops on values that depend on no
    input or parameter (arange, masks) are evaluated at import time.
  + Llama / Qwen3 / Mistral (Hugging Face's modules, or the same math in
    your own): RMSNorm w * (x * rsqrt(mean(x^2, -1) + eps)) (with its f32
    casts) -> train.rms_norm (Qwen3's QK-norm per head too); silu(g) * u ->
    train.swiglu; x * cos + rotate_half(x) * sin with cos/sin constant (from
    inv_freq and positions 0..T-1) -> train.rope_table (theta and llama3
    scaling of the config, checked against the values; else theta inferred)
    + train.rope; repeat_kv's expand + reshape of k, v (or enable_gqa) ->
    train.causal_attention with the K/V heads (grouped-query attention).

Not supported (one message naming the op and your source line, exit 1):
other ops, data-dependent control flow, in-place ops on parameters or
buffers (BatchNorm statistics), float64/complex dtypes, dropout with p > 0,
attention masks other than causal, rope types other than default and
llama3 (yarn, linear, dynamic, longrope), sliding windows shorter than the
sequence, rotary tables that are not train.rope_table's.
"""


def _supported_table():
    from . import ops
    lines = []
    for aten, doc in ops.SUPPORTED:
        lines.extend(textwrap.wrap("%s -> %s" % (aten, doc), width=78,
                                   initial_indent="  ", subsequent_indent="      "))
    return "\n".join(lines)


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        sys.stderr.write("zero-import: error: %s (see zero-import --help)\n" % message)
        sys.exit(1)


def _parser():
    p = _Parser(prog="zero-import",
                description="Imports a PyTorch module or Hugging Face model into "
                            "Zero's train dialect (forward + loss) via torch.export.",
                epilog=USAGE_EPILOG % _supported_table(),
                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model", nargs="?", help="DIR, FAMILY or FILE.py (below)")
    p.add_argument("-o", dest="output", help="output module (.mlir; default stdout); "
                   "with --to-hf the output directory")
    p.add_argument("--weights", help="initial weights (default: OUT.safetensors next to -o)")
    p.add_argument("--no-weights", action="store_true", help="do not write the weights")
    p.add_argument("--set", dest="overrides", action="append", default=[],
                   metavar="KEY=VALUE", help="Hugging Face config override (repeatable)")
    p.add_argument("--batch", type=int, default=4, help="B of the ids [B, T] (default 4; HF models)")
    p.add_argument("--seq", type=int, default=0,
                   help="T of the ids [B, T] (default: the config's n_positions / "
                        "max_position_embeddings; HF models)")
    p.add_argument("--dtype", choices=("f32", "bf16"), default="f32",
                   help="parameter dtype of Hugging Face models; with --to-hf the "
                        "written weights' dtype (default f32)")
    p.add_argument("--entry", default=None, help="function in FILE.py (default zero_model)")
    p.add_argument("--to-hf", metavar="EXPORTED", help="turn a training program's "
                   "--export file into a Hugging Face directory (-o DIR)")
    p.add_argument("--config", help="with --to-hf: the OUT.config.json zero-import wrote")
    return p


def _outputs(args, is_hf):
    """(module path or None, weights path or None, config path or None)."""
    out = args.output
    if out is not None:
        directory = os.path.dirname(os.path.abspath(out))
        if not os.path.isdir(directory):
            raise_failure("cannot write '%s': directory '%s' does not exist" % (out, directory))
        if os.path.isdir(out):
            raise_failure("cannot write '%s': it is a directory" % out)
        if args.model and os.path.exists(args.model) and os.path.exists(out) and \
                os.path.samefile(args.model, out):
            raise_failure("-o '%s' is the input file" % out)
    stem = os.path.splitext(out)[0] if out else None
    weights = None
    if not args.no_weights:
        weights = args.weights or (stem + ".safetensors" if stem else None)
    config = stem + ".config.json" if stem and is_hf else None
    return out, weights, config


def raise_failure(message):
    from .errors import ImportFailure
    raise ImportFailure(message)


def main(argv):
    args = _parser().parse_args(argv)
    import torch
    from . import frontend, importer, weights
    from .errors import ImportFailure
    dtype = torch.float32 if args.dtype == "f32" else torch.bfloat16
    if args.to_hf:
        if not args.output or not args.config:
            raise ImportFailure("--to-hf needs --config CONFIG.json and -o DIR")
        n = weights.to_hf(args.to_hf, args.config, args.output, dtype)
        print("zero-import: wrote %s (config.json, model.safetensors: %d tensors, %s)"
              % (args.output, n, args.dtype), file=sys.stderr)
        return 0
    if not args.model:
        raise ImportFailure("no MODEL given (a Hugging Face directory, a family name "
                            "or a .py file)")
    if args.batch < 1 or args.seq < 0:
        raise ImportFailure("--batch must be positive and --seq non-negative")
    is_py = args.model.endswith(".py")
    if is_py and (args.overrides or args.seq):
        raise ImportFailure("--set and --seq apply to Hugging Face models; a .py "
                            "file's example inputs give the shapes")
    if not is_py and args.entry:
        raise ImportFailure("--entry applies to .py files")
    out, weights_path, config_path = _outputs(args, not is_py)
    if is_py:
        source = frontend.python_file(args.model, args.entry or frontend.DEFAULT_ENTRY)
    else:
        overrides = frontend.parse_overrides(args.overrides)
        source = frontend.huggingface(args.model, overrides, args.batch, args.seq, dtype)
    text, tensors, params = importer.import_source(source)
    if weights_path and tensors is None and args.weights:
        raise ImportFailure("--weights: the model has no weights (it is on the meta device)")
    # Everything is computed: now write (each file atomically).
    written = []
    if out:
        weights.atomic_write(out, lambda tmp: weights._write_text(tmp, text))
        written.append(out)
    else:
        sys.stdout.write(text)
    if weights_path and tensors is not None:
        weights.save_weights(weights_path, tensors,
                             {"format": "pt", "producer": "zero-import"})
        written.append(weights_path)
    if config_path and source.hf_config is not None:
        import json
        cfg = dict(source.user_config)
        cfg.setdefault("architectures", [type(source.module.model).__name__])
        weights.atomic_write(config_path, lambda tmp: weights._write_text(
            tmp, json.dumps(cfg, indent=2, sort_keys=True, default=str) + "\n"))
        written.append(config_path)
    trainable = sum(p.type.numel() for p in params.values() if p.trainable)
    frozen = sum(p.type.numel() for p in params.values() if not p.trainable)
    print("zero-import: %s: %d parameters (%d trainable elements%s)%s" % (
        source.description, len(params), trainable,
        ", %d frozen" % frozen if frozen else "",
        "; wrote " + ", ".join(written) if written else ""), file=sys.stderr)
    return 0


def run():
    from .errors import ImportFailure
    try:
        return main(sys.argv[1:])
    except ImportFailure as e:
        sys.stderr.write("zero-import: error: %s\n" % e)
        return 1
    except KeyboardInterrupt:
        sys.stderr.write("zero-import: interrupted\n")
        return 130
    except Exception as e:  # noqa: BLE001 - last resort: never a traceback
        sys.stderr.write("zero-import: internal error: %s: %s (please report it with "
                         "the command line)\n" % (type(e).__name__, e))
        if os.environ.get("ZERO_IMPORT_DEBUG"):
            raise
        return 2


if __name__ == "__main__":
    sys.exit(run())
