"""The model of a zero-train config: where its MLIR comes from, and what the
MLIR says about it (batch, sequence, width, parameters).

Three sources (the `model` section names exactly one):
  zero_model = "gpt" | "gpt2" | "llama" | ...   plus zero-model's flags as keys
  mlir = "path/to/model.mlir"                    a forward graph (or later stage)
  import = "model.py" | "HF dir" | "gpt2"        through zero-import (torch)
"""

import re

__all__ = ["ModelFacts", "facts_from_mlir", "ZERO_MODEL_FLAGS"]

# zero-model's flags (tools/zero-model/zero-model.cpp) as config keys, with
# the type each takes. `batch` is not among them: the micro-batch is
# train_micro_batch_size_per_gpu.
ZERO_MODEL_FLAGS = {
    "n_layer": int, "n_head": int, "n_embd": int, "vocab": int,
    "padded_vocab": int, "seq": int, "dtype": str,
    "dim": int, "n_layers": int, "n_heads": int, "n_kv_heads": int,
    "head_dim": int, "ffn_dim": int, "multiple_of": int,
    "ffn_dim_multiplier": float, "rope_theta": float, "rope_scaling": str,
    "rope_layout": str, "norm_eps": float, "tie_embeddings": bool,
    "qk_norm": bool, "input": int, "hidden": list, "output": int,
    "activation": str,
}

ZERO_MODEL_NAMES = ("gpt", "gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl",
                    "mlp", "llama", "qwen3", "llama3-8b", "llama3.2-1b",
                    "qwen3-0.6b", "qwen3-8b", "llama3-debugmodel")

_PARAM = re.compile(r'train\.param\s+@("(?:[^"\\]|\\.)*"|[\w.$-]+)\s*:\s*tensor<([0-9x]*?)x?(f32|bf16|f16)>')
_FORWARD = re.compile(r"func\.func\s+@forward\s*\(\s*%[\w.$-]+\s*:\s*tensor<(\d+)x(\d+)xi32>")
_LOGITS = re.compile(r"func\.func\s+@logits\s*\([^)]*\)\s*->\s*\(?\s*tensor<(?:\d+x)*(\d+)x(?:f32|bf16|f16)>")
_NUM_CLASSES = re.compile(r"train\.cross_entropy\b[^\n]*?num_classes\s*=\s*(\d+)")
_ATTR_INT = re.compile(r"\b(zero\.stage|zero\.world_size)\s*=\s*(\d+)")


class ModelFacts:
    """What zero-train reads from a model's MLIR text."""

    def __init__(self):
        self.batch = None     # B of forward's ids [B, T]
        self.seq = None       # T
        self.hidden = None    # width of the first 2-D parameter (token embedding)
        self.dtype = None     # element type of the parameters
        self.num_params = 0   # elements of all parameters
        self.params = []      # (name, numel)
        self.stage = None     # zero.stage when already partitioned
        self.has_step = False
        self.has_optimizer = False
        self.vocab = None     # classes of the loss (@logits' last dim, or num_classes)

    def largest_block(self):
        """Elements of the largest block of parameters (names sharing a
        '<word><n>.' prefix: h3., model.layers.3., layers.7.), the unit of a
        stage-3 all-gather; the largest parameter when there are no blocks."""
        blocks = {}
        for name, numel in self.params:
            m = re.match(r"^(.*?[A-Za-z_]*\d+)\.", name)
            key = m.group(1) if m else name
            blocks[key] = blocks.get(key, 0) + numel
        return max(blocks.values()) if blocks else 0


def facts_from_mlir(text):
    f = ModelFacts()
    for m in _PARAM.finditer(text):
        name = m.group(1).strip('"')
        dims = [int(d) for d in m.group(2).split("x") if d] if m.group(2) else []
        numel = 1
        for d in dims:
            numel *= d
        f.params.append((name, numel))
        f.num_params += numel
        f.dtype = f.dtype or m.group(3)
        if f.hidden is None and len(dims) == 2:
            f.hidden = dims[1]
    m = _FORWARD.search(text)
    if m:
        f.batch, f.seq = int(m.group(1)), int(m.group(2))
    for m in _ATTR_INT.finditer(text):
        if m.group(1) == "zero.stage":
            f.stage = int(m.group(2))
    m = _NUM_CLASSES.search(text) or _LOGITS.search(text)
    if m:
        f.vocab = int(m.group(1))
    f.has_step = "@forward_backward" in text
    f.has_optimizer = "@optimizer_step" in text
    return f
