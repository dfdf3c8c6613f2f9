"""The zero_optimization section: the stage, buckets, prefetch, the
live-parameter bound and persistence, as zero-compile's flags; its other
DeepSpeed keys are listed as ignored (keys.IGNORED_ZERO)."""

from . import keys
from .config import ConfigError, dotted
from .reader import AUTO, MISSING, _fmt, _is_num, _type_name

_ZERO_OPT_APPLIED = ("stage", "reduce_bucket_size", "allgather_bucket_size", "overlap_comm",
                     "stage3_prefetch_bucket_size", "stage3_max_live_parameters",
                     "stage3_param_persistence_threshold")


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
