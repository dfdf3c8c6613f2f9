#!/usr/bin/env python3
"""A tiny Llama and a tiny Qwen3 trained by Zero and by Hugging Face
transformers (PyTorch 2.x) from the same weights on the same batches.

Run with the project venv's python (PyTorch 2.x, transformers, safetensors):
  1. LlamaForCausalLM (2 layers, dim 64, 4 heads, 2 KV heads, SwiGLU F 128,
     RoPE theta 1e4 with llama3 scaling (factor 8, low 1, high 4, original
     max positions 32), untied head, byte vocab 256) and Qwen3ForCausalLM
     (QK-norm, head_dim 32 != 64 / 4, tied head), seeded HF init, saved
     with save_pretrained into WORK/<model>/hf;
  2. `zero-model llama|qwen3` with the same config (Hugging Face parameter
     names; global batch 4, 4/N per rank; bf16 for bf16-mixed), zero-compile
     at each (stage, world size, precision) of --runs,
     and the program with `--import hf/model.safetensors --steps 20
     --dump-batches --metrics`;
  3. the HF model trained on exactly the dumped global batches with
     torch.optim.AdamW (betas (0.9, 0.999), eps 1e-8, weight decay 0.01 on
     parameters of rank >= 2 only, as train-optimizer does),
     clip_grad_norm_(1.0) and the driver's LR schedule (reference_gpt.py),
     loss = F.cross_entropy(logits, targets, ignore_index=-100) (HF's
     causal-LM loss on already shifted labels): every step's loss must
     equal the driver's within --rel-tol (f32) or --bf16-tol (bf16-mixed,
     against the f32 PyTorch run);
  4. every run's losses also against the first run's (stage 0, one rank):
     stage and world size change where state lives, never what is computed
     (within --rel-tol).
Exits non-zero after the comparisons when any failed.
"""
import argparse
import os
import sys

os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reference_gpt as ref  # noqa: E402  batches, metrics, LR schedule

run = ref.run

DIM, LAYERS, HEADS, KV_HEADS, FFN, VOCAB, SEQ, BATCH = 64, 2, 4, 2, 128, 256, 32, 4
THETA, EPS = 10000.0, 1e-5
SCALING = {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
           "original_max_position_embeddings": 32}
QWEN_HEAD_DIM = 32
STEPS, LR = 20, 1e-3
# Measured agreement is ~1e-7 (f32 summation order); 1e-5 is the bar.
REL_TOL = 1e-5
BF16_TOL = 2e-2


def hf_model(family):
    import transformers
    transformers.logging.set_verbosity_error()
    from transformers import LlamaConfig, LlamaForCausalLM, Qwen3Config, Qwen3ForCausalLM
    common = dict(hidden_size=DIM, num_hidden_layers=LAYERS, num_attention_heads=HEADS,
                  num_key_value_heads=KV_HEADS, intermediate_size=FFN, vocab_size=VOCAB,
                  max_position_embeddings=SEQ, rms_norm_eps=EPS, bos_token_id=0,
                  eos_token_id=0, attention_dropout=0.0)
    if family == "llama":
        config = LlamaConfig(rope_parameters=dict(rope_type="llama3", rope_theta=THETA, **SCALING),
                             tie_word_embeddings=False, attention_bias=False, mlp_bias=False,
                             **common)
        return LlamaForCausalLM, config
    if family == "mistral":   # Llama's sizes, a window of SEQ (full causal attention)
        from transformers import MistralConfig, MistralForCausalLM
        config = MistralConfig(rope_parameters=dict(rope_type="default", rope_theta=THETA),
                               sliding_window=SEQ, tie_word_embeddings=False, **common)
        return MistralForCausalLM, config
    config = Qwen3Config(head_dim=QWEN_HEAD_DIM, tie_word_embeddings=True,
                         rope_parameters=dict(rope_type="default", rope_theta=THETA),
                         use_sliding_window=False, attention_bias=False, **common)
    return Qwen3ForCausalLM, config


def zero_model_flags(family, batch, dtype):
    flags = [family, "--dim", str(DIM), "--n-layers", str(LAYERS), "--n-heads", str(HEADS),
             "--n-kv-heads", str(KV_HEADS), "--ffn-dim", str(FFN), "--vocab", str(VOCAB),
             "--seq", str(SEQ), "--batch", str(batch), "--rope-theta", repr(THETA),
             "--norm-eps", repr(EPS), "--dtype", dtype]
    if family == "llama":
        flags += ["--rope-scaling", "llama3:%g,%g,%g,%d" % (
            SCALING["factor"], SCALING["low_freq_factor"], SCALING["high_freq_factor"],
            SCALING["original_max_position_embeddings"]), "--tie-embeddings=false",
                  "--head-dim", str(DIM // HEADS)]
    else:
        flags += ["--rope-scaling", "none", "--qk-norm", "--head-dim", str(QWEN_HEAD_DIM),
                  "--tie-embeddings"]
    return flags


def hf_loss(model, ids, targets):
    logits = model(input_ids=ids, use_cache=False).logits
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]).float(), targets.reshape(-1),
                           ignore_index=-100)


def pytorch_losses(cls, hf_dir, batches):
    """The HF model trained as train-optimizer does; its per-step losses."""
    model = cls.from_pretrained(hf_dir, dtype=torch.float32, attn_implementation="sdpa")
    model.train()
    params = list(model.parameters())          # a tied head is one tensor
    decay = [p for p in params if p.dim() >= 2]
    no_decay = [p for p in params if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": ref.WEIGHT_DECAY},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=LR, betas=ref.BETAS, eps=ref.EPS)
    losses = []
    for step in range(1, STEPS + 1):
        for g in opt.param_groups:
            g["lr"] = ref.f32(ref.learning_rate(step - 1, STEPS, 0, LR, LR / 10))
        opt.zero_grad(set_to_none=True)
        _, _, ids, targets = batches[step - 1]
        loss = hf_loss(model, ids, targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, ref.MAX_NORM)
        opt.step()
        losses.append(loss.item())
    return losses


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", required=True, help="directory with zero-model and zero-compile")
    ap.add_argument("--data", required=True, help="text file (byte tokens)")
    ap.add_argument("--work", required=True, help="scratch directory")
    ap.add_argument("--mpirun", default="mpirun --allow-run-as-root --oversubscribe")
    ap.add_argument("--models", default="llama,qwen3")
    ap.add_argument("--runs", default="0:1:fp32,3:2:fp32,1:4:fp32,3:2:bf16-mixed",
                    help="stage:world-size:precision,... (the first is the baseline)")
    ap.add_argument("--rel-tol", type=float, default=REL_TOL)
    ap.add_argument("--bf16-tol", type=float, default=BF16_TOL)
    args = ap.parse_args()
    torch.set_num_threads(1)
    ref.SEQ = SEQ
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    failures = []
    for family in args.models.split(","):
        work = os.path.join(args.work, family)
        os.makedirs(work, exist_ok=True)
        cls, config = hf_model(family)
        torch.manual_seed(1234)
        hf_dir = os.path.join(work, "hf")
        cls(config).save_pretrained(hf_dir)
        baseline = torch_ref = None
        for spec in args.runs.split(","):
            stage, world, precision = spec.split(":")
            # The same global batch on every world size (1/N of it per rank).
            dtype = "f32" if precision == "fp32" else "bf16"
            module = os.path.join(work, "m.n%s.%s.mlir" % (world, dtype))
            run([os.path.join(args.bin, "zero-model")]
                + zero_model_flags(family, BATCH // int(world), dtype) + ["-o", module])
            tag = "%s stage %s, %s rank%s, %s" % (family, stage, world,
                                                  "" if world == "1" else "s", precision)
            exe = os.path.join(work, "train_s%s_n%s_%s" % (stage, world, precision))
            run([os.path.join(args.bin, "zero-compile"), module, "--stage=" + stage,
                 "--world-size=" + world, "--precision=" + precision, "-o", exe])
            out = lambda name: os.path.join(work, "%s.s%s.n%s.%s" % (name, stage, world, precision))
            cmd = (args.mpirun.split() + ["-np", world, exe]) if world != "1" else [exe]
            run(cmd + ["--data", args.data, "--steps", str(STEPS), "--lr", repr(LR),
                       "--warmup", "0", "--val-every", "0", "--sample-tokens", "0",
                       "--threads", "1", "--quiet",
                       "--import", os.path.join(hf_dir, "model.safetensors"),
                       "--dump-batches", out("batches"), "--metrics", out("metrics")], env=env)
            steps_rec, _ = ref.read_metrics(out("metrics"))
            ours = [steps_rec[s]["loss"] for s in range(1, STEPS + 1)]
            if torch_ref is None:
                batches = ref.read_batches(out("batches"), STEPS, 1)
                torch_ref = pytorch_losses(cls, hf_dir, batches)
                baseline = ours
            tol = args.rel_tol if precision == "fp32" else args.bf16_tol
            print("\n%s: per-step training loss against %s" % (tag, cls.__name__))
            print("%-10s %14s %14s %10s" % ("step", "driver", "transformers", "rel"))
            worst = 0.0
            for step, (a, b) in enumerate(zip(ours, torch_ref), start=1):
                worst = max(worst, abs(a - b) / abs(b))
                ref.compare("step %d" % step, b, a, tol, failures)
            print("%s: max relative difference over %d steps: %.2e (tolerance %g)"
                  % (tag, STEPS, worst, tol))
            if precision == "fp32":
                same = max(abs(a - b) / abs(b) for a, b in zip(ours, baseline))
                ok = same <= args.rel_tol
                print("%s: against the first run: %.2e %s" % (tag, same, "ok" if ok else "MISMATCH"))
                if not ok:
                    failures.append(tag + " vs the first run")
    if failures:
        print("decoder_parity: %d comparison(s) failed: %s" % (len(failures), ", ".join(failures)))
        return 1
    print("decoder_parity: transformers agrees within %g (f32) and %g (bf16-mixed)"
          % (args.rel_tol, args.bf16_tol))
    return 0


if __name__ == "__main__":
    sys.exit(main())
