#!/usr/bin/env python3
"""Compares the tensors of safetensors files (standard library only).

  safetensors_diff.py A B [C ...] [--max-abs X] [--tensors NAME,...]

Every file must hold the same tensor names, dtypes and shapes as A; prints
one line per file with the largest absolute difference from A and exits 1
when it exceeds --max-abs (default 0: bit-identical values). F32 and BF16.
"""
import argparse
import array
import json
import struct
import sys


def read(path):
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n].decode("utf-8"))
    header.pop("__metadata__", None)
    data = blob[8 + n:]
    out = {}
    for name, t in header.items():
        b, e = t["data_offsets"]
        raw = data[b:e]
        if t["dtype"] == "F32":
            values = array.array("f", raw)
        elif t["dtype"] == "BF16":
            values = array.array("f", b"".join(b"\0\0" + raw[i:i + 2]
                                               for i in range(0, len(raw), 2)))
        else:
            sys.exit("%s: %s has dtype %s" % (path, name, t["dtype"]))
        if sys.byteorder != "little":
            values.byteswap()
        out[name] = (t["dtype"], tuple(t["shape"]), values)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="+")
    ap.add_argument("--max-abs", type=float, default=0.0)
    ap.add_argument("--tensors", default="",
                    help="compare only these tensors (comma-separated)")
    args = ap.parse_args()
    only = [t for t in args.tensors.split(",") if t]

    def read_some(path):
        out = read(path)
        return {k: v for k, v in out.items() if k in only} if only else out

    read_all, read_one = read, read_some
    ref = read_one(args.files[0])
    bad = False
    for path in args.files[1:]:
        other = read_one(path)
        if {k: v[:2] for k, v in other.items()} != {k: v[:2] for k, v in ref.items()}:
            print("%s: tensors differ from %s" % (path, args.files[0]))
            bad = True
            continue
        diff = max((abs(x - y) for k in ref for x, y in zip(ref[k][2], other[k][2])),
                   default=0.0)
        ok = diff <= args.max_abs
        print("%s: %d tensors, max |diff| %.3e %s" % (path, len(ref), diff,
                                                     "ok" if ok else "TOO LARGE"))
        bad = bad or not ok
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
