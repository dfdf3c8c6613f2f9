"""Start-up time and resident memory of the training program against the
size of its data (bench/data-scale).

Writes llm.c .bin token shards (256-int32 header, magic 20240520, version 1,
then uint16 tokens: the bytes of tinyshakespeare repeated, ids < 256) of
1e9 tokens each (2 GB; the header's int32 count caps a file at 2^31 - 1
tokens), --gb gigabytes in all, and a 1 MB file. A tiny GPT (vocab 256,
T = 64, B = 4 per rank) compiled for N = 2 at stage 3 trains --steps steps
on each with `mpirun -np 2`, every rank under /usr/bin/time (its peak RSS,
"%M" = the kernel's VmHWM). Start-up is the wall time from launching mpirun
to the line of step 1 (MPI start, model init, opening the data and one
step: the same for both sizes but the data part). The difference of the two
runs is what the data adds. Deletes what it wrote.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

TOKENS_PER_SHARD = 1_000_000_000
MAGIC, VERSION = 20240520, 1


def write_bin(path, tokens_total, pattern):
    header = np.zeros(256, dtype="<i4")
    header[:3] = (MAGIC, VERSION, tokens_total)
    chunk = np.resize(pattern, 64 << 20).astype("<u2")  # 128 MB
    with open(path, "wb") as f:
        f.write(header.tobytes())
        left = tokens_total
        while left > 0:
            n = min(left, chunk.size)
            f.write(chunk[:n].tobytes())
            left -= n


def run(exe, data, steps, label, extra=()):
    cmd = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", "2",
           "/usr/bin/time", "-f", "rank-peak-rss-kb %M",
           exe, "--data", data, "--steps", str(steps), "--lr", "1e-3",
           "--val-every", "0", "--sample-tokens", "0", "--threads", "1",
           *extra]
    env = dict(os.environ, OMP_NUM_THREADS="1", ZRT_BLAS_REEXEC="0")
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, env=env)
    first = None
    out = []
    for line in p.stdout:
        out.append(line)
        if first is None and line.startswith("step 1/"):
            first = time.monotonic() - t0
    rc = p.wait()
    total = time.monotonic() - t0
    if rc != 0 or first is None:
        sys.exit("%s failed (exit %d):\n%s" % (label, rc, "".join(out)))
    rss = [int(m.group(1)) for m in
           (re.match(r"rank-peak-rss-kb (\d+)", l) for l in out) if m]
    if len(rss) != 2:
        sys.exit("%s: expected two peak-RSS lines:\n%s" % (label, "".join(out)))
    return {"label": label, "startup": first, "total": total,
            "rss_mb": [r / 1024 for r in rss],
            "banner": next((l.strip() for l in out if l.startswith("data ")), "")}


def compile_model(bindir, tmp, name):
    mlir = os.path.join(tmp, name + ".mlir")
    exe = os.path.join(tmp, name)
    subprocess.run([os.path.join(bindir, "zero-model"), "gpt", "--n-layer", "2",
                    "--n-head", "2", "--n-embd", "64", "--vocab", "256",
                    "--seq", "64", "--batch", "4", "-o", mlir], check=True)
    subprocess.run([os.path.join(bindir, "zero-compile"), mlir, "--stage=3",
                    "--world-size=2", "-o", exe], check=True)
    return exe


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True, help="the build's bin directory")
    ap.add_argument("--tmp", required=True, help="where the data is written")
    ap.add_argument("--gb", type=float, default=10.0)
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--old-bin", help="another build's bin directory")
    a = ap.parse_args()
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                       "shared", "data", "tinyshakespeare.txt")
    if not os.path.exists(src):
        src = "/work/shared/data/tinyshakespeare.txt"
    pattern = np.frombuffer(open(src, "rb").read(), dtype=np.uint8)
    tmp = tempfile.mkdtemp(prefix="zero-data-scale-", dir=a.tmp)
    try:
        exe = compile_model(a.bin, tmp, "new")
        small = os.path.join(tmp, "small.bin")
        write_bin(small, 500_000, pattern)  # 1 MB
        total_tokens = int(a.gb * 1e9 / 2)
        t0 = time.monotonic()
        shards, left, i = [], total_tokens, 0
        while left > 0:
            n = min(left, TOKENS_PER_SHARD)
            path = os.path.join(tmp, "big_%06d.bin" % i)
            write_bin(path, n, pattern)
            shards.append(path)
            left -= n
            i += 1
        size = sum(os.path.getsize(s) for s in shards)
        print("wrote %d shards, %.2f GB (%d tokens) in %.1f s" % (
            len(shards), size / 1e9, total_tokens, time.monotonic() - t0))
        rows = [run(exe, small, a.steps, "1 MB file"),
                run(exe, os.path.join(tmp, "big_*.bin"), a.steps,
                    "%.1f GB, %d shards" % (size / 1e9, len(shards)))]
        # Cold page cache for the shards is not forced (no root needed):
        # opening maps the files and reads only their 1024-byte headers.
        if a.old_bin:
            old = compile_model(a.old_bin, tmp, "old")
            mid = os.path.join(tmp, "mid.bin")
            write_bin(mid, 200_000_000, pattern)  # 400 MB
            rows += [run(old, small, a.steps, "old loader, 1 MB file"),
                     run(old, mid, a.steps, "old loader, 400 MB file"),
                     run(exe, mid, a.steps, "new loader, 400 MB file")]
        print("| data | start-up (launch to step 1) | peak RSS rank 0 | peak RSS rank 1 | run |")
        print("|---|---|---|---|---|")
        for r in rows:
            print("| %s | %.2f s | %.1f MB | %.1f MB | %.2f s |" % (
                r["label"], r["startup"], r["rss_mb"][0], r["rss_mb"][1], r["total"]))
        base, big = rows[0], rows[1]
        print("beyond the 1 MB run: start-up %+.2f s, peak RSS %+.1f / %+.1f MB" % (
            big["startup"] - base["startup"],
            big["rss_mb"][0] - base["rss_mb"][0], big["rss_mb"][1] - base["rss_mb"][1]))
        print(big["banner"])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
