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

import math
import os

from . import keys
from .config import ConfigError, dotted
from .model import ZERO_MODEL_FLAGS, ZERO_MODEL_NAMES

__all__ = ["Plan", "resolve"]

MISSING = object()
AUTO = "auto"


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


def _is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _type_name(v):
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, int):
        return "an integer"
    if isinstance(v, float):
        return "a number"
    if isinstance(v, str):
        return "a string"
    if isinstance(v, list):
        return "a list"
    if isinstance(v, dict):
        return "an object"
    return "null"


def _fmt(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, str):
        return '"%s"' % v
    if isinstance(v, list):
        return "[" + ", ".join(_fmt(x) for x in v) + "]"
    return str(v)


def _num(v):
    """A float for a flag: shortest text that reads back the same."""
    return repr(float(v)) if not float(v).is_integer() or abs(v) >= 1e16 else repr(float(v))


class _Reader:
    def __init__(self, cfg, plan):
        self.cfg = cfg
        self.plan = plan

    def get(self, path):
        node = self.cfg.data
        for p in path:
            if not isinstance(node, dict) or p not in node:
                return MISSING
            node = node[p]
        return node

    def section(self, path):
        v = self.get(path)
        if v is MISSING:
            return {}
        if not isinstance(v, dict):
            raise ConfigError(path, "expected an object ({...}), got %s" % _type_name(v))
        return v

    def check_keys(self, path, known, ignored=None):
        """Every key of the object at `path` is in `known` or `ignored`."""
        sec = self.section(path)
        ignored = ignored or {}
        for k in sec:
            if k in known:
                continue
            if k in ignored:
                self.ignored(path + (k,), ignored[k])
                continue
            import difflib
            close = difflib.get_close_matches(k, list(known) + list(ignored), n=1)
            where = "in %s" % dotted(path) if path else "at the top level"
            raise ConfigError(path + (k,), "unknown key %s%s" % (
                where, " (did you mean '%s'?)" % close[0] if close else
                " (not a DeepSpeed key zero-train knows, nor one of Zero's)"))

    def ignored(self, path, reason):
        self.plan.notes.append((path, "ignored %s (%s): %s" % (
            dotted(path), self.cfg.position(path), reason)))

    def applied(self, path, shown, effect):
        self.plan.notes.append((path, "applied %s = %s -> %s" % (dotted(path), shown, effect)))

    # Typed reads. `auto_ok`: the value may be "auto" (returned as AUTO).
    def integer(self, path, lo=None, hi=None, auto_ok=False, default=MISSING):
        v = self.get(path)
        if v is MISSING:
            return default
        if auto_ok and v == AUTO:
            return AUTO
        if _is_num(v) and float(v).is_integer() and abs(v) < 2**62:
            v = int(v)
        else:
            raise ConfigError(path, "expected an integer%s, got %s %s" % (
                ' or "auto"' if auto_ok else "", _type_name(v), _fmt(v)))
        if lo is not None and v < lo:
            raise ConfigError(path, "%d is below the least allowed value %d" % (v, lo))
        if hi is not None and v > hi:
            raise ConfigError(path, "%d is above the largest allowed value %d" % (v, hi))
        return v

    def number(self, path, lo=None, hi=None, auto_ok=False, default=MISSING, open_hi=False):
        v = self.get(path)
        if v is MISSING:
            return default
        if auto_ok and v == AUTO:
            return AUTO
        if not _is_num(v) or not math.isfinite(v):
            raise ConfigError(path, "expected a number%s, got %s %s" % (
                ' or "auto"' if auto_ok else "", _type_name(v), _fmt(v)))
        if lo is not None and v < lo:
            raise ConfigError(path, "%s is below the least allowed value %s" % (_fmt(v), _fmt(lo)))
        if hi is not None and (v >= hi if open_hi else v > hi):
            raise ConfigError(path, "%s is %s %s" % (
                _fmt(v), "not below" if open_hi else "above", _fmt(hi)))
        return float(v)

    def boolean(self, path, auto_ok=False, default=MISSING):
        v = self.get(path)
        if v is MISSING:
            return default
        if auto_ok and v == AUTO:
            return AUTO
        if not isinstance(v, bool):
            raise ConfigError(path, "expected true or false%s, got %s %s" % (
                ' or "auto"' if auto_ok else "", _type_name(v), _fmt(v)))
        return v

    def string(self, path, choices=None, default=MISSING, auto_ok=False):
        v = self.get(path)
        if v is MISSING:
            return default
        if auto_ok and v == AUTO:
            return AUTO
        if not isinstance(v, str) or not v:
            raise ConfigError(path, "expected a non-empty string, got %s %s" % (
                _type_name(v), _fmt(v)))
        if choices and v not in choices:
            raise ConfigError(path, "%s is not one of %s" % (
                _fmt(v), ", ".join(_fmt(c) for c in choices)))
        return v

    def path_value(self, path, default=MISSING):
        v = self.string(path, default=default)
        if v is MISSING or v is default:
            return v
        return v if os.path.isabs(v) else os.path.normpath(os.path.join(self.cfg.dir, v))


_TOP_APPLIED = ("train_batch_size", "train_micro_batch_size_per_gpu",
                "gradient_accumulation_steps", "gradient_clipping", "bf16", "bfloat16",
                "fp16", "optimizer", "scheduler", "zero_optimization",
                "activation_checkpointing")
_ZERO_SECTIONS = ("model", "data", "run", "zero_compile")

_RUN_KEYS = ("steps", "seed", "lr", "min_lr", "warmup_steps", "lr_schedule",
             "weight_decay", "betas", "eps", "max_grad_norm", "precision",
             "micro_batch", "grad_accum", "val_every", "val_batches", "metrics",
             "sample_tokens", "temperature", "threads", "checkpoint_dir",
             "checkpoint_every", "resume", "overwrite", "export", "import", "quiet",
             "world_size")
_COMPILE_KEYS = ("target", "cache_dir", "grouping", "device_memory", "prefetch_distance",
                 "fuse_epilogues", "fuse_layer_norm", "fuse_cross_entropy",
                 "buffer_assign", "decay_min_rank", "cxx", "activation_checkpointing")
_ZERO_OPT_APPLIED = ("stage", "reduce_bucket_size", "allgather_bucket_size", "overlap_comm",
                     "stage3_prefetch_bucket_size", "stage3_max_live_parameters",
                     "stage3_param_persistence_threshold")
_SCHEDULERS = {
    "WarmupLR": ("warmup_min_lr", "warmup_max_lr", "warmup_num_steps", "warmup_type",
                 "last_batch_iteration"),
    "WarmupDecayLR": ("total_num_steps", "warmup_min_lr", "warmup_max_lr",
                      "warmup_num_steps", "warmup_type", "last_batch_iteration"),
    "WarmupCosineLR": ("total_num_steps", "warmup_min_ratio", "warmup_num_steps",
                       "cos_min_ratio", "warmup_type", "last_batch_iteration"),
}


def _world_note(world, source):
    return "%d (%s)" % (world, source)


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
                 "zero_optimization", "activation_checkpointing"):
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
            if tbs_v % (gas_v * world):
                raise ConfigError(tbs_p, "%d is not divisible by gradient_accumulation_steps "
                                  "%d x world size %s" % (tbs_v, gas_v, _world_note(world, world_source)))
            mb_v, mb_src = tbs_v // (gas_v * world), "train_batch_size / (accumulation x world size)"
        elif gas_v is None:
            if tbs_v % (mb_v * world):
                raise ConfigError(tbs_p, "%d is not divisible by train_micro_batch_size_per_gpu "
                                  "%d x world size %s" % (tbs_v, mb_v, _world_note(world, world_source)))
            gas_v, gas_src = tbs_v // (mb_v * world), "train_batch_size / (micro-batch x world size)"
    if mb_v is None:
        mb_v, mb_src = (fixed_batch, "the model file's batch") if fixed_batch else \
            (4, "Zero's default")
    if gas_v is None:
        gas_v, gas_src = 1, "Zero's default"
    global_v = mb_v * gas_v * world
    if tbs_v is not None and tbs_v != global_v:
        raise ConfigError(tbs_p, "%d is not train_micro_batch_size_per_gpu %d x "
                          "gradient_accumulation_steps %d x world size %s = %d" % (
                              tbs_v, mb_v, gas_v, _world_note(world, world_source), global_v))
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
        _note_value(r, tbs_p, tbs, global_v, "micro-batch x accumulation x world size",
                    "%d = %d x %d x %d" % (global_v, mb_v, gas_v, world))
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
        r.check_keys(ac_p, (), keys.IGNORED_ACTIVATION_CHECKPOINTING)
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

    # --- Zero's compile settings ---
    _resolve_compile(r, plan)

    # --- data and the rest of the run ---
    _resolve_data_and_run(r, plan, steps)
    if facts is not None and facts.has_optimizer:
        _drop_optimizer_flags(r, plan)
    files = {}

    def order(note):
        pos = cfg._pos(note[0]) or ("~",)
        files.setdefault(pos[0], len(files))
        return (files[pos[0]],) + tuple(pos[1:])
    plan.notes = [text for _, text in sorted(plan.notes, key=order)]
    return plan


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


def _check_betas(path, v):
    if not (isinstance(v, list) and len(v) == 2 and all(_is_num(b) for b in v)):
        raise ConfigError(path, "expected two numbers [beta1, beta2], got %s %s" % (
            _type_name(v), _fmt(v)))
    for b in v:
        if not 0 <= b < 1:
            raise ConfigError(path, "%s is not in [0, 1)" % _fmt(b))


def _note_value(r, path, given, value, source, effect):
    """The applied line of a key that was given (as a value or "auto")."""
    if given is MISSING:
        return
    if given is AUTO:
        r.plan.notes.append((path, "auto    %s = \"auto\" -> %s (%s) -> %s" % (
            dotted(path), _fmt(value), source, effect)))
    else:
        r.applied(path, _fmt(value), effect)


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
    if fp_v:
        at = fp_p + ("enabled",) if fp is not MISSING else ("run", "precision")
        raise ConfigError(at, "fp16 mixed precision has no runtime kernels yet "
                          "(zero-compile --precision=fp16-mixed stops at --emit=mlir); "
                          "use bf16.enabled = true")
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


def _resolve_scheduler(r, plan, lr, steps, run_min_lr, run_warmup, run_schedule):
    s = ("scheduler",)
    sec = r.section(s)
    lr_note = plan.lr_note
    warm_v = run_warmup if run_warmup is not MISSING else 0
    warm_src = "run.warmup_steps" if run_warmup is not MISSING else "Zero's default"
    steps_v = steps if steps is not MISSING else None
    if not sec:
        kind = run_schedule if run_schedule is not MISSING else "cosine"
        plan.exe_args += ["--lr", _num(lr), "--lr-schedule", kind]
        if kind == "cosine":
            plan.exe_args += ["--warmup", str(warm_v)]
            if run_min_lr is not MISSING:
                plan.exe_args += ["--min-lr", _num(run_min_lr)]
        if lr_note:
            _note_value(r, lr_note[0], lr_note[1], lr, lr_note[2], "--lr %s" % _num(lr))
        plan.total_steps = None
        return
    if run_schedule is not MISSING:
        raise ConfigError(("run", "lr_schedule"), "the config has a scheduler section, "
                          "which sets the schedule; drop run.lr_schedule")
    r.check_keys(s, ("type", "params"))
    typ = r.string(s + ("type",))
    if typ not in _SCHEDULERS:
        raise ConfigError(s + ("type",), "%s is not supported (Zero has %s)" % (
            _fmt(typ), ", ".join(_SCHEDULERS)))
    p = s + ("params",)
    r.section(p)
    r.check_keys(p, _SCHEDULERS[typ])
    r.applied(s + ("type",), _fmt(typ), "--lr-schedule %s" % {
        "WarmupLR": "warmup", "WarmupDecayLR": "warmup-decay",
        "WarmupCosineLR": "warmup-cosine"}[typ])
    plan.exe_args += ["--lr-schedule", {"WarmupLR": "warmup", "WarmupDecayLR": "warmup-decay",
                                        "WarmupCosineLR": "warmup-cosine"}[typ]]
    last = r.integer(p + ("last_batch_iteration",), default=MISSING)
    if last is not MISSING and last != -1:
        raise ConfigError(p + ("last_batch_iteration",), "resuming a schedule is run.resume "
                          "(a checkpoint continues it); only -1 is accepted")
    if last is not MISSING:
        r.ignored(p + ("last_batch_iteration",), "-1 is the start, as always")
    wn = r.integer(p + ("warmup_num_steps",), lo=0, auto_ok=True, default=MISSING)
    wn_v, wn_src = (wn, "set") if _is_num(wn) else (
        (warm_v, warm_src) if wn is AUTO else (1000, "DeepSpeed's default"))
    wt = r.string(p + ("warmup_type",), choices=("log", "linear"), default=MISSING)
    wt_v = wt if wt is not MISSING else "log"
    if typ in ("WarmupLR", "WarmupDecayLR"):
        wmin = r.number(p + ("warmup_min_lr",), lo=0, auto_ok=True, default=MISSING)
        wmin_v, wmin_src = (wmin, "set") if _is_num(wmin) else (0.0, "DeepSpeed's default" if
                                                                 wmin is MISSING else "0, as the HF Trainer")
        wmax = r.number(p + ("warmup_max_lr",), lo=0, auto_ok=True, default=MISSING)
        if _is_num(wmax):
            wmax_v, wmax_src = wmax, "set"
        elif wmax is AUTO:
            wmax_v, wmax_src = lr, "the optimizer's lr"
        else:
            wmax_v, wmax_src = 1e-3, "DeepSpeed's default"
        if wmin_v > wmax_v:
            raise ConfigError(p + ("warmup_min_lr",), "%s is above warmup_max_lr %s" % (
                _fmt(wmin_v), _fmt(wmax_v)))
        if lr_note and lr_note[1] is not MISSING:
            if _is_num(lr_note[1]) and lr_note[1] != wmax_v:
                r.ignored(lr_note[0], "the scheduler's warmup_max_lr (%s) is the peak learning "
                          "rate, as in DeepSpeed" % _fmt(wmax_v))
            else:
                _note_value(r, lr_note[0], lr_note[1], wmax_v, lr_note[2] if
                            lr_note[1] is AUTO else "set", "the peak, = warmup_max_lr")
        _note_value(r, p + ("warmup_min_lr",), wmin, wmin_v, wmin_src,
                    "--warmup-min-lr %s" % _num(wmin_v))
        _note_value(r, p + ("warmup_max_lr",), wmax, wmax_v, wmax_src, "--lr %s" % _num(wmax_v))
        plan.exe_args += ["--lr", _num(wmax_v), "--warmup-min-lr", _num(wmin_v)]
    else:
        if lr_note:
            _note_value(r, lr_note[0], lr_note[1], lr, lr_note[2], "--lr %s" % _num(lr))
        wmr = r.number(p + ("warmup_min_ratio",), lo=0, hi=1, auto_ok=True, default=MISSING)
        wmr_v, wmr_src = (wmr, "set") if _is_num(wmr) else (0.0, "DeepSpeed's default")
        cmr = r.number(p + ("cos_min_ratio",), lo=0, hi=1, auto_ok=True, default=MISSING)
        if _is_num(cmr):
            cmr_v, cmr_src = cmr, "set"
        elif run_min_lr is not MISSING and lr > 0:
            cmr_v, cmr_src = run_min_lr / lr, "run.min_lr / lr"
        else:
            cmr_v, cmr_src = 1e-4, "DeepSpeed's default"
        _note_value(r, p + ("warmup_min_ratio",), wmr, wmr_v, wmr_src,
                    "--warmup-min-lr %s" % _num(wmr_v * lr))
        _note_value(r, p + ("cos_min_ratio",), cmr, cmr_v, cmr_src,
                    "--min-lr %s" % _num(cmr_v * lr))
        plan.exe_args += ["--lr", _num(lr), "--warmup-min-lr", _num(wmr_v * lr),
                          "--min-lr", _num(cmr_v * lr)]
    _note_value(r, p + ("warmup_num_steps",), wn, wn_v, wn_src,
                "--warmup %d%s" % (wn_v, " (DeepSpeed warms up over at least 2)" if wn_v < 2 else ""))
    if wt is not MISSING:
        r.applied(p + ("warmup_type",), _fmt(wt), "--warmup-type %s" % wt)
    plan.exe_args += ["--warmup", str(wn_v), "--warmup-type", wt_v]
    plan.total_steps = None
    if typ != "WarmupLR":
        tn = r.integer(p + ("total_num_steps",), lo=1, auto_ok=True, default=MISSING)
        if _is_num(tn):
            tn_v, tn_src = tn, "set"
        elif tn is AUTO and steps_v:
            tn_v, tn_src = steps_v, "run.steps"
        elif tn is AUTO:
            raise ConfigError(p + ("total_num_steps",), "\"auto\" takes run.steps, which "
                              "the config does not give")
        else:
            raise ConfigError(p, "%s needs total_num_steps (DeepSpeed has no default)" % typ)
        _note_value(r, p + ("total_num_steps",), tn, tn_v, tn_src, "--decay-steps %d" % tn_v)
        plan.exe_args += ["--decay-steps", str(tn_v)]
        plan.total_steps = tn_v


def _resolve_zero(r, plan, facts, precision):
    z = ("zero_optimization",)
    r.section(z)
    r.check_keys(z, _ZERO_OPT_APPLIED, keys.IGNORED_ZERO)
    st_p = z + ("stage",)
    v = r.get(st_p)
    if v is MISSING:
        stage = 0
    elif v == "auto":
        stage = "auto"
    else:
        if not _is_num(v):
            raise ConfigError(st_p, "expected 0, 1, 2, 3 or \"auto\", got %s %s" % (
                _type_name(v), _fmt(v)))
        stage = r.integer(st_p)
        if not 0 <= stage <= 3:
            raise ConfigError(st_p, "%d is not a ZeRO stage (0, 1, 2, 3; or \"auto\" with "
                              "zero_compile.device_memory)" % stage)
    if stage == "auto":
        if r.get(("zero_compile", "device_memory")) is MISSING:
            raise ConfigError(st_p, "\"auto\" chooses the lowest stage whose states fit a "
                              "rank's memory, which needs zero_compile.device_memory (bytes)")
        plan.notes.append((st_p, "applied %s = \"auto\" -> zero-compile --stage=auto (the lowest "
                           "stage that fits zero_compile.device_memory)" % dotted(st_p)))
    elif v is not MISSING:
        r.applied(st_p, str(stage), "zero-compile --stage=%d --world-size=%d" % (stage, plan.world))
    if facts is not None and facts.stage is not None and stage != facts.stage:
        raise ConfigError(st_p if v is not MISSING else z, "the model file is already "
                          "partitioned at stage %d; the stage cannot change" % facts.stage)
    plan.stage = stage
    plan.compile_args += ["--stage=%s" % stage, "--world-size=%d" % plan.world]
    elem_bytes = 2 if precision == "bf16-mixed" else 4
    hidden = facts.hidden if facts is not None else None
    if facts is None:
        plan.pending = True

    def count(key, auto_value, auto_src):
        """An element count, or "auto" resolved from the width."""
        p = z + (key,)
        val = r.integer(p, lo=0, auto_ok=True, default=MISSING)
        if val is AUTO:
            if hidden is None:
                return AUTO, "after the import"
            return auto_value(hidden), auto_src
        return val, "set"

    s3 = stage == 3 or stage == "auto"
    rb, rb_src = count("reduce_bucket_size", lambda h: h * h, "hidden size^2, as the HF Trainer")
    ab, ab_src = count("allgather_bucket_size", lambda h: h * h, "hidden size^2")
    pb, pb_src = count("stage3_prefetch_bucket_size", lambda h: int(0.9 * h * h),
                       "0.9 x hidden size^2, as the HF Trainer")
    pt, pt_src = count("stage3_param_persistence_threshold", lambda h: 10 * h,
                       "10 x hidden size, as the HF Trainer")
    ml, ml_src = count("stage3_max_live_parameters", lambda h: h * h, "hidden size^2")
    ov = r.boolean(z + ("overlap_comm",), default=MISSING)

    def show(key, val, src, effect):
        p = z + (key,)
        given = r.get(p)
        if given == AUTO:
            plan.notes.append((p, "auto    %s = \"auto\" -> %s (%s) -> %s" % (
                dotted(p), _fmt(val) if val is not AUTO else "?", src, effect)))
        else:
            r.applied(p, _fmt(val), effect)

    bucket = rb if rb is not MISSING else ab
    if bucket is not MISSING and bucket is not AUTO:
        if bucket < 1:
            raise ConfigError(z + ("reduce_bucket_size" if rb is not MISSING else
                                   "allgather_bucket_size",), "a bucket holds at least 1 element")
        plan.compile_args.append("--bucket-bytes=%d" % (bucket * elem_bytes))
    if rb is not MISSING:
        show("reduce_bucket_size", rb, rb_src, "zero-compile --bucket-bytes=%s (%s elements x "
             "%d bytes)" % (rb * elem_bytes if rb is not AUTO else "?", rb, elem_bytes))
    if ab is not MISSING:
        if rb is MISSING:
            show("allgather_bucket_size", ab, ab_src, "zero-compile --bucket-bytes=%s" % (
                ab * elem_bytes if ab is not AUTO else "?"))
        elif ab == rb:
            show("allgather_bucket_size", ab, ab_src, "the same bucket as reduce_bucket_size")
        else:
            r.ignored(z + ("allgather_bucket_size",), "zero-bucket has one bucket size for "
                      "every collective, reduce_bucket_size's")

    # Prefetch: overlap_comm splits collectives into start/wait; at stage 3,
    # stage3_prefetch_bucket_size is how far ahead parameters are gathered.
    distance = r.integer(("zero_compile", "prefetch_distance"), lo=0, default=MISSING)
    prefetch = ov is True or (s3 and pb not in (MISSING, 0))
    if ov is not MISSING:
        r.applied(z + ("overlap_comm",), _fmt(ov), "zero-prefetch on (collectives start early, "
                  "reductions overlap the backward)" if ov else
                  ("zero-prefetch off" if not prefetch else
                   "no effect: stage3_prefetch_bucket_size turns zero-prefetch on"))
    if prefetch:
        if distance is MISSING:
            if s3 and pb not in (MISSING, AUTO) and facts is not None:
                unit = max(facts.largest_block(), 1)
                distance = max(1, pb // unit)
            else:
                distance = 1
        plan.compile_args.append("--prefetch=%d" % distance)
    if pb is not MISSING:
        if not s3:
            r.ignored(z + ("stage3_prefetch_bucket_size",), "stage %s does not partition "
                      "parameters (nothing to prefetch)" % stage)
        else:
            unit = facts.largest_block() if facts is not None else 0
            show("stage3_prefetch_bucket_size", pb, pb_src,
                 ("zero-compile --prefetch=%s (%s elements over the largest block's %d: "
                  "that many all-gathers ahead, at least 1)" % (distance, pb, unit))
                 if pb else "no prefetch")
    if ml is not MISSING:
        if not s3:
            r.ignored(z + ("stage3_max_live_parameters",), "stage %s does not partition "
                      "parameters" % stage)
        elif not prefetch:
            r.ignored(z + ("stage3_max_live_parameters",), "nothing is gathered ahead "
                      "(no prefetch), so at most one block's parameters are live")
        else:
            if ml is not AUTO:
                plan.compile_args.append("--max-live-bytes=%d" % (ml * elem_bytes))
            show("stage3_max_live_parameters", ml, ml_src, "zero-compile --max-live-bytes=%s" % (
                ml * elem_bytes if ml is not AUTO else "?"))
    if pt is not MISSING:
        if not s3:
            r.ignored(z + ("stage3_param_persistence_threshold",), "stage %s does not "
                      "partition parameters" % stage)
        else:
            if pt is not AUTO:
                plan.compile_args.append("--persist-threshold=%d" % pt)
            show("stage3_param_persistence_threshold", pt, pt_src,
                 "zero-compile --persist-threshold=%s" % pt)


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


def _resolve_data_and_run(r, plan, steps):
    d = ("data",)
    v = r.get(d)
    if v is MISSING:
        raise ConfigError((), "the config has no data (\"data\": {\"path\": ...})")
    if isinstance(v, str):
        path = r.path_value(d)
        plan.exe_args += ["--data", path]
        data_path = path
    else:
        r.section(d)
        r.check_keys(d, ("path", "val_fraction"))
        if "path" not in v:
            raise ConfigError(d, "data needs a path (text, or llm.c .bin tokens)")
        data_path = r.path_value(d + ("path",))
        plan.exe_args += ["--data", data_path]
        vf = r.number(d + ("val_fraction",), lo=0, hi=1, open_hi=True, default=MISSING)
        if vf is not MISSING:
            plan.exe_args += ["--val-fraction", _num(vf)]
    if not os.path.isfile(data_path):
        raise ConfigError(d if isinstance(v, str) else d + ("path",),
                          "no such file: %s" % data_path)
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
                            ("checkpoint_every", "--checkpoint-every", "int0")):
        p = run + (key,)
        if kind.startswith("int"):
            val = r.integer(p, lo=int(kind[3:]), default=MISSING)
            if val is not MISSING:
                plan.exe_args += [flag, str(val)]
        else:
            val = r.number(p, lo=0, default=MISSING)
            if val is not MISSING:
                plan.exe_args += [flag, _num(val)]
    for key, flag in (("metrics", "--metrics"), ("checkpoint_dir", "--checkpoint-dir"),
                      ("resume", "--resume"), ("export", "--export"), ("import", "--import")):
        val = r.path_value(run + (key,), default=MISSING)
        if val is not MISSING:
            plan.exe_args += [flag, val]
            if key == "import":
                plan.uses_run_import = True
            if key == "resume":
                plan.uses_run_import = True
    for key, flag in (("quiet", "--quiet"), ("overwrite", "--overwrite")):
        if r.boolean(run + (key,), default=False):
            plan.exe_args.append(flag)
