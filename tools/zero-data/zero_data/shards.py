"""llm.c / nanoGPT token files: the format the training driver's --data reads.

One .bin file: a header of 256 little-endian int32 (magic 20240520 =
ZRT_LLMC_MAGIC, version 1, the token count n, zeros), then n uint16 token
ids (runtime/src/driver/data.cpp, zrt_dataset_open_bin). Files are written to a
temporary name in their directory and renamed into place.
"""

import os
import tempfile

import numpy as np

from .errors import DataError

__all__ = ["MAGIC", "VERSION", "write_bin", "read_bin", "atomic_write"]

MAGIC = 20240520
VERSION = 1
HEADER_INTS = 256


def atomic_write(path, write):
    """Calls write(file object) on a temporary file next to `path`, then
    renames it to `path` (a reader never sees half a file)."""
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".%s." % os.path.basename(path), dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_bin(path, tokens):
    """Writes `tokens` (uint16 array [n], n >= 1) as an llm.c .bin file."""
    tokens = np.ascontiguousarray(tokens, dtype="<u2")
    header = np.zeros(HEADER_INTS, dtype="<i4")
    header[0], header[1], header[2] = MAGIC, VERSION, tokens.size

    def write(f):
        f.write(header.tobytes())
        f.write(tokens.tobytes())
    atomic_write(path, write)


def read_bin(path):
    """The uint16 tokens of an llm.c .bin file; a DataError when it is not one."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise DataError("cannot read '%s': %s" % (path, e.strerror or e)) from None
    if len(raw) < HEADER_INTS * 4:
        raise DataError("'%s' is shorter than the 1024-byte llm.c header" % path)
    header = np.frombuffer(raw, dtype="<i4", count=HEADER_INTS)
    if header[0] != MAGIC or header[1] != VERSION:
        raise DataError("'%s' is not an llm.c token file (magic %d version %d)"
                        % (path, header[0], header[1]))
    n = int(header[2])
    if n < 0 or len(raw) < HEADER_INTS * 4 + 2 * n:
        raise DataError("'%s' is truncated: its header declares %d tokens" % (path, n))
    return np.frombuffer(raw, dtype="<u2", count=n, offset=HEADER_INTS * 4)
