#!/usr/bin/env python3
"""Runs many zero-import command lines in one Python process (PyTorch and
transformers load once: a separate process per case costs seconds each).

Cases are the lines `# CASE LABEL = ARGS...` of the given test file; in
ARGS, {inputs} is this directory and {tmp} the --tmp directory. Each case
prints one line `[LABEL] rc=N <what zero-import wrote on stderr>`, with
newlines shown as `\\n`, so a FileCheck of the same file checks them; a
Python traceback in any output makes the runner exit 1.
"""
import argparse
import contextlib
import io
import os
import re
import shlex
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("test", help="the .test file with # CASE: lines")
    ap.add_argument("--pkg", required=True, help="tools/zero-import (the package's parent)")
    ap.add_argument("--tmp", required=True)
    args = ap.parse_args()
    sys.path.insert(0, args.pkg)
    from zero_import.__main__ import run
    inputs = os.path.dirname(os.path.abspath(__file__))
    case = re.compile(r"^# CASE (\S+) = (.*)$")
    bad = False
    with open(args.test) as f:
        cases = [case.match(line.rstrip("\n")) for line in f]
    for m in filter(None, cases):
        label = m.group(1)
        argv = shlex.split(m.group(2).replace("{inputs}", inputs).replace("{tmp}", args.tmp))
        err, out = io.StringIO(), io.StringIO()
        sys.argv = ["zero-import"] + argv
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            try:
                rc = run()
            except SystemExit as e:
                rc = e.code
        text = err.getvalue()
        if "Traceback" in text or "Traceback" in out.getvalue():
            bad = True
        print("[%s] rc=%s %s" % (label, rc, text.strip().replace("\n", "\\n")), flush=True)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
