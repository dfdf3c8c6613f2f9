#!/usr/bin/env python3
"""Compares two generated C++ reference tables (`constexpr float name[n] =
{...};` lines, runtime/test/decoder_torch_reference.inc): the same names,
sizes and non-float lines, and every value within --tol of the checked-in
one (relative to max(1, |value|)). The references come from PyTorch kernels
(F.scaled_dot_product_attention) whose summation order depends on the CPU
and its thread count, so the last bits differ between machines; a change of
the math shows up as differences far above that.

usage: compare_reference_inc.py CHECKED_IN FRESH [--tol 1e-6]
"""
import argparse
import re
import sys

ARRAY = re.compile(r"^constexpr float (\w+)\[(\d+)\] = \{(.*)\};$")


def parse(path):
    tables, other = {}, []
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            m = ARRAY.match(line)
            if m:
                values = [float(v.strip().rstrip("f")) for v in m.group(3).split(",") if v.strip()]
                if len(values) != int(m.group(2)):
                    sys.exit("%s: %s has %d values, declared %s" % (path, m.group(1), len(values), m.group(2)))
                tables[m.group(1)] = values
            else:
                other.append(line)
    return tables, other


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("checked_in")
    ap.add_argument("fresh")
    ap.add_argument("--tol", type=float, default=1e-6)
    args = ap.parse_args()
    a, a_other = parse(args.checked_in)
    b, b_other = parse(args.fresh)
    if a_other != b_other:
        sys.exit("the non-table lines differ")
    if sorted(a) != sorted(b):
        sys.exit("tables differ: %s vs %s" % (sorted(a), sorted(b)))
    worst, where = 0.0, ""
    for name in sorted(a):
        if len(a[name]) != len(b[name]):
            sys.exit("%s: %d vs %d values" % (name, len(a[name]), len(b[name])))
        for i, (x, y) in enumerate(zip(a[name], b[name])):
            d = abs(x - y) / max(1.0, abs(x))
            if d > worst:
                worst, where = d, "%s[%d]" % (name, i)
    print("%d tables, max difference %.2e%s" % (len(a), worst, " at " + where if where else ""))
    if worst > args.tol:
        print("MISMATCH: above %g" % args.tol)
        return 1
    print("ok within %g" % args.tol)
    return 0


if __name__ == "__main__":
    sys.exit(main())
