#!/usr/bin/env python3
"""Prints how many bytes two files of the same size differ in.

  bytes_differ.py A B     -> "N bytes differ" (exit 1 if the sizes differ)
"""
import sys


def main():
    a, b = (open(p, "rb").read() for p in sys.argv[1:3])
    if len(a) != len(b):
        sys.exit(f"{sys.argv[1]} has {len(a)} bytes, {sys.argv[2]} {len(b)}")
    print(f"{sum(x != y for x, y in zip(a, b))} bytes differ")


if __name__ == "__main__":
    main()
