"""Loading a zero-train config (JSON or TOML) with the position of every key.

A config error is one line that names the key and where it is:

    zero-train: error: ds.json:12:5: zero_optimization.stage: expected ...

JSON positions come from zero_train.jsonpos (line and column of the key);
TOML has no position-keeping parser in the standard library, so the line of
a key is found by scanning the file's table headers and `key =` lines
(tomllib has already checked the syntax).
"""

import os
import re

from . import jsonpos

__all__ = ["Config", "ConfigError", "dotted", "load"]


def dotted(path):
    """('zero_optimization', 'stage') -> 'zero_optimization.stage'."""
    out = ""
    for p in path:
        out += "[%d]" % p if isinstance(p, int) else ("." if out else "") + str(p)
    return out


class ConfigError(Exception):
    """A config problem at `path` (a key path; () is the whole file)."""

    def __init__(self, path, message, at=None):
        super().__init__(message)
        self.path = tuple(path)
        self.message = message
        self.at = at  # (line, column) when not the position of a key


class Config:
    def __init__(self, filename, data, where):
        self.filename = filename
        self.dir = os.path.dirname(os.path.abspath(filename))
        self.data = data
        self._where = where

    def _pos(self, path):
        path = tuple(path)
        while path and path not in self._where:
            path = path[:-1]
        return self._where.get(path)

    def position(self, path):
        """'FILE:LINE:COL' (JSON) or 'FILE:LINE' (TOML) of `path`, or of its
        nearest ancestor with a known position."""
        pos = self._pos(path)
        if not pos:
            return self.filename
        return ":".join(str(p) for p in pos)

    def line(self, path):
        pos = self._pos(path)
        return pos[1] if pos else None

    def message(self, err):
        """The one-line text of a ConfigError."""
        if err.at:
            return "%s: %s%s" % (":".join(str(a) for a in err.at),
                                 dotted(err.path) + ": " if err.path else "", err.message)
        if err.path:
            return "%s: %s: %s" % (self.position(err.path), dotted(err.path), err.message)
        return "%s: %s" % (self.filename, err.message)


_TOML_HEADER = re.compile(r"^\s*\[\s*([^\[\]]+?)\s*\]\s*(#.*)?$")
_TOML_ARRAY_HEADER = re.compile(r"^\s*\[\[")
_TOML_KEY = re.compile(r"^\s*((?:[A-Za-z0-9_-]+|\"[^\"]*\"|'[^']*')"
                       r"(?:\s*\.\s*(?:[A-Za-z0-9_-]+|\"[^\"]*\"|'[^']*'))*)\s*=")


def _toml_keys(text, filename):
    def split(k):
        return tuple(p.strip().strip("\"'") for p in re.findall(
            r"\"[^\"]*\"|'[^']*'|[A-Za-z0-9_-]+", k))

    where = {}
    table = ()
    for n, line in enumerate(text.splitlines(), start=1):
        if _TOML_ARRAY_HEADER.match(line):
            table = None  # arrays of tables: positions of their parent only
            continue
        m = _TOML_HEADER.match(line)
        if m:
            table = split(m.group(1))
            where.setdefault(table, (filename, n))
            continue
        m = _TOML_KEY.match(line)
        if m and table is not None:
            path = table + split(m.group(1))
            for i in range(len(table) + 1, len(path) + 1):
                where.setdefault(path[:i], (filename, n))
    return where


def _load_one(filename):
    """(data, where) of one file; where: path -> (filename, line[, column])."""
    try:
        with open(filename, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise ConfigError((), "cannot read %s: %s" % (filename, e.strerror or e))
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ConfigError((), "%s is not UTF-8 text (byte %d)" % (filename, e.start))
    if filename.endswith(".toml"):
        try:
            import tomllib
        except ImportError:
            raise ConfigError((), "TOML configs need Python 3.11 or newer (tomllib)")
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            m = re.search(r"^(.*) \(at line (\d+), column (\d+)\)$", str(e))
            if m:
                raise ConfigError((), "TOML syntax error: %s" % m.group(1),
                                  at=(filename, int(m.group(2)), int(m.group(3)))) from None
            raise ConfigError((), "TOML syntax error: %s" % e, at=(filename,)) from None
        return data, _toml_keys(text, filename)
    try:
        data, where = jsonpos.parse(text)
    except jsonpos.JsonError as e:
        raise ConfigError((), "JSON syntax error: %s" % e.message,
                          at=(filename, e.line, e.column)) from None
    if not isinstance(data, dict):
        raise ConfigError((), "%s: the config must be a JSON object ({...})" % filename)
    return data, {k: (filename,) + v for k, v in where.items()}


ZERO_SECTIONS = ("model", "data", "run", "zero_compile", "deepspeed_config")


def load(filename):
    """Reads a .json or .toml config, and the DeepSpeed config it names with
    "deepspeed_config" (its keys join the config's); raises ConfigError."""
    data, where = _load_one(filename)
    try:
        return _with_deepspeed(filename, data, where)
    except ConfigError as e:
        if e.path and not e.at:
            e.at = Config(filename, data, where)._pos(e.path)
        raise


def _with_deepspeed(filename, data, where):
    cfg = Config(filename, data, where)
    ds = data.get("deepspeed_config")
    if ds is None:
        return cfg
    if not isinstance(ds, str) or not ds:
        raise ConfigError(("deepspeed_config",), "expected a file name (a DeepSpeed "
                          "ds_config.json), got %r" % (ds,))
    del data["deepspeed_config"]
    path = ds if os.path.isabs(ds) else os.path.join(cfg.dir, ds)
    if not os.path.isfile(path):
        raise ConfigError(("deepspeed_config",), "no such file: %s" % path)
    ds_data, ds_where = _load_one(path if os.path.isabs(ds) else
                                  os.path.join(os.path.dirname(filename), ds))
    for k in ds_data:
        if k in ZERO_SECTIONS:
            raise ConfigError((k,), "a DeepSpeed config holds DeepSpeed's keys only; %s "
                              "belongs in %s" % (k, filename))
        if k in data:
            where[(k,)] = ds_where[(k,)]
            raise ConfigError((k,), "given in both %s and the DeepSpeed config %s" % (
                filename, ds))
    data.update(ds_data)
    where.update({p: w for p, w in ds_where.items() if p})
    return cfg
