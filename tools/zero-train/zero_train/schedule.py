"""The scheduler section: DeepSpeed's WarmupLR, WarmupDecayLR and
WarmupCosineLR as the program's --lr-schedule (runtime/README.md has the
formulas), or Zero's cosine / constant schedule without one."""

from .config import ConfigError
from .reader import AUTO, MISSING, _fmt, _is_num, _note_value, _num

_SCHEDULERS = {
    "WarmupLR": ("warmup_min_lr", "warmup_max_lr", "warmup_num_steps", "warmup_type",
                 "last_batch_iteration"),
    "WarmupDecayLR": ("total_num_steps", "warmup_min_lr", "warmup_max_lr",
                      "warmup_num_steps", "warmup_type", "last_batch_iteration"),
    "WarmupCosineLR": ("total_num_steps", "warmup_min_ratio", "warmup_num_steps",
                       "cos_min_ratio", "warmup_type", "last_batch_iteration"),
}


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
