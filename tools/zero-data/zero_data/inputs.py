"""The text that zero-data reads: files and globs -> documents, streamed.

A plain file (any name but *.jsonl) is one document: its UTF-8 text. A
*.jsonl file holds one document per line, a JSON object whose `text_key`
(default "text") is a string; blank lines are skipped. Every problem is a
DataError naming the file (and line): a missing file, a glob matching
nothing, a directory, an empty file, bytes that are not UTF-8, a JSON line
without the key.
"""

import codecs
import glob
import json
import os

from .errors import DataError

__all__ = ["expand", "check_files", "pieces"]

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


def check_files(files):
    """Refuses an empty or unreadable file before any work is done."""
    for path in files:
        try:
            size = os.path.getsize(path)
            with open(path, "rb"):
                pass
        except OSError as e:
            raise DataError("cannot read '%s': %s" % (path, e.strerror or e)) from None
        if size == 0:
            raise DataError("'%s' is empty" % path)


def _blocks(path, block_bytes):
    """The UTF-8 text of `path` in blocks of about `block_bytes` bytes
    (a character split between two blocks is decoded whole)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    consumed = 0
    try:
        f = open(path, "rb")
    except OSError as e:
        raise DataError("cannot read '%s': %s" % (path, e.strerror or e)) from None
    with f:
        while True:
            try:
                raw = f.read(block_bytes)
            except OSError as e:
                raise DataError("cannot read '%s': %s" % (path, e.strerror or e)) from None
            pending = len(decoder.getstate()[0])
            try:
                text = decoder.decode(raw, final=not raw)
            except UnicodeDecodeError as e:
                raise DataError("'%s' is not UTF-8 text (byte %d)"
                                % (path, consumed - pending + e.start)) from None
            consumed += len(raw)
            if text:
                yield text
            if not raw:
                return


BLOCK_BYTES = 1 << 20  # read size
# Piece size: the tokenizer's working memory is a few hundred bytes per
# character of the strings it encodes at once (its normalized-string
# alignments), so pieces are small and encoded in batches (bench/data-prep).
PIECE_CHARS = 1 << 16


def pieces(files, text_key="text", chunk_chars=PIECE_CHARS, stats=None):
    """Yields (starts_document, text) for the documents of `files` (see the
    module doc), a document of a plain file cut into pieces of about
    `chunk_chars` characters at boundaries that change no token
    (encode_chunks), so that no file is ever held whole. `stats`, a dict,
    gets "documents" and "characters"."""
    stats = {} if stats is None else stats
    stats.setdefault("documents", 0)
    stats.setdefault("characters", 0)
    for path in files:
        if not path.endswith(".jsonl"):
            stats["documents"] += 1
            first, buf, pos = True, "", 0
            for block in _blocks(path, BLOCK_BYTES):
                buf = buf[pos:] + block
                pos = 0
                while len(buf) - pos > chunk_chars:
                    cut = _cut(buf, pos + chunk_chars)
                    if cut is None:
                        break  # no safe boundary yet: read on
                    stats["characters"] += cut - pos
                    yield first, buf[pos:cut]
                    first, pos = False, cut
            if len(buf) > pos or first:
                stats["characters"] += len(buf) - pos
                yield first, buf[pos:]
            continue
        n, rest, lineno = 0, "", 0
        for block in _blocks(path, BLOCK_BYTES):
            lines = (rest + block).split("\n")
            rest = lines.pop()
            for line in lines:
                lineno += 1
                doc = _jsonl_document(path, lineno, line, text_key)
                if doc:
                    n += 1
                    stats["documents"] += 1
                    stats["characters"] += len(doc)
                    yield True, doc
        if rest:
            lineno += 1
            doc = _jsonl_document(path, lineno, rest, text_key)
            if doc:
                n += 1
                stats["documents"] += 1
                stats["characters"] += len(doc)
                yield True, doc
        if n == 0:
            raise DataError("'%s' holds no documents (no line with a non-empty \"%s\")"
                            % (path, text_key))


def _jsonl_document(path, lineno, line, text_key):
    """The document of one .jsonl line ("" for a blank line or empty text)."""
    if not line.strip():
        return ""
    try:
        obj = json.loads(line)
    except ValueError as e:
        raise DataError("%s:%d: not a JSON line: %s" % (path, lineno, e)) from None
    if not isinstance(obj, dict) or not isinstance(obj.get(text_key), str):
        raise DataError("%s:%d: expected a JSON object with a string \"%s\" "
                        "(the document; --text-key names another key)"
                        % (path, lineno, text_key))
    return obj[text_key]


def _plain(c):
    """A character no pre-token boundary can move across (see _cut)."""
    return c.isalnum() or "!" <= c <= "~"


def _cut(text, at):
    """The end of a piece of `text` that ends at `at` or after, or None when
    no boundary is found yet: just after a "\\n" with a visible character
    on both sides ("...x\\nY...").

    The byte-level pre-tokenizer (GPT-2's regex) always ends a pre-token
    before such a lone newline and starts one after it, and BPE merges never
    cross pre-tokens, so encoding the pieces one by one gives exactly the ids
    of encoding the whole text (test/e2e/bpe-shards-train-decode.test checks
    it on tiny Shakespeare) while the tokenizer works on bounded strings."""
    n = len(text)
    p = text.find("\n", at)
    while p != -1 and not (p >= 1 and p + 1 < n and _plain(text[p - 1]) and
                           _plain(text[p + 1])):
        p = text.find("\n", p + 1)
    return None if p == -1 else p + 1
