#!/usr/bin/env python3
"""Writes the array datasets of test/e2e/arrays-errors.test into DIR, for
`zero-model mlp --input 8 --output 4` (inputs x f32 [B, 8], target f32
[B, 4]) and its --loss cross-entropy variant (target i32 [B]): one good
file and one file per way to get them wrong."""
import os
import sys

import numpy as np
from safetensors.numpy import save_file

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(0)
x = rng.standard_normal((64, 8)).astype(np.float32)
t = rng.standard_normal((64, 4)).astype(np.float32)
cases = {
    "good": {"x": x, "target": t},
    "missing": {"x": x},
    "dtype": {"x": x.astype(np.int32), "target": t},
    "shape": {"x": np.zeros((64, 7), np.float32), "target": t},
    "rank": {"x": np.zeros((64, 2, 4), np.float32), "target": t},
    "counts": {"x": x, "target": np.zeros((63, 4), np.float32)},
    "float64": {"x": x.astype(np.float64), "target": t},
    # class ids for the classifier: int64 (narrowed), and one that is not
    # an int32
    "labels64": {"x": x, "target": np.arange(64, dtype=np.int64) % 4},
    "labels-big": {"x": x, "target": np.full(64, 1 << 40, np.int64)},
}
for name, arrays in cases.items():
    save_file(arrays, os.path.join(out, name + ".safetensors"))
# The good arrays rounded to bf16 (torch: numpy has no bfloat16).
import torch  # noqa: E402
from safetensors.torch import save_file as save_torch  # noqa: E402
save_torch({"x": torch.from_numpy(x).bfloat16(), "target": torch.from_numpy(t).bfloat16()},
           os.path.join(out, "good-bf16.safetensors"))
# .npy directories: a good one, one without target.npy, one in Fortran order.
for name, arrays in (("npy", {"x": x, "target": t}), ("npy-missing", {"x": x}),
                     ("npy-fortran", {"x": np.asfortranarray(np.ones((64, 8), np.float32)),
                                      "target": t})):
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    for k, v in arrays.items():
        np.save(os.path.join(d, k + ".npy"), v)
# .npy files that are not: no magic, and data shorter than the shape.
for name, blob in (("npy-magic", b"hello, not an array\n"),
                   ("npy-short", None)):
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    np.save(os.path.join(d, "target.npy"), t)
    path = os.path.join(d, "x.npy")
    if blob is None:
        np.save(path, x)
        blob = open(path, "rb").read()[:-100]
    with open(path, "wb") as f:
        f.write(blob)
with open(os.path.join(out, "text.txt"), "w") as f:
    f.write("First Citizen:\nBefore we proceed any further, hear me speak.\n")
