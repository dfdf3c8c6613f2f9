#!/usr/bin/env python3
"""Prints a train module (as zero-opt prints it) up to the order of its ops,
for comparing zero-import's Llama / Qwen3 with zero-model's
(test/Tools/zero-import-decoder.test), whose parameter names are the same
(Hugging Face's) but whose ops come in another order.

  * parameters are printed sorted by name;
  * each function's ops are printed in one canonical order: a depth-first
    walk from the returned values, operands first, the operands of
    commutative ops (train.add, train.mul) ordered by a hash of what they
    compute; values are renamed %v0, %v1, ... in that order, so two
    functions print the same exactly when they compute the same graph of
    the same ops, attributes and types (ops nothing returned depends on are
    not printed).
  * `--drop ATTR_TEXT` removes a literal piece of op text first (repeatable).
"""
import argparse
import hashlib
import re
import sys

VALUE = re.compile(r"%[A-Za-z0-9_$.]+(?:#\d+)?")
# `%3 = ...`, `%3:2 = ...` or `%result, %lse = ...` (zero-opt's result names).
DEF = re.compile(r"^\s*(%[A-Za-z0-9_$.]+(?::\d+)?(?:, %[A-Za-z0-9_$.]+)*) = (.*)$")
FUNC = re.compile(r"^\s*func\.func @([\w$.]+)\((.*)\) -> .* \{\s*$")
RETURN = re.compile(r"^\s*return (.*) : .*$")
COMMUTATIVE = ("train.add ", "train.mul ")


def functions(lines):
    """{name: (arg names, {value: (op text, operands)}, returned values)}."""
    out, cur = {}, None
    for line in lines:
        m = FUNC.match(line)
        if m:
            args = re.findall(r"(%[\w$.]+):", m.group(2))
            cur = out[m.group(1)] = (args, {}, [])
            continue
        if cur is None:
            continue
        m = RETURN.match(line)
        if m:
            cur[2].extend(VALUE.findall(m.group(1)))
            cur = None
            continue
        m = DEF.match(line)
        if m:
            lhs, text = m.group(1), m.group(2)
            operands = VALUE.findall(text)
            name, _, count = lhs.partition(":")
            results = lhs.split(", ") if "," in lhs else [name] if not count else \
                ["%s#%d" % (name, i) for i in range(int(count))]
            name = results[0]
            for i, r in enumerate(results):
                cur[1][r] = (VALUE.sub("$", text), operands, i, name)
    return out


def canonical(fn):
    args, defs, returned = fn
    keys = {a: "arg%d" % i for i, a in enumerate(args)}

    def key(v):
        if v not in keys:
            text, operands, index, _ = defs[v]
            ks = [key(o) for o in operands]
            if text.startswith(COMMUTATIVE):
                ks.sort()
            keys[v] = hashlib.sha1(("%s|%s|%d" % (text, ",".join(ks), index)).encode()).hexdigest()
        return keys[v]

    names = {a: "%%arg%d" % i for i, a in enumerate(args)}
    lines, done = [], set()

    def visit(v):
        if v in names:
            return
        text, operands, _, base = defs[v]
        if base in done:
            return
        order = list(operands)
        if text.startswith(COMMUTATIVE):
            order.sort(key=key)
        for o in order:
            visit(o)
        done.add(base)
        results = [r for r in defs if defs[r][3] == base]
        label = "%%v%d" % len(lines)
        for r in results:
            names[r] = label if len(results) == 1 else "%s#%d" % (label, defs[r][2])
        pieces = text.split("$")
        body = pieces[0] + "".join(names[o] + p for o, p in zip(order, pieces[1:]))
        lines.append("%s%s = %s" % (label, ":%d" % len(results) if len(results) > 1 else "", body))

    for v in returned:
        visit(v)
    lines.append("return " + ", ".join(names[v] for v in returned))
    return lines


def main():
    sys.setrecursionlimit(100000)
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("module")
    ap.add_argument("--drop", action="append", default=[])
    args = ap.parse_args()
    text = open(args.module).read()
    for piece in args.drop:
        text = text.replace(piece, "")
    lines = text.splitlines()
    params = sorted(l.strip() for l in lines if l.strip().startswith("train.param "))
    print("\n".join(params))
    fns = functions(lines)
    for name in sorted(fns):
        print("func @%s" % name)
        print("\n".join("  " + l for l in canonical(fns[name])))
    print("canonical_dag: %d parameters, %s" % (
        len(params), ", ".join("@%s %d ops" % (n, len(canonical(fns[n])) - 1) for n in sorted(fns))),
        file=sys.stderr)


if __name__ == "__main__":
    main()
