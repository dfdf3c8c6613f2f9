#!/usr/bin/env python3
"""Times training steps of a Hugging Face causal LM (transformers, PyTorch
2.x from the project venv) on random windows of a byte-level text: forward
+ cross-entropy + backward + clip_grad_norm_(1.0) + torch.optim.AdamW, f32,
on --threads threads; prints `torch: <ms> ms/step <tok/s> tok/s (median ...)`
in bench/cpu-vs-pytorch's format. The model is the tiny Llama of
bench/cpu-vs-transformers (the same flags as its zero-model line)."""
import argparse
import statistics
import time

import torch
import torch.nn.functional as F


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--family", default="llama", choices=["llama", "qwen3"])
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--kv-heads", type=int, default=2)
    ap.add_argument("--head-dim", type=int, default=32)
    ap.add_argument("--ffn", type=int, default=384)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    import transformers
    transformers.logging.set_verbosity_error()
    from transformers import LlamaConfig, LlamaForCausalLM, Qwen3Config, Qwen3ForCausalLM
    common = dict(hidden_size=args.dim, num_hidden_layers=args.layers,
                  num_attention_heads=args.heads, num_key_value_heads=args.kv_heads,
                  head_dim=args.head_dim, intermediate_size=args.ffn, vocab_size=256,
                  max_position_embeddings=args.seq, rms_norm_eps=1e-5)
    if args.family == "llama":
        model = LlamaForCausalLM(LlamaConfig(tie_word_embeddings=False, **common))
    else:
        model = Qwen3ForCausalLM(Qwen3Config(tie_word_embeddings=True, **common))
    model.config._attn_implementation = "sdpa"
    model.train()
    params = list(model.parameters())
    opt = torch.optim.AdamW(params, lr=1e-3, weight_decay=0.01)
    data = torch.frombuffer(bytearray(open(args.data, "rb").read()), dtype=torch.uint8).long()
    ms = []
    for step in range(args.warmup + args.steps):
        starts = torch.randint(0, data.numel() - args.seq - 1, (args.batch,))
        x = torch.stack([data[s:s + args.seq] for s in starts])
        y = torch.stack([data[s + 1:s + 1 + args.seq] for s in starts])
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        logits = model(input_ids=x, use_cache=False).logits
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        if step >= args.warmup:
            ms.append((time.perf_counter() - t0) * 1e3)
    tokens = args.batch * args.seq
    mean, med = sum(ms) / len(ms), statistics.median(ms)
    print("torch: %.2f ms/step %.0f tok/s (median %.2f ms/step %.0f tok/s)"
          % (mean, tokens * 1e3 / mean, med, tokens * 1e3 / med))


if __name__ == "__main__":
    main()
