"""Typed reads of a config's keys, each error naming the key (resolve.py
and its sections use them), and the one-line notes of what was applied,
resolved from "auto", or ignored."""

import math
import os

from .config import ConfigError, dotted

MISSING = object()
AUTO = "auto"


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
    """A number as a flag's value: the shortest text that reads back the same."""
    return repr(float(v))


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
