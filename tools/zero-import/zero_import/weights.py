"""Weights in and out: the importer's initial weights, and `--to-hf`.

Tensor names are the train.param symbols, which are the model's state_dict
names, so the compiled program's `--export` file already has Hugging Face
names: `to_hf` only adds config.json, restores tied names HF expects to
find by tying, and picks the dtype.
"""
import json
import os
import tempfile

import torch

from .errors import ImportFailure


def atomic_write(path, write):
    """Calls write(tmp_path), then renames tmp over path (nothing is left
    behind on failure)."""
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".%s." % os.path.basename(path), dir=directory)
    os.close(fd)
    umask = os.umask(0)
    os.umask(umask)
    try:
        write(tmp)
        os.chmod(tmp, 0o666 & ~umask)   # mkstemp's 0600 is not a file's usual mode
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def save_weights(path, tensors, metadata):
    from safetensors.torch import save_file
    atomic_write(path, lambda tmp: save_file(
        {n: t.cpu().contiguous() for n, t in tensors.items()}, tmp, metadata=metadata))


def read_safetensors(path):
    from safetensors import SafetensorError
    from safetensors.torch import load_file
    if not os.path.isfile(path):
        raise ImportFailure("cannot open '%s': no such file" % path)
    try:
        return load_file(path)
    except (SafetensorError, OSError, ValueError) as e:
        raise ImportFailure("'%s' is not a safetensors file: %s" % (path, e))


def to_hf(exported, config_path, out_dir, dtype):
    """A directory AutoModelForCausalLM.from_pretrained loads: config.json
    (the importer's copy of the model's config) and model.safetensors with
    the exported tensors in `dtype` (torch.float32 or torch.bfloat16)."""
    if not os.path.isfile(config_path):
        raise ImportFailure("cannot open config '%s': no such file (zero-import "
                            "writes it next to the module as NAME.config.json)" % config_path)
    try:
        with open(config_path) as f:
            config = json.load(f)
    except (OSError, ValueError) as e:
        raise ImportFailure("cannot read config '%s': %s" % (config_path, e))
    if not isinstance(config, dict) or "model_type" not in config:
        raise ImportFailure("'%s' is not a Hugging Face config (no model_type)" % config_path)
    tensors = read_safetensors(exported)
    if os.path.exists(out_dir) and not os.path.isdir(out_dir):
        raise ImportFailure("'%s' exists and is not a directory" % out_dir)
    for f in ("config.json", "model.safetensors"):
        if os.path.exists(os.path.join(out_dir, f)):
            raise ImportFailure("'%s' already holds %s (refusing to overwrite)" % (out_dir, f))
    config = dict(config)
    config["dtype"] = "float32" if dtype == torch.float32 else "bfloat16"
    os.makedirs(out_dir, exist_ok=True)
    atomic_write(os.path.join(out_dir, "config.json"),
                 lambda tmp: _write_text(tmp, json.dumps(config, indent=2, sort_keys=True) + "\n"))
    save_weights(os.path.join(out_dir, "model.safetensors"),
                 {n: t.to(dtype) for n, t in tensors.items()}, {"format": "pt"})
    return len(tensors)


def _write_text(path, text):
    with open(path, "w") as f:
        f.write(text)
