"""From a config to the zero-compile flags and the program's flags.

resolve(cfg, world, facts) reads every key of the config once: DeepSpeed's
keys are applied (mapped onto a zero-compile or program flag) or listed as
ignored with the reason (keys.py); Zero's own sections (model, data, run,
zero_compile) sit beside them. "auto" takes the value of the `run` key of the
same meaning, else Zero's default, as the Hugging Face Trainer fills it from
its own arguments. Any problem raises ConfigError naming the key; nothing is
run or written here.

`facts` (model.ModelFacts) is what the model's MLIR says (batch, width,
parameters); None while the model is still to be imported, in which case the
width-derived "auto" values are left open (Plan.pending).
"""

import glob
import os

from . import keys
from .config import ConfigError, dotted
from .model import ZERO_MODEL_FLAGS, ZERO_MODEL_NAMES
from .reader import (AUTO, MISSING, _check_betas, _fmt, _is_num, _note_value, _num,
                     _Reader, _type_name)
from .schedule import _resolve_scheduler
from .zero_section import _resolve_zero

__all__ = ["Plan", "resolve"]


class Plan:
    def __init__(self):
        self.model = {}           # kind: zero_model|mlir|import, and its arguments
        self.model_args = []      # zero-model flags / zero-import arguments
        self.model_name = None
        self.compile_args = []    # zero-compile flags (no input, no -o)
        self.exe_args = []        # the program's flags
        self.notes = []           # one line per DeepSpeed key: applied / auto / ignored
        self.target = "cpu"
        self.cache_dir = None
        self.stage = 0
        self.world = 1
        self.micro_batch = None
        self.pending = False      # width-derived autos wait for the import
        self.uses_run_import = False
        self.cxx = None
        self.tokenizer = None     # data.tokenizer: decodes the samples after the run
        self.sample_out = None    # run.sample_out: the program's --sample-out
        self.sample_tokens = 200  # the program's --sample-tokens (its default)


_TOP_APPLIED = ("train_batch_size", "train_micro_batch_size_per_gpu",
                "gradient_accumulation_steps", "gradient_clipping", "bf16", "bfloat16",
                "fp16", "optimizer", "scheduler", "zero_optimization",
                "activation_checkpointing", "tensorboard", "tensor_parallel")
_ZERO_SECTIONS = ("model", "data", "run", "zero_compile")

_RUN_KEYS = ("steps", "seed", "lr", "min_lr", "warmup_steps", "lr_schedule",
             "weight_decay", "betas", "eps", "max_grad_norm", "precision",
             "micro_batch", "grad_accum", "val_every", "val_batches", "metrics",
             "sample_tokens", "temperature", "threads", "checkpoint_dir",
             "checkpoint_every", "keep_checkpoints", "resume", "overwrite", "export",
             "import", "quiet", "world_size", "tensorboard", "peak_tflops",
             "sample_out")
_COMPILE_KEYS = ("target", "cache_dir", "grouping", "device_memory", "prefetch_distance",
                 "fuse_epilogues", "fuse_layer_norm", "fuse_cross_entropy",
                 "buffer_assign", "decay_min_rank", "cxx", "activation_checkpointing")
def _world_note(world, source):
    return "%d (%s)" % (world, source)


def _resolve_tensor_parallel(r, plan, world, world_source, facts):
    """tensor_parallel.autotp_size M (DeepSpeed AutoTP training): zero-compile
    --tensor-parallel=M, Megatron's cuts over M tensor ranks. Returns M (1
    without the section)."""
    tp_p = ("tensor_parallel",)
    if r.get(tp_p) is MISSING:
        return 1
    r.check_keys(tp_p, ("autotp_size",))
    size_p = tp_p + ("autotp_size",)
    tp = r.integer(size_p, lo=1, default=1)
    if world % tp:
        raise ConfigError(size_p, "%d does not divide the world size %s (the mesh is "
                          "world size = data-parallel ranks x autotp_size)" % (
                              tp, _world_note(world, world_source)))
    if tp == 1:
        return 1
    if facts is not None and facts.has_step:
        raise ConfigError(size_p, "the model file already has its backward "
                          "(@forward_backward), so it cannot be cut over tensor ranks; "
                          "use the forward graph")
    r.applied(size_p, str(tp), "zero-compile --tensor-parallel=%d (Megatron's MLP and "
              "attention cuts over %d tensor ranks, %d data-parallel ranks)" % (
                  tp, tp, world // tp))
    plan.compile_args.append("--tensor-parallel=%d" % tp)
    return tp


def _resolve_partitioned_activations(r, plan, ac_p, policy):
    """With a tensor axis: activation_checkpointing.partition_activations (P_a)
    and cpu_checkpointing (P_a+cpu) as zero-compile's --checkpoint-partition=
    tensor and --checkpoint-offload=host."""
    pa_p, cpu_p = ac_p + ("partition_activations",), ac_p + ("cpu_checkpointing",)
    pa = r.boolean(pa_p, default=False)
    cpu = r.boolean(cpu_p, default=False)
    if (pa or cpu) and (policy is MISSING or policy == "none"):
        raise ConfigError(pa_p if pa else cpu_p, "partitions the block checkpoints, but "
                          "activation checkpointing is off (zero_compile."
                          "activation_checkpointing is \"none\")")
    if cpu and not pa:
        raise ConfigError(cpu_p, "moves the partitioned checkpoints to host memory; it "
                          "needs partition_activations = true")
    if pa:
        r.applied(pa_p, "true", "zero-compile --checkpoint-partition=tensor (ZeRO-R's P_a: "
                  "1/M of each block checkpoint per tensor rank)")
        plan.compile_args.append("--checkpoint-partition=tensor")
    if cpu:
        r.applied(cpu_p, "true", "zero-compile --checkpoint-offload=host (P_a+cpu; on the "
                  "CUDA target the slices go to pinned host memory, on the CPU target the "
                  "arenas are host memory already)")
        plan.compile_args.append("--checkpoint-offload=host")


def resolve(cfg, world, world_source, facts, model_facts_fixed):
    """Returns a Plan, or raises ConfigError.

    world: the data-parallel world size N, from `world_source` (a launcher's
    environment variable, --world-size, or run.world_size).
    facts: ModelFacts of the model's MLIR, or None before an import.
    model_facts_fixed: the MLIR's batch and dtype are fixed (an mlir source);
    else zero-train sets them through zero-model / zero-import flags.
    """
    plan = Plan()
    plan.world = world
    r = _Reader(cfg, plan)
    data = cfg.data

    # Unknown top-level keys first: one message for a typo, before anything
    # that depends on it.
    known_top = set(_TOP_APPLIED) | set(_ZERO_SECTIONS)
    r.check_keys((), known_top, keys.IGNORED_TOP)
    for name in ("model", "run", "zero_compile", "optimizer", "scheduler",
                 "zero_optimization", "activation_checkpointing", "tensor_parallel"):
        r.section((name,))
    r.check_keys(("run",), _RUN_KEYS)
    r.check_keys(("zero_compile",), _COMPILE_KEYS)

    # --- run: the trainer's own settings (what "auto" takes) ---
    run = ("run",)
    steps = r.integer(run + ("steps",), lo=0, default=MISSING)
    run_lr = r.number(run + ("lr",), lo=0, default=MISSING)
    run_min_lr = r.number(run + ("min_lr",), lo=0, default=MISSING)
    run_warmup = r.integer(run + ("warmup_steps",), lo=0, default=MISSING)
    run_schedule = r.string(run + ("lr_schedule",), choices=("cosine", "constant"),
                            default=MISSING)
    run_wd = r.number(run + ("weight_decay",), lo=0, default=MISSING)
    run_betas = r.get(run + ("betas",))
    if run_betas is not MISSING:
        _check_betas(run + ("betas",), run_betas)
    run_eps = r.number(run + ("eps",), lo=0, default=MISSING)
    run_clip = r.number(run + ("max_grad_norm",), lo=0, default=MISSING)
    run_precision = r.string(run + ("precision",), choices=("fp32", "bf16", "fp16"),
                             default=MISSING)
    run_micro = r.integer(run + ("micro_batch",), lo=1, default=MISSING)
    run_accum = r.integer(run + ("grad_accum",), lo=1, default=MISSING)
    r.integer(run + ("world_size",), lo=1, default=MISSING)  # checked by the caller

    # --- model ---
    _resolve_model(r, plan, facts, model_facts_fixed)

    # --- tensor parallelism: DeepSpeed's AutoTP (tensor_parallel.autotp_size) ---
    tp = _resolve_tensor_parallel(r, plan, world, world_source, facts)
    dp = world // tp
    # The batch rule counts data-parallel ranks (DeepSpeed: the world over the
    # tensor-parallel size).
    dp_note = _world_note(world, world_source) if tp == 1 else \
        "%d (world size %s / tensor_parallel.autotp_size %d)" % (
            dp, _world_note(world, world_source), tp)
    world_word = "world size" if tp == 1 else "data-parallel ranks"

    # --- batch sizes: DeepSpeed's rule (train_batch_size = micro x accum x N) ---
    tbs_p, mb_p, gas_p = ("train_batch_size",), ("train_micro_batch_size_per_gpu",), \
        ("gradient_accumulation_steps",)
    tbs = r.integer(tbs_p, lo=1, auto_ok=True, default=MISSING)
    mb = r.integer(mb_p, lo=1, auto_ok=True, default=MISSING)
    gas = r.integer(gas_p, lo=1, auto_ok=True, default=MISSING)
    fixed_batch = facts.batch if (model_facts_fixed and facts) else None
    mb_src = gas_src = None
    if mb is AUTO or mb is MISSING:
        if run_micro is not MISSING:
            mb_v, mb_src = run_micro, "run.micro_batch"
        else:
            mb_v = None
    else:
        mb_v, mb_src = mb, "set"
    if gas is AUTO or gas is MISSING:
        gas_v, gas_src = (run_accum, "run.grad_accum") if run_accum is not MISSING else (None, None)
    else:
        gas_v, gas_src = gas, "set"
    tbs_v = tbs if _is_num(tbs) else None
    if tbs_v is not None:
        if mb_v is None and gas_v is None:
            gas_v, gas_src = 1, "DeepSpeed's rule with train_batch_size alone"
        if mb_v is None:
            if tbs_v % (gas_v * dp):
                raise ConfigError(tbs_p, "%d is not divisible by gradient_accumulation_steps "
                                  "%d x %s %s" % (tbs_v, gas_v, world_word, dp_note))
            mb_v, mb_src = tbs_v // (gas_v * dp), "train_batch_size / (accumulation x %s)" % world_word
        elif gas_v is None:
            if tbs_v % (mb_v * dp):
                raise ConfigError(tbs_p, "%d is not divisible by train_micro_batch_size_per_gpu "
                                  "%d x %s %s" % (tbs_v, mb_v, world_word, dp_note))
            gas_v, gas_src = tbs_v // (mb_v * dp), "train_batch_size / (micro-batch x %s)" % world_word
    if mb_v is None:
        mb_v, mb_src = (fixed_batch, "the model file's batch") if fixed_batch else \
            (4, "Zero's default")
    if gas_v is None:
        gas_v, gas_src = 1, "Zero's default"
    global_v = mb_v * gas_v * dp
    if tbs_v is not None and tbs_v != global_v:
        raise ConfigError(tbs_p, "%d is not train_micro_batch_size_per_gpu %d x "
                          "gradient_accumulation_steps %d x %s %s = %d" % (
                              tbs_v, mb_v, gas_v, world_word, dp_note, global_v))
    if fixed_batch and mb_v != fixed_batch:
        at = mb_p if mb_src == "set" else (tbs_p if tbs_v is not None else run + ("micro_batch",))
        if plan.model["kind"] == "mlir":
            what, fix = "the model file %s" % plan.model["mlir"], \
                "regenerate it, or use a zero_model source"
        else:
            what, fix = "the imported model %s" % plan.model["import"], \
                "its example inputs fix it; zero-import's --batch applies to Hugging Face models"
        raise ConfigError(at, "%s is compiled for a micro-batch of %d per rank, not %d (%s)" % (
            what, fixed_batch, mb_v, fix))
    plan.micro_batch = mb_v
    _note_value(r, mb_p, mb, mb_v, mb_src, _batch_effect(plan, mb_v))
    _note_value(r, gas_p, gas, gas_v, gas_src, "--grad-accum %d" % gas_v)
    if tbs is not MISSING:
        _note_value(r, tbs_p, tbs, global_v, "micro-batch x accumulation x %s" % world_word,
                    "%d = %d x %d x %d" % (global_v, mb_v, gas_v, dp))
    if plan.model["kind"] == "zero_model":
        plan.model_args += ["--batch", str(mb_v)]
    elif plan.model["kind"] == "import":
        plan.model_args.append("--batch=%d" % mb_v)
    plan.exe_args += ["--grad-accum", str(gas_v)]

    # --- precision ---
    precision = _resolve_precision(r, plan, facts, model_facts_fixed, run_precision)

    # --- gradient clipping ---
    gc_p = ("gradient_clipping",)
    gc = r.number(gc_p, lo=0, auto_ok=True, default=MISSING)
    if gc is AUTO or gc is MISSING:
        gc_v, gc_src = (run_clip, "run.max_grad_norm") if run_clip is not MISSING else \
            (1.0, "Zero's default")
    else:
        gc_v, gc_src = gc, "set"
    plan.compile_args.append("--max-grad-norm=%s" % _num(gc_v))
    _note_value(r, gc_p, gc, gc_v, gc_src, "zero-compile --max-grad-norm=%s%s" % (
        _num(gc_v), " (0: no clipping)" if gc_v == 0 else ""))

    # --- optimizer ---
    lr = _resolve_optimizer(r, plan, run_lr, run_betas, run_eps, run_wd)

    # --- scheduler ---
    _resolve_scheduler(r, plan, lr, steps, run_min_lr, run_warmup, run_schedule)

    # --- ZeRO ---
    _resolve_zero(r, plan, facts, precision)

    # --- activation checkpointing ---
    ac_p = ("activation_checkpointing",)
    policy = r.string(("zero_compile", "activation_checkpointing"), choices=("none", "block"),
                      default=MISSING)
    if r.get(ac_p) is not MISSING:
        # With a tensor axis, DeepSpeed's P_a keys apply (zero-compile's
        # --checkpoint-partition / --checkpoint-offload); else they are ignored.
        pa_keys = ("partition_activations", "cpu_checkpointing") if tp > 1 else ()
        r.check_keys(ac_p, pa_keys, {k: v for k, v in
                                     keys.IGNORED_ACTIVATION_CHECKPOINTING.items()
                                     if k not in pa_keys})
        if policy is MISSING:
            policy = "block"
            plan.notes.append((ac_p, "applied activation_checkpointing -> zero-compile "
                               "--checkpoint=block (recompute each block in the backward)"))
    if policy is not MISSING and policy != "none":
        if facts is not None and facts.has_step:
            raise ConfigError(ac_p if r.get(ac_p) is not MISSING else
                              ("zero_compile", "activation_checkpointing"),
                              "the model file already has its backward (@forward_backward), "
                              "so activation checkpointing cannot be added; use the forward graph")
        plan.compile_args.append("--checkpoint=%s" % policy)
    if tp > 1:
        _resolve_partitioned_activations(r, plan, ac_p, policy)

    # --- Zero's compile settings ---
    _resolve_compile(r, plan)

    # --- data and the rest of the run ---
    _resolve_data_and_run(r, plan, steps)
    _resolve_tokenizer(r, plan, facts)
    if facts is not None and facts.has_optimizer:
        _drop_optimizer_flags(r, plan)
    files = {}

    def order(note):
        pos = cfg._pos(note[0]) or ("~",)
        files.setdefault(pos[0], len(files))
        return (files[pos[0]],) + tuple(pos[1:])
    plan.notes = [text for _, text in sorted(plan.notes, key=order)]
    return plan


def _resolve_tensorboard(r, plan):
    """run.tensorboard (a directory), or DeepSpeed's tensorboard section:
    enabled, output_path, job_name -> the program's --tensorboard
    OUTPUT_PATH/JOB_NAME (DeepSpeed's monitor/tensorboard.py: output_path
    defaults to ~/tensorboard, job_name to "DeepSpeedJobName")."""
    own = r.path_value(("run", "tensorboard"), default=MISSING)
    ds_p = ("tensorboard",)
    ds_dir = MISSING
    if r.get(ds_p) is not MISSING:
        r.check_keys(ds_p, ("enabled", "output_path", "job_name"))
        enabled = r.boolean(ds_p + ("enabled",), default=False)
        out = r.get(ds_p + ("output_path",))
        base = "" if out is MISSING or out == "" else r.path_value(ds_p + ("output_path",))
        job = r.string(ds_p + ("job_name",), default="DeepSpeedJobName")
        if "/" in job or job in (".", ".."):
            raise ConfigError(ds_p + ("job_name",), "%r is not a directory name" % job)
        if not enabled:
            r.ignored(ds_p, "tensorboard.enabled is false")
        else:
            ds_dir = os.path.join(base or os.path.join(os.path.expanduser("~"), "tensorboard"),
                                  job)
            if own is not MISSING:
                raise ConfigError(ds_p + ("enabled",),
                                  "both tensorboard.enabled and run.tensorboard name the "
                                  "event directory; keep one")
            r.applied(ds_p, "enabled", "the program's --tensorboard %s" % ds_dir)
    target = own if own is not MISSING else ds_dir
    if target is not MISSING:
        plan.exe_args += ["--tensorboard", target]


def _drop_optimizer_flags(r, plan):
    """A model file past train-optimizer: its precision, clipping and AdamW
    settings are in it (zero-compile refuses to set them again)."""
    fixed = ("--precision=", "--max-grad-norm=", "--beta1=", "--beta2=", "--eps=",
             "--weight-decay=", "--decay-min-rank=")
    plan.compile_args = [a for a in plan.compile_args if not a.startswith(fixed)]
    why = "the model file already has its optimizer step (@optimizer_step), which fixes it"
    kept = []
    for path, text in plan.notes:
        if path and path[0] in ("gradient_clipping", "bf16", "bfloat16") or \
                path[:2] == ("optimizer", "params") and path[-1] in ("betas", "eps", "weight_decay"):
            kept.append((path, "ignored %s (%s): %s" % (dotted(path), r.cfg.position(path), why)))
        else:
            kept.append((path, text))
    plan.notes = kept


def _batch_effect(plan, mb):
    kind = plan.model["kind"]
    if kind == "zero_model":
        return "zero-model --batch %d" % mb
    if kind == "import":
        return "zero-import --batch=%d" % mb
    return "the model file's micro-batch (%d)" % mb


def _resolve_model(r, plan, facts, fixed):
    m = ("model",)
    sec = r.section(m)
    sources = [k for k in ("zero_model", "mlir", "import") if k in sec]
    if len(sources) != 1:
        raise ConfigError(m if sec else (), "the model section names exactly one of "
                          "zero_model (a zero-model name), mlir (a file) or import (a "
                          "zero-import source); found %s" % (
                              ", ".join(sources) if sources else "none"))
    kind = sources[0]
    plan.model["kind"] = kind
    name = r.string(m + ("name",), default=MISSING)
    if kind == "zero_model":
        r.check_keys(m, ("zero_model", "name") + tuple(ZERO_MODEL_FLAGS))
        family = r.string(m + ("zero_model",), choices=ZERO_MODEL_NAMES)
        plan.model["zero_model"] = family
        plan.model_args.append(family)
        for k, typ in ZERO_MODEL_FLAGS.items():
            v = r.get(m + (k,))
            if v is MISSING:
                continue
            p = m + (k,)
            flag = "--" + k.replace("_", "-")
            if typ is int:
                plan.model_args += [flag, str(r.integer(p, lo=0))]
            elif typ is float:
                plan.model_args += [flag, repr(r.number(p))]
            elif typ is bool:
                plan.model_args.append("%s=%s" % (flag, "true" if r.boolean(p) else "false"))
            elif typ is list:
                if not (isinstance(v, list) and v and all(isinstance(x, int) and not
                                                          isinstance(x, bool) and x > 0 for x in v)):
                    raise ConfigError(p, "expected a list of positive integers, got %s" % _fmt(v))
                plan.model_args += [flag, ",".join(str(x) for x in v)]
            else:
                if k == "dtype":
                    r.string(p, choices=("f32", "bf16"))
                plan.model_args += [flag, r.string(p)]
        plan.model_name = name if name is not MISSING else family
    elif kind == "mlir":
        r.check_keys(m, ("mlir", "name"))
        path = r.path_value(m + ("mlir",))
        if not os.path.isfile(path):
            raise ConfigError(m + ("mlir",), "no such file: %s" % path)
        plan.model["mlir"] = path
        plan.model_name = name if name is not MISSING else \
            os.path.splitext(os.path.basename(path))[0]
    else:
        r.check_keys(m, ("import", "import_args", "name"))
        src = r.string(m + ("import",))
        if src not in ("gpt2", "llama", "qwen3", "mistral"):
            src = r.path_value(m + ("import",))
            if not os.path.exists(src):
                raise ConfigError(m + ("import",), "no such file or directory: %s" % src)
        plan.model["import"] = src
        args = r.get(m + ("import_args",))
        if args is not MISSING:
            if not (isinstance(args, list) and all(isinstance(a, str) for a in args)):
                raise ConfigError(m + ("import_args",), "expected a list of strings "
                                  "(zero-import arguments), got %s" % _fmt(args))
            for i, a in enumerate(args):
                if a.split("=")[0] in ("--batch", "--dtype", "-o", "--weights"):
                    raise ConfigError(m + ("import_args", i), "%s is set by zero-train (the "
                                      "micro-batch is train_micro_batch_size_per_gpu, the dtype "
                                      "bf16.enabled)" % a.split("=")[0])
            plan.model_args += list(args)
        plan.model_name = name if name is not MISSING else \
            os.path.splitext(os.path.basename(src.rstrip("/")))[0]


def _resolve_fp16(r, plan, facts, fixed, fp_p, fp, run_precision):
    """fp16.enabled: fp16-mixed (f16 parameters and activations, f32 master
    weights and moments) with the driver's dynamic loss scaling, whose rule
    is torch.amp.GradScaler's (runtime/README.md, "fp16-mixed")."""
    r.check_keys(fp_p, ("enabled", "loss_scale", "initial_scale_power",
                        "loss_scale_window"), keys.IGNORED_FP16_ON)
    at = fp_p + ("enabled",) if fp is not MISSING else ("run", "precision")
    if facts is not None and fixed and facts.dtype != "f16":
        raise ConfigError(at, "the model file's parameters are %s; fp16 mixed precision "
                          "needs an f16 model (zero-model --dtype f16)" % facts.dtype)
    kind = plan.model["kind"]
    if kind == "zero_model":
        if "--dtype" in plan.model_args:
            i = plan.model_args.index("--dtype")
            if plan.model_args[i + 1] != "f16":
                raise ConfigError(("model", "dtype"), "fp16.enabled needs model.dtype "
                                  "\"f16\" (or no model.dtype)")
        else:
            plan.model_args += ["--dtype", "f16"]
    elif kind == "import":
        raise ConfigError(at, "fp16 mixed precision of an imported model is not supported "
                          "(zero-import writes f32 or bf16); use bf16.enabled = true")
    static = r.number(fp_p + ("loss_scale",), lo=0, default=0)
    if static != 0:
        raise ConfigError(fp_p + ("loss_scale",), "a static loss scale is not supported: "
                          "Zero scales dynamically (loss_scale 0, DeepSpeed's default)")
    if r.get(fp_p + ("loss_scale",)) is not MISSING:
        r.applied(fp_p + ("loss_scale",), "0", "dynamic loss scaling")
    power = r.integer(fp_p + ("initial_scale_power",), lo=-24, hi=120, default=MISSING)
    if power is not MISSING:
        plan.exe_args += ["--init-loss-scale", _num(2.0 ** power)]
        r.applied(fp_p + ("initial_scale_power",), str(power),
                  "--init-loss-scale %s (2^%d)" % (_num(2.0 ** power), power))
    window = r.integer(fp_p + ("loss_scale_window",), lo=1, default=MISSING)
    if window is not MISSING:
        plan.exe_args += ["--loss-scale-growth-interval", str(window)]
        r.applied(fp_p + ("loss_scale_window",), str(window),
                  "--loss-scale-growth-interval %d" % window)
    plan.compile_args.append("--precision=fp16-mixed")
    src = "run.precision" if run_precision is not MISSING else "set"
    _note_value(r, fp_p + ("enabled",), fp, True, src, "zero-compile --precision=fp16-mixed")


def _resolve_precision(r, plan, facts, fixed, run_precision):
    bf_key = "bf16" if "bf16" in r.cfg.data or "bfloat16" not in r.cfg.data else "bfloat16"
    if "bf16" in r.cfg.data and "bfloat16" in r.cfg.data:
        raise ConfigError(("bfloat16",), "bf16 and bfloat16 are the same section; give one")
    bf_p, fp_p = (bf_key,), ("fp16",)
    r.section(bf_p)
    r.section(fp_p)
    r.check_keys(bf_p, ("enabled",), keys.IGNORED_BF16)
    bf = r.boolean(bf_p + ("enabled",), auto_ok=True, default=MISSING)
    fp = r.boolean(fp_p + ("enabled",), auto_ok=True, default=MISSING)
    bf_v = run_precision == "bf16" if bf in (AUTO, MISSING) else bf
    fp_v = run_precision == "fp16" if fp in (AUTO, MISSING) else fp
    if fp_v and bf_v:
        raise ConfigError(fp_p + ("enabled",) if fp is not MISSING else ("run", "precision"),
                          "fp16 and bf16 are both enabled; enable one")
    if fp_v:
        _resolve_fp16(r, plan, facts, fixed, fp_p, fp, run_precision)
        return
    # fp16's other keys only mean something with fp16 on.
    r.check_keys(fp_p, ("enabled",), keys.IGNORED_FP16)
    if bf_v and facts is not None and fixed and facts.dtype != "bf16":
        raise ConfigError(bf_p + ("enabled",) if bf is not MISSING else ("run", "precision"),
                          "the model file's parameters are %s; bf16 mixed precision needs a "
                          "bf16 model (zero-model --dtype bf16)" % facts.dtype)
    if not bf_v and facts is not None and fixed and facts.dtype == "bf16":
        raise ConfigError(bf_p + ("enabled",) if bf is not MISSING else (),
                          "the model file's parameters are bf16: set bf16.enabled = true")
    kind = plan.model["kind"]
    if bf_v:
        if kind == "zero_model":
            if "--dtype" in plan.model_args:
                i = plan.model_args.index("--dtype")
                if plan.model_args[i + 1] != "bf16":
                    raise ConfigError(("model", "dtype"), "bf16.enabled needs model.dtype "
                                      "\"bf16\" (or no model.dtype)")
            else:
                plan.model_args += ["--dtype", "bf16"]
        elif kind == "import":
            plan.model_args.append("--dtype=bf16")
    elif kind == "zero_model" and "--dtype" in plan.model_args and \
            plan.model_args[plan.model_args.index("--dtype") + 1] == "bf16":
        raise ConfigError(("model", "dtype"), "a bf16 model needs bf16.enabled = true "
                          "(mixed precision: f32 master weights)")
    precision = "bf16-mixed" if bf_v else "fp32"
    plan.compile_args.append("--precision=%s" % precision)
    src = "run.precision" if run_precision is not MISSING else "Zero's default"
    _note_value(r, bf_p + ("enabled",), bf, bf_v, src, "zero-compile --precision=%s" % precision)
    if fp is not MISSING:
        _note_value(r, fp_p + ("enabled",), fp, fp_v, src, "off")
    return precision


def _resolve_optimizer(r, plan, run_lr, run_betas, run_eps, run_wd):
    o = ("optimizer",)
    sec = r.section(o)
    lr_v, lr_src = (run_lr, "run.lr") if run_lr is not MISSING else (1e-3, "Zero's default")
    betas_v, betas_src = (list(run_betas), "run.betas") if run_betas is not MISSING else \
        ([0.9, 0.999], "Zero's default")
    eps_v, eps_src = (run_eps, "run.eps") if run_eps is not MISSING else (1e-8, "Zero's default")
    wd_v, wd_src = (run_wd, "run.weight_decay") if run_wd is not MISSING else \
        (0.01, "Zero's default")
    if sec:
        r.check_keys(o, ("type", "params"))
        typ = r.string(o + ("type",))
        if typ.lower() not in ("adamw", "adam"):
            raise ConfigError(o + ("type",), "%s is not supported: Zero's optimizer is AdamW "
                              "(type \"AdamW\", or \"Adam\" with adam_w_mode true)" % _fmt(typ))
        p = o + ("params",)
        r.section(p)
        r.check_keys(p, ("lr", "betas", "eps", "weight_decay", "adam_w_mode", "amsgrad",
                         "bias_correction"), keys.IGNORED_OPTIMIZER_PARAMS)
        mode = r.boolean(p + ("adam_w_mode",), default=True)
        if not mode or (typ == "AdamW" and r.get(p + ("adam_w_mode",)) is False):
            raise ConfigError(p + ("adam_w_mode",), "false selects Adam with L2 "
                              "regularization, which Zero does not implement (decoupled "
                              "weight decay only)")
        if r.get(p + ("adam_w_mode",)) is not MISSING:
            r.applied(p + ("adam_w_mode",), "true", "AdamW (decoupled weight decay)")
        if r.boolean(p + ("amsgrad",), default=False):
            raise ConfigError(p + ("amsgrad",), "AMSGrad is not implemented")
        if not r.boolean(p + ("bias_correction",), default=True):
            raise ConfigError(p + ("bias_correction",), "Zero's AdamW always corrects the "
                              "moments' bias")
        lr = r.number(p + ("lr",), lo=0, auto_ok=True, default=MISSING)
        if _is_num(lr):
            lr_v, lr_src = lr, "set"
        betas = r.get(p + ("betas",))
        if betas is not MISSING and betas != AUTO:
            _check_betas(p + ("betas",), betas)
            betas_v, betas_src = list(betas), "set"
        eps = r.number(p + ("eps",), lo=0, auto_ok=True, default=MISSING)
        if _is_num(eps):
            eps_v, eps_src = eps, "set"
        wd = r.number(p + ("weight_decay",), lo=0, auto_ok=True, default=MISSING)
        if _is_num(wd):
            wd_v, wd_src = wd, "set"
        r.applied(o + ("type",), _fmt(typ), "AdamW (train-optimizer)")
        plan.lr_note = (p + ("lr",), lr, lr_src)
        _note_value(r, p + ("betas",), AUTO if betas == AUTO else betas, betas_v, betas_src,
                    "zero-compile --beta1=%s --beta2=%s" % (_num(betas_v[0]), _num(betas_v[1])))
        _note_value(r, p + ("eps",), eps, eps_v, eps_src, "zero-compile --eps=%s" % _num(eps_v))
        _note_value(r, p + ("weight_decay",), wd, wd_v, wd_src,
                    "zero-compile --weight-decay=%s" % _num(wd_v))
    else:
        plan.lr_note = None
    plan.lr_src = lr_src
    plan.compile_args += ["--beta1=%s" % _num(betas_v[0]), "--beta2=%s" % _num(betas_v[1]),
                          "--eps=%s" % _num(eps_v), "--weight-decay=%s" % _num(wd_v)]
    return lr_v


def _resolve_compile(r, plan):
    c = ("zero_compile",)
    plan.target = r.string(c + ("target",), choices=("cpu", "cuda"), default="cpu")
    plan.compile_args.append("--target=%s" % plan.target)
    cache = r.path_value(c + ("cache_dir",), default=MISSING)
    plan.cache_dir = None if cache is MISSING else cache
    g = r.string(c + ("grouping",), choices=("block", "param"), default=MISSING)
    if g is not MISSING:
        plan.compile_args.append("--grouping=%s" % g)
    dm = r.integer(c + ("device_memory",), lo=1, default=MISSING)
    if dm is not MISSING:
        if plan.stage != "auto":
            raise ConfigError(c + ("device_memory",), "only zero_optimization.stage \"auto\" "
                              "uses it (the stage here is %s)" % plan.stage)
        plan.compile_args.append("--device-memory=%d" % dm)
    for k in ("fuse_epilogues", "fuse_layer_norm", "fuse_cross_entropy", "buffer_assign"):
        v = r.boolean(c + (k,), default=MISSING)
        if v is not MISSING:
            plan.compile_args.append("--%s=%s" % (k.replace("_", "-"), "true" if v else "false"))
    d = r.integer(c + ("decay_min_rank",), lo=0, default=MISSING)
    if d is not MISSING:
        plan.compile_args.append("--decay-min-rank=%d" % d)
    cxx = r.string(c + ("cxx",), default=MISSING)
    plan.cxx = None if cxx is MISSING else cxx
    plan.compile_args.append("--model-name=%s" % plan.model_name)


def _data_files(r, path):
    """The value of data / data.path / data.val_path as the program's --data
    value: a string (a path, a glob, or a comma-separated list of them) or a
    list of such strings, each entry relative to the config's directory.
    Every path must exist and every glob match a file (the program expands
    the globs itself, sorted, docs/data.md)."""
    v = r.get(path)
    if isinstance(v, list):
        if not v:
            raise ConfigError(path, "expected a path or a non-empty list of paths, got []")
        items = []
        for i, item in enumerate(v):
            if not isinstance(item, str) or not item:
                raise ConfigError(path + (i,), "expected a non-empty string, got %s %s" % (
                    _type_name(item), _fmt(item)))
            if "," in item:
                raise ConfigError(path + (i,), "a path in a list cannot contain ',': %s" % _fmt(item))
            items.append(item)
    else:
        items = r.string(path).split(",")
    entries = []
    for item in items:
        if not item:
            raise ConfigError(path, "empty entry in %s" % _fmt(v))
        full = item if os.path.isabs(item) else os.path.normpath(os.path.join(r.cfg.dir, item))
        if glob.has_magic(full):
            if not glob.glob(full):
                raise ConfigError(path, "no file matches %s" % full)
        elif not os.path.exists(full):  # a file, or (array models) a directory of .npy
            raise ConfigError(path, "no such file: %s" % full)
        entries.append(full)
    return ",".join(entries)


def _resolve_data_and_run(r, plan, steps):
    d = ("data",)
    v = r.get(d)
    if v is MISSING:
        raise ConfigError((), "the config has no data (\"data\": {\"path\": ...})")
    if isinstance(v, (str, list)):
        plan.exe_args += ["--data", _data_files(r, d)]
    else:
        r.section(d)
        r.check_keys(d, ("path", "val_path", "val_fraction", "tokenizer"))
        if "path" not in v:
            raise ConfigError(d, "data needs a path (text, or llm.c .bin tokens)")
        plan.exe_args += ["--data", _data_files(r, d + ("path",))]
        vf = r.number(d + ("val_fraction",), lo=0, hi=1, open_hi=True, default=MISSING)
        if "val_path" in v:
            if vf is not MISSING:
                raise ConfigError(d + ("val_fraction",), "splits data.path; it cannot be "
                                  "combined with data.val_path (the validation split is "
                                  "then all of data.val_path)")
            plan.exe_args += ["--val-data", _data_files(r, d + ("val_path",))]
        if vf is not MISSING:
            plan.exe_args += ["--val-fraction", _num(vf)]
    run = ("run",)
    if steps is MISSING and plan.total_steps:
        steps = plan.total_steps
    if steps is not MISSING:
        plan.exe_args += ["--steps", str(steps)]
    for key, flag, kind in (("seed", "--seed", "int0"), ("val_every", "--val-every", "int0"),
                            ("val_batches", "--val-batches", "int1"),
                            ("sample_tokens", "--sample-tokens", "int0"),
                            ("temperature", "--temperature", "num0"),
                            ("threads", "--threads", "int1"),
                            ("checkpoint_every", "--checkpoint-every", "int0"),
                            ("keep_checkpoints", "--keep-checkpoints", "int1")):
        p = run + (key,)
        if kind.startswith("int"):
            val = r.integer(p, lo=int(kind[3:]), default=MISSING)
            if val is not MISSING:
                plan.exe_args += [flag, str(val)]
                if key == "sample_tokens":
                    plan.sample_tokens = val
        else:
            val = r.number(p, lo=0, default=MISSING)
            if val is not MISSING:
                plan.exe_args += [flag, _num(val)]
    for key, flag in (("metrics", "--metrics"), ("checkpoint_dir", "--checkpoint-dir"),
                      ("resume", "--resume"), ("export", "--export"), ("import", "--import"),
                      ("sample_out", "--sample-out")):
        val = r.path_value(run + (key,), default=MISSING)
        if val is not MISSING:
            plan.exe_args += [flag, val]
            if key == "sample_out":
                plan.sample_out = val
            if key == "import":
                plan.uses_run_import = True
            if key == "resume":
                plan.uses_run_import = True
    peak = r.number(run + ("peak_tflops",), lo=0, default=MISSING)
    if peak is not MISSING:
        if peak <= 0:
            raise ConfigError(run + ("peak_tflops",), "%s must be > 0" % _fmt(r.get(run + ("peak_tflops",))))
        plan.exe_args += ["--peak-tflops", _num(peak)]
    _resolve_tensorboard(r, plan)
    for key, flag in (("quiet", "--quiet"), ("overwrite", "--overwrite")):
        if r.boolean(run + (key,), default=False):
            plan.exe_args.append(flag)


def tokenizer_size(path):
    """Ids 0..N-1 of a Hugging Face tokenizers file (tokenizer.json): N from
    its model's vocab and its added tokens; raises ValueError when the file
    is not one (zero-train reads it with the standard library only)."""
    import json
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, UnicodeDecodeError) as e:
        raise ValueError("cannot read it: %s" % (getattr(e, "strerror", None) or e))
    except json.JSONDecodeError as e:
        raise ValueError("not JSON (%s)" % e)
    vocab = doc.get("model", {}).get("vocab") if isinstance(doc, dict) and \
        isinstance(doc.get("model"), dict) else None
    if not isinstance(vocab, dict) or not vocab:
        raise ValueError("no model.vocab (not a Hugging Face tokenizers tokenizer.json)")
    ids = [i for i in vocab.values() if isinstance(i, int)]
    ids += [t["id"] for t in doc.get("added_tokens") or [] if isinstance(t, dict)
            and isinstance(t.get("id"), int)]
    return max(ids) + 1


def _resolve_tokenizer(r, plan, facts):
    """data.tokenizer: the program writes its sample's ids (--sample-out) and
    zero-train decodes them with this tokenizer after the run."""
    v = r.get(("data",))
    if not isinstance(v, dict) or "tokenizer" not in v:
        return
    p = ("data", "tokenizer")
    path = r.path_value(p)
    if os.path.isdir(path) and os.path.isfile(os.path.join(path, "tokenizer.json")):
        path = os.path.join(path, "tokenizer.json")
    if not os.path.isfile(path):
        raise ConfigError(p, "no such file: %s" % path)
    paths = v.get("path", "")
    paths = paths.split(",") if isinstance(paths, str) else paths
    if not all(isinstance(x, str) and x.endswith(".bin") for x in paths):
        raise ConfigError(p, "data.path is a text file, which the program reads as bytes; "
                          "a tokenizer goes with .bin token files (zero-data shard makes "
                          "them)")
    try:
        n = tokenizer_size(path)
    except ValueError as e:
        raise ConfigError(p, "%s is not a tokenizer file: %s" % (path, e)) from None
    vocab = facts.vocab if facts is not None else None
    if vocab is not None and n > vocab:
        raise ConfigError(p, "the tokenizer has %d tokens, but the model's vocabulary is %d "
                          "(model.vocab): its ids would not fit" % (n, vocab))
    plan.tokenizer = path
    if plan.sample_tokens == 0:
        plan.notes.append((p, "data.tokenizer: run.sample_tokens is 0, so there is no "
                              "sample to decode"))
    elif vocab is not None and n < vocab:
        plan.notes.append((p, "data.tokenizer: %s has %d tokens, the model %d: a sampled "
                              "id >= %d cannot be decoded" % (path, n, vocab, n)))
