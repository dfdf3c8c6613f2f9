"""zero-model's Llama/Qwen3 parameters against transformers' own models.

For each case, builds the Hugging Face model (LlamaForCausalLM /
Qwen3ForCausalLM) on the meta device from the same configuration and checks
that `zero-model --print-param-count` equals `model.num_parameters()` and
that the train.param names and shapes equal `model.named_parameters()`
(tied weights listed once). Prints one line per case; exits 1 on any
difference.

Usage: hf_llama_params.py <zero-model binary>
"""
import re
import subprocess
import sys

import torch
from transformers import LlamaConfig, LlamaForCausalLM, Qwen3Config, Qwen3ForCausalLM


def llama(hidden, inter, layers, heads, kv, head_dim, vocab, tied):
    return LlamaForCausalLM, LlamaConfig(
        hidden_size=hidden, intermediate_size=inter, num_hidden_layers=layers,
        num_attention_heads=heads, num_key_value_heads=kv, head_dim=head_dim,
        vocab_size=vocab, tie_word_embeddings=tied)


def qwen3(hidden, inter, layers, heads, kv, head_dim, vocab, tied):
    return Qwen3ForCausalLM, Qwen3Config(
        hidden_size=hidden, intermediate_size=inter, num_hidden_layers=layers,
        num_attention_heads=heads, num_key_value_heads=kv, head_dim=head_dim,
        vocab_size=vocab, tie_word_embeddings=tied)


TINY = ["--dim", "64", "--n-layers", "2", "--n-heads", "4", "--n-kv-heads", "2",
        "--vocab", "256", "--seq", "8", "--batch", "1"]
CASES = [
    ("llama3-8b", ["llama3-8b"], llama(4096, 14336, 32, 32, 8, 128, 128256, False)),
    ("llama3.2-1b", ["llama3.2-1b"], llama(2048, 8192, 16, 32, 8, 64, 128256, True)),
    ("qwen3-0.6b", ["qwen3-0.6b"], qwen3(1024, 3072, 28, 16, 8, 128, 151936, True)),
    ("qwen3-8b", ["qwen3-8b"], qwen3(4096, 12288, 36, 32, 8, 128, 151936, False)),
    ("llama3-debugmodel", ["llama3-debugmodel"], llama(256, 768, 6, 16, 16, 16, 2048, False)),
    ("tiny llama", ["llama"] + TINY + ["--head-dim", "16", "--ffn-dim", "128"],
     llama(64, 128, 2, 4, 2, 16, 256, False)),
    ("tiny qwen3", ["qwen3"] + TINY + ["--head-dim", "32", "--ffn-dim", "96", "--tie-embeddings"],
     qwen3(64, 96, 2, 4, 2, 32, 256, True)),
]

PARAM = re.compile(r"^\s*train\.param @([\w.]+) : tensor<([0-9x]+)x[a-z0-9]+>", re.M)


def main():
    zero_model = sys.argv[1]
    failures = 0
    for name, args, (cls, config) in CASES:
        with torch.device("meta"):
            model = cls(config)
        hf_count = model.num_parameters()
        hf_params = {n: list(p.shape) for n, p in model.named_parameters()}
        count = int(subprocess.run([zero_model] + args + ["--print-param-count"],
                                   check=True, capture_output=True, text=True).stdout)
        ir = subprocess.run([zero_model] + args + ["--seq", "8", "--batch", "1"],
                            check=True, capture_output=True, text=True).stdout
        ours = {n: [int(d) for d in s.split("x")] for n, s in PARAM.findall(ir)}
        problems = []
        if count != hf_count:
            problems.append("count %d != transformers %d" % (count, hf_count))
        for n in sorted(set(ours) ^ set(hf_params)):
            problems.append("%s only in %s" % (n, "zero-model" if n in ours else "transformers"))
        for n in sorted(set(ours) & set(hf_params)):
            if ours[n] != hf_params[n]:
                problems.append("%s: %s != %s" % (n, ours[n], hf_params[n]))
        if problems:
            failures += 1
            print("%s: MISMATCH %s" % (name, "; ".join(problems[:5])))
        else:
            print("%s: %d parameters, %d names and shapes as transformers ok"
                  % (name, count, len(ours)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
