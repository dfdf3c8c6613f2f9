#!/usr/bin/env python3
"""Edits a checkpoint's manifest.json as a writer would (to reach the field
checks behind its own checksum).

  edit_manifest.py STEP_DIR FROM TO

Replaces the first FROM by TO in STEP_DIR/manifest.json, then recomputes
the manifest's own FNV-1a-64 ("manifest_fnv1a64": of every byte before its
line, docs/checkpoints.md). Exits 1 when FROM is not in the manifest.
"""
import sys

KEY = '  "manifest_fnv1a64": "'


def fnv1a64(data):
    h = 0xcbf29ce484222325
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def main():
    step_dir, old, new = sys.argv[1:4]
    path = step_dir + "/manifest.json"
    text = open(path, "rb").read().decode("utf-8")
    if old not in text:
        sys.exit("%s: %r is not in it" % (path, old))
    text = text.replace(old, new, 1)
    at = text.rfind(KEY)
    if at < 0:
        sys.exit("%s: no manifest_fnv1a64" % path)
    body = text[:at].encode("utf-8")
    start = at + len(KEY)
    text = text[:start] + "%016x" % fnv1a64(body) + text[start + 16:]
    open(path, "wb").write(text.encode("utf-8"))


if __name__ == "__main__":
    main()
