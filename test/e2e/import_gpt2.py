#!/usr/bin/env python3
"""A Hugging Face causal LM (GPT2LMHeadModel, LlamaForCausalLM,
Qwen3ForCausalLM or MistralForCausalLM: --family) through zero-import,
trained by Zero and by PyTorch 2.x from the same weights on the same
batches, and back.

Run with the project venv's python (PyTorch 2.x, transformers, safetensors):
  1. a tiny model of the family (seeded HF init, dropout 0; make_hf) saved
     with save_pretrained into WORK/hf (config.json + model.safetensors);
  2. `zero-import WORK/hf -o m.mlir`: the module, m.safetensors (its
     initial weights, HF names) and m.config.json;
  3. for each (stage, world size) in --runs: zero-compile, then the program
     with `--import m.safetensors --steps 20 --dump-batches --metrics
     --export final.safetensors --val-every 20`;
  4. PyTorch: AutoModelForCausalLM.from_pretrained(WORK/hf) trained on
     exactly the dumped global batches with torch.optim.AdamW (betas (0.9,
     0.999), eps 1e-8, weight decay 0.01 on parameters of rank >= 2 only,
     as train-optimizer does), clip_grad_norm_(1.0) and the driver's LR
     schedule (reference_gpt.py's contract), loss = cross-entropy of the
     logits against the dumped targets: every step's loss must equal the
     driver's within --rel-tol (relative);
     after the first run, the same program with --import of Hugging Face's
     own files (model.safetensors, and the model saved as a sharded
     checkpoint: its directory) must give the same first two losses;
  5. `zero-import --to-hf final.safetensors --config m.config.json -o out`
     (f32, and bf16 for the first run): AutoModelForCausalLM.from_pretrained
     must load it, and its validation loss on the driver's validation
     batches must equal the driver's `val loss` within --rel-tol (f32).
--no-round-trip skips the extra checks of 4 and 5 (the families' shared
code is GPT-2's). Exits non-zero after the comparisons when any failed.
"""
import argparse
import json
import os
import sys

import e2e_runs

os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reference_gpt as ref  # noqa: E402  batches, metrics, LR schedule

N_LAYER, N_HEAD, N_EMBD, VOCAB, SEQ, BATCH = 2, 2, 32, 256, 32, 4
STEPS, LR, VAL_BATCHES, VAL_FRACTION = 20, 1e-3, 2, 0.1
REL_TOL = 1e-5


def run(cmd, env=None):
    return e2e_runs.run(cmd, env, echo=True)


FAMILIES = ("gpt2", "llama", "qwen3", "mistral")


def make_hf(path, family):
    """A tiny model of the family, seeded HF init, saved into path. Llama,
    Qwen3 and Mistral are decoder_parity.hf_model's (Llama: 4 heads, 2 KV
    heads, llama3 RoPE scaling, untied head; Qwen3: QK-norm, head_dim 32 !=
    64 / 4, tied head; Mistral: Llama's sizes, default RoPE, a sliding
    window of SEQ, i.e. full causal attention)."""
    import transformers
    transformers.logging.set_verbosity_error()
    transformers.logging.disable_progress_bar()
    torch.manual_seed(1234)
    if family == "gpt2":
        from transformers import GPT2Config, GPT2LMHeadModel
        config = GPT2Config(n_layer=N_LAYER, n_head=N_HEAD, n_embd=N_EMBD,
                            vocab_size=VOCAB, n_positions=SEQ, resid_pdrop=0.0,
                            embd_pdrop=0.0, attn_pdrop=0.0, bos_token_id=0,
                            eos_token_id=0)
        GPT2LMHeadModel(config).save_pretrained(path)
        return
    import decoder_parity as dec
    cls, config = dec.hf_model(family)
    cls(config).save_pretrained(path)


def save_sharded(hf_dir, path):
    """The model as a sharded checkpoint (model.safetensors.index.json and
    model-0000x-of-0000y.safetensors)."""
    from transformers import AutoModelForCausalLM
    AutoModelForCausalLM.from_pretrained(hf_dir).save_pretrained(path, max_shard_size="40KB")
    shards = [f for f in os.listdir(path) if f.startswith("model-0000")]
    if len(shards) < 2 or not os.path.exists(os.path.join(path, "model.safetensors.index.json")):
        sys.exit("%s: expected a sharded checkpoint, got %s" % (path, sorted(os.listdir(path))))
    print("%s: %d shards" % (path, len(shards)))


def hf_loss(model, ids, targets):
    logits = model(input_ids=ids, use_cache=False).logits
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


def pytorch_run(model, loss_fn, batches, steps_rec, rel_tol, failures, tag):
    """Trains `model` (in place) on the dumped batches as train-optimizer
    does and compares each step's loss(model, ids, targets) with the
    driver's."""
    model.train()
    params = list(model.parameters())          # tied wte/lm_head: one tensor
    decay = [p for p in params if p.dim() >= 2]
    no_decay = [p for p in params if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": ref.WEIGHT_DECAY},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=LR, betas=ref.BETAS, eps=ref.EPS)
    print("\n%s: per-step training loss" % tag)
    print("%-10s %14s %14s %10s" % ("step", "driver", "pytorch", "rel"))
    worst = 0.0
    for step in range(1, STEPS + 1):
        lr = ref.learning_rate(step - 1, STEPS, 0, LR, LR / 10)
        for g in opt.param_groups:
            g["lr"] = ref.f32(lr)
        opt.zero_grad(set_to_none=True)
        _, _, ids, targets = batches[step - 1]
        loss = loss_fn(model, ids, targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, ref.MAX_NORM)
        opt.step()
        ours, theirs = loss.item(), steps_rec[step]["loss"]
        worst = max(worst, abs(ours - theirs) / abs(theirs))
        ref.compare("step %d" % step, ours, theirs, rel_tol, failures)
    print("%s: max relative difference over %d steps: %.2e" % (tag, STEPS, worst))
    return model


def hf_val_loss(model_dir, data):
    from transformers import AutoModelForCausalLM
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
    model.eval()
    with torch.no_grad():
        losses = [hf_loss(model, ids, t).item() for ids, t in ref.val_batches(data, BATCH_GLOBAL[0])]
    return sum(losses) / len(losses)


BATCH_GLOBAL = [BATCH]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", required=True, help="directory with zero-import and zero-compile")
    ap.add_argument("--data", required=True, help="text file (byte tokens)")
    ap.add_argument("--work", required=True, help="scratch directory")
    ap.add_argument("--mpirun", default="mpirun --allow-run-as-root --oversubscribe")
    ap.add_argument("--runs", default="3:4,3:1", help="stage:world-size,... (default 3:4,3:1)")
    ap.add_argument("--rel-tol", type=float, default=REL_TOL)
    ap.add_argument("--family", choices=FAMILIES, default="gpt2")
    ap.add_argument("--no-round-trip", action="store_true",
                    help="only the training comparison (no HF files, no --to-hf)")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    torch.set_num_threads(1)
    ref.SEQ, ref.VAL_BATCHES, ref.VAL_FRACTION = SEQ, VAL_BATCHES, VAL_FRACTION

    hf_dir = os.path.join(args.work, "hf")
    make_hf(hf_dir, args.family)
    module = os.path.join(args.work, "m.mlir")
    run([os.path.join(args.bin, "zero-import"), hf_dir, "--batch", str(BATCH), "-o", module])
    init = os.path.join(args.work, "m.safetensors")
    config = os.path.join(args.work, "m.config.json")
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    failures = []
    for i, spec in enumerate(args.runs.split(",")):
        stage, world = (int(x) for x in spec.split(":"))
        tag = "stage %d, %d rank%s" % (stage, world, "" if world == 1 else "s")
        exe = os.path.join(args.work, "train_s%d_n%d" % (stage, world))
        run([os.path.join(args.bin, "zero-compile"), module, "--stage=%d" % stage,
             "--world-size=%d" % world, "-o", exe])
        out = lambda name: os.path.join(args.work, "%s.s%d.n%d" % (name, stage, world))
        cmd = args.mpirun.split() + ["-np", str(world), exe] if world > 1 else [exe]
        run(cmd + ["--data", args.data, "--steps", str(STEPS), "--lr", repr(LR),
                   "--warmup", "0", "--val-every", str(STEPS), "--val-batches",
                   str(VAL_BATCHES), "--val-fraction", repr(VAL_FRACTION),
                   "--sample-tokens", "0", "--threads", "1", "--quiet",
                   "--import", init, "--dump-batches", out("batches"),
                   "--metrics", out("metrics"), "--export", out("final")], env=env)
        batches = ref.read_batches(out("batches"), STEPS, 1)
        steps_rec, vals = ref.read_metrics(out("metrics"))
        if sorted(steps_rec) != list(range(1, STEPS + 1)) or STEPS not in vals:
            sys.exit("%s: expected %d step records and a val record" % (out("metrics"), STEPS))
        from transformers import AutoModelForCausalLM
        model = AutoModelForCausalLM.from_pretrained(hf_dir, dtype=torch.float32,
                                                     attn_implementation="sdpa")
        pytorch_run(model, hf_loss, batches, steps_rec, args.rel_tol, failures, tag)
        if args.no_round_trip:
            continue
        if i == 0:
            # Hugging Face's own files straight into --import: model.safetensors,
            # and a sharded checkpoint (index + shards) by its directory.
            sharded = os.path.join(args.work, "hf_sharded")
            save_sharded(hf_dir, sharded)
            for what, path in (("model.safetensors", os.path.join(hf_dir, "model.safetensors")),
                               ("sharded", sharded)):
                metrics = out("metrics_" + what.split(".")[0])
                run(cmd + ["--data", args.data, "--steps", "2", "--lr", repr(LR),
                           "--warmup", "0", "--val-every", "0", "--sample-tokens", "0",
                           "--threads", "1", "--quiet", "--import", path,
                           "--metrics", metrics], env=env)
                got, _ = ref.read_metrics(metrics)
                same = all(got[s]["loss"] == steps_rec[s]["loss"] for s in (1, 2))
                print("%s: --import %s: steps 1-2 %s" % (tag, what, "identical" if same else "MISMATCH"))
                if not same:
                    failures.append("--import %s" % what)

        # Weights out: the driver's export as a Hugging Face directory.
        BATCH_GLOBAL[0] = BATCH * world
        for dtype in (("f32", "bf16") if i == 0 else ("f32",)):
            hf_out = out("hf_" + dtype)
            run([os.path.join(args.bin, "zero-import"), "--to-hf", out("final"),
                 "--config", config, "--dtype", dtype, "-o", hf_out])
            with open(os.path.join(hf_out, "config.json")) as f:
                print("%s: config.json dtype %s" % (hf_out, json.load(f)["dtype"]))
            loss = hf_val_loss(hf_out, args.data)
            if dtype == "f32":
                ref.compare("val (%s)" % dtype, loss, vals[STEPS], args.rel_tol, failures)
            else:   # bf16 weights: loads; the loss is close, not equal
                ref.compare("val (%s)" % dtype, loss, vals[STEPS], 2e-2, failures)
    if failures:
        print("\nFAILED:\n  " + "\n  ".join(failures))
        sys.exit(1)
    print("\nimport_gpt2 (%s): PyTorch agrees within %g (relative)" % (args.family, args.rel_tol))


if __name__ == "__main__":
    main()
