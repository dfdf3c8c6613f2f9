#!/usr/bin/env python3
"""Writes llm.c / nanoGPT token files (.bin) and text pieces for the data tests.

  token_file.py bin OUT SRC START COUNT [--magic M] [--version V]
                [--declare N] [--set POS=ID ...] [--fill ID]
      OUT: a 256-int32 header (magic 20240520, version 1, count COUNT or
      --declare N) and the bytes SRC[START:START+COUNT] as uint16 tokens;
      --set puts token ID at token POS of the file, --fill ID everywhere.
  token_file.py text OUT SRC START COUNT
      OUT: the bytes SRC[START:START+COUNT].
"""
import argparse
import array
import sys


def main():
    p = argparse.ArgumentParser()
    p.add_argument("kind", choices=["bin", "text"])
    p.add_argument("out")
    p.add_argument("src")
    p.add_argument("start", type=int)
    p.add_argument("count", type=int)
    p.add_argument("--magic", type=int, default=20240520)
    p.add_argument("--version", type=int, default=1)
    p.add_argument("--declare", type=int)
    p.add_argument("--set", action="append", default=[])
    p.add_argument("--fill", type=int)
    a = p.parse_args()
    with open(a.src, "rb") as f:
        data = f.read()[a.start:a.start + a.count]
    if len(data) != a.count:
        sys.exit(f"{a.src} has fewer than {a.start + a.count} bytes")
    with open(a.out, "wb") as f:
        if a.kind == "text":
            f.write(data)
            return
        header = array.array("i", [0] * 256)
        header[0], header[1] = a.magic, a.version
        header[2] = a.count if a.declare is None else a.declare
        tokens = array.array("H", list(data))  # one token per byte
        if a.fill is not None:
            tokens = array.array("H", [a.fill] * a.count)
        for item in a.set:
            pos, tok = item.split("=")
            tokens[int(pos)] = int(tok)
        if sys.byteorder != "little":
            header.byteswap()
            tokens.byteswap()
        f.write(header.tobytes())
        f.write(tokens.tobytes())


if __name__ == "__main__":
    main()
