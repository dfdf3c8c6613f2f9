"""The text that zero-data reads: files and globs -> documents.

A plain file (any name but *.jsonl) is one document: its UTF-8 text. A
*.jsonl file holds one document per line, a JSON object whose `text_key`
(default "text") is a string; blank lines are skipped. Every problem is a
DataError naming the file (and line): a missing file, a glob matching
nothing, a directory, an empty file, bytes that are not UTF-8, a JSON line
without the key.
"""

import glob
import json
import os

from .errors import DataError

__all__ = ["expand", "documents", "encode_chunks"]

_GLOB_CHARS = "*?["


def expand(patterns):
    """The files named by `patterns` (paths or globs), in order, each once.

    A pattern that names an existing file is that file; one with glob
    characters is expanded (sorted); anything else is a DataError."""
    if not patterns:
        raise DataError("no input files given")
    out, seen = [], set()
    for p in patterns:
        if os.path.exists(p):
            matches = [p]
        elif any(c in p for c in _GLOB_CHARS):
            matches = sorted(glob.glob(p, recursive=True))
            if not matches:
                raise DataError("no file matches '%s'" % p)
        else:
            raise DataError("cannot read '%s': no such file" % p)
        for m in matches:
            if os.path.isdir(m):
                raise DataError("'%s' is a directory (name its files, or a glob "
                                "such as '%s/*.txt')" % (m, m.rstrip("/")))
            key = os.path.realpath(m)
            if key not in seen:
                seen.add(key)
                out.append(m)
    return out


def _read_text(path):
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise DataError("cannot read '%s': %s" % (path, e.strerror or e)) from None
    if not raw:
        raise DataError("'%s' is empty" % path)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise DataError("'%s' is not UTF-8 text (byte %d)" % (path, e.start)) from None


def documents(files, text_key="text"):
    """Yields (path, text) for every document of `files` (see the module doc)."""
    for path in files:
        text = _read_text(path)
        if not path.endswith(".jsonl"):
            yield path, text
            continue
        n = 0
        for lineno, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except ValueError as e:
                raise DataError("%s:%d: not a JSON line: %s" % (path, lineno, e)) from None
            if not isinstance(obj, dict) or not isinstance(obj.get(text_key), str):
                raise DataError("%s:%d: expected a JSON object with a string \"%s\" "
                                "(the document; --text-key names another key)"
                                % (path, lineno, text_key))
            if obj[text_key]:
                n += 1
                yield path, obj[text_key]
        if n == 0:
            raise DataError("'%s' holds no documents (no line with a non-empty \"%s\")"
                            % (path, text_key))


def _plain(c):
    """A character no pre-token boundary can move across (see encode_chunks)."""
    return c.isalnum() or "!" <= c <= "~"


def encode_chunks(text, chunk_chars=1 << 20):
    """`text` cut into pieces of about `chunk_chars` characters, each cut at
    a "\\n" with a visible character on both sides ("...x\\nY...").

    The byte-level pre-tokenizer (GPT-2's regex) always ends a pre-token
    before such a lone newline and starts one after it, and BPE merges never
    cross pre-tokens, so encoding the pieces one by one gives exactly the ids
    of encoding the whole text (test/e2e/bpe-shards-train-decode.test checks
    it on tiny Shakespeare) while the tokenizer works on bounded strings."""
    pieces, start, n = [], 0, len(text)
    while n - start > chunk_chars:
        p = text.find("\n", start + chunk_chars)
        while p != -1 and not (p >= 1 and p + 1 < n and _plain(text[p - 1]) and
                               _plain(text[p + 1])):
            p = text.find("\n", p + 1)
        if p == -1:
            break
        pieces.append(text[start:p + 1])
        start = p + 1
    pieces.append(text[start:])
    return pieces
