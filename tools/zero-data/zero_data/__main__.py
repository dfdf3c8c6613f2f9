"""zero-data: text -> tokenizer -> llm.c .bin shards, and token ids -> text.

  zero-data train-tokenizer FILES... --vocab-size N -o tok.json
  zero-data shard FILES... --tokenizer tok.json -o DIR/PREFIX
  zero-data decode --tokenizer tok.json [FILE]

Exit status: 0 on success, 1 on a user error (one line on stderr, nothing
written), 2 on an internal error. See docs/data.md.
"""
import argparse
import hashlib
import json
import os
import re
import sys
import tempfile

from .errors import DataError

PROG = "zero-data"

EPILOG = """\
FILES are paths or globs ('data/*.txt', quoted so that zero-data expands
them). A plain file is one document; a .jsonl file holds one document per
line, a JSON object's "text" (--text-key). `shard` writes every document
after an end-of-text token, as llm.c's data scripts do, and cuts the token
stream into PREFIX_train_000000.bin, ... and PREFIX_val_000000.bin, ... (the
last --val-fraction of the tokens) plus PREFIX.json (what was written, and
from what); the training programs read one .bin with --data.

Examples:
  zero-data train-tokenizer input.txt --vocab-size 4096 -o tok.json
  zero-data shard input.txt --tokenizer tok.json -o data/shakespeare
  ./train --data data/shakespeare_train_000000.bin --sample-out samples.jsonl
  zero-data decode --tokenizer tok.json samples.jsonl
"""


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise DataError("%s (see %s --help)" % (message, self.prog))


def _parser():
    p = _Parser(prog=PROG, description="Trains byte-level BPE tokenizers, turns text "
                "into llm.c .bin token shards for the training programs' --data, and "
                "decodes token ids (a program's --sample-out) back to text.",
                epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="store_true", help="print the version")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    t = sub.add_parser("train-tokenizer", help="train a byte-level BPE tokenizer on text",
                       description="Trains a byte-level BPE tokenizer (GPT-2's scheme: "
                       "256 byte tokens, learned merges, an end-of-text token with id 0) "
                       "on FILES and writes its tokenizer.json.")
    t.add_argument("files", nargs="*", metavar="FILES", help="text files or globs")
    t.add_argument("--vocab-size", type=int, required=True, metavar="N",
                   help="vocabulary size, 257..65536 (bytes + merges + end-of-text)")
    t.add_argument("-o", dest="output", required=True, metavar="TOK.json",
                   help="the tokenizer file to write")
    t.add_argument("--min-frequency", type=int, default=2, metavar="K",
                   help="merge only pairs seen at least K times (default 2)")
    t.add_argument("--eot", default=None, metavar="TOKEN",
                   help="the end-of-text token (default <|endoftext|>)")
    t.add_argument("--text-key", default="text", help="the document key of .jsonl lines")
    t.add_argument("--force", action="store_true", help="replace an existing output")

    s = sub.add_parser("shard", help="tokenize text into llm.c .bin shards",
                       description="Tokenizes FILES with a tokenizer file and writes "
                       "llm.c .bin shards (uint16 ids) DIR/PREFIX_train_NNNNNN.bin and "
                       "DIR/PREFIX_val_NNNNNN.bin, and DIR/PREFIX.json.")
    s.add_argument("files", nargs="*", metavar="FILES", help="text files or globs")
    s.add_argument("--tokenizer", required=True, metavar="TOK.json",
                   help="a tokenizers tokenizer.json (or a directory holding one)")
    s.add_argument("-o", dest="output", required=True, metavar="DIR/PREFIX",
                   help="where the shards go (DIR is made when missing)")
    s.add_argument("--shard-tokens", type=int, default=100_000_000, metavar="N",
                   help="tokens per shard (default 100000000, llm.c's)")
    s.add_argument("--val-fraction", type=float, default=0.1, metavar="F",
                   help="the last F of the tokens are the validation split, "
                        "0 <= F < 1 (default 0.1)")
    s.add_argument("--eot", default=None, metavar="TOKEN",
                   help="the end-of-text token (default <|endoftext|>)")
    s.add_argument("--text-key", default="text", help="the document key of .jsonl lines")
    s.add_argument("--force", action="store_true",
                   help="replace existing shards of DIR/PREFIX (and remove stale ones)")

    d = sub.add_parser("decode", help="token ids -> text",
                       description="Decodes token ids with a tokenizer file. FILE "
                       "(default: standard input) holds JSON lines (objects with "
                       "\"ids\", as a training program's --sample-out writes, or "
                       "arrays of ids), whitespace-separated integers, or is an "
                       "llm.c .bin file.")
    d.add_argument("file", nargs="?", default="-", metavar="FILE")
    d.add_argument("--tokenizer", required=True, metavar="TOK.json")
    d.add_argument("-o", dest="output", metavar="OUT",
                   help="write the text to OUT (default: standard output)")
    d.add_argument("--jsonl", action="store_true",
                   help="one JSON object per record: its step (when given) and text")
    d.add_argument("--force", action="store_true", help="replace an existing -o file")
    return p


def _check_new(path, force, what="output"):
    """Refuses an existing `path` unless --force; its directory must exist."""
    if os.path.isdir(path):
        raise DataError("cannot write %s '%s': it is a directory" % (what, path))
    if os.path.lexists(path) and not force:
        raise DataError("%s '%s' exists (pass --force to replace it)" % (what, path))
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise DataError("cannot write '%s': directory '%s' does not exist" % (path, directory))


def _not_an_input(path, files):
    for f in files:
        if os.path.exists(path) and os.path.samefile(path, f):
            raise DataError("output '%s' is the input file '%s'" % (path, f))


def train_tokenizer(args):
    from . import inputs, shards, tok
    eot = args.eot or tok.EOT
    tok.check_vocab_size(args.vocab_size, eot)
    if args.min_frequency < 1:
        raise DataError("--min-frequency must be at least 1")
    files = inputs.expand(args.files)
    inputs.check_files(files)
    _check_new(args.output, args.force)
    _not_an_input(args.output, files)
    # The text is streamed into the trainer; a bad input found on the way
    # (not UTF-8, a bad .jsonl line) stops it before anything is written.
    stats, failed = {}, []

    def texts():
        try:
            for _, piece in inputs.pieces(files, args.text_key, stats=stats):
                yield piece
        except DataError as e:
            failed.append(e)
    try:
        tk = tok.train_bpe(texts(), args.vocab_size, args.min_frequency, eot)
    except Exception:
        if failed:
            raise failed[0] from None
        raise
    if failed:
        raise failed[0]
    ndocs, chars = stats["documents"], stats["characters"]
    text = tk.to_str(pretty=True)
    shards.atomic_write(args.output, lambda f: f.write(text.encode("utf-8")))
    n = tok.vocab_size(tk)
    note = "" if n == args.vocab_size else (
        " (fewer than --vocab-size %d: no more pairs occur %d times)"
        % (args.vocab_size, args.min_frequency))
    print("%s: wrote %s: byte-level BPE, vocabulary %d%s = 256 bytes + %d merges + %s "
          "(id %d); trained on %d document%s, %d characters"
          % (PROG, args.output, n, note, n - 257, eot, tk.token_to_id(eot),
             ndocs, "" if ndocs == 1 else "s", chars), file=sys.stderr)
    return 0


_SHARD = re.compile(r"_(train|val)_(\d{6})\.bin$")


def _existing_shards(prefix):
    directory = os.path.dirname(os.path.abspath(prefix))
    base = os.path.basename(prefix)
    if not os.path.isdir(directory):
        return []
    out = []
    for n in sorted(os.listdir(directory)):
        if n.startswith(base) and _SHARD.fullmatch(n[len(base):]) is not None:
            out.append(os.path.join(directory, n))
    return out


def _sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def shard(args):
    import numpy as np
    from . import inputs, shards, tok
    eot = args.eot or tok.EOT
    if args.shard_tokens < 1:
        raise DataError("--shard-tokens must be at least 1")
    if not 0 <= args.val_fraction < 1:
        raise DataError("--val-fraction %g must be in [0, 1)" % args.val_fraction)
    files = inputs.expand(args.files)
    prefix = args.output
    if not os.path.basename(prefix):
        raise DataError("-o '%s' names a directory; give DIR/PREFIX (the shards are "
                        "PREFIX_train_000000.bin, ...)" % prefix)
    directory = os.path.dirname(os.path.abspath(prefix))
    if os.path.exists(directory) and not os.path.isdir(directory):
        raise DataError("cannot write '%s': '%s' is not a directory" % (prefix, directory))
    inputs.check_files(files)
    tk = tok.load(args.tokenizer)
    tok_file = os.path.join(args.tokenizer, "tokenizer.json") \
        if os.path.isdir(args.tokenizer) else args.tokenizer
    vocab = tok.vocab_size(tk)
    if vocab > tok.MAX_VOCAB:
        raise DataError("--tokenizer '%s' has %d tokens: .bin shards hold uint16 ids "
                        "(at most %d tokens)" % (tok_file, vocab, tok.MAX_VOCAB))
    eot_id = tok.eot_id(tk, eot, tok_file)
    manifest = prefix + ".json"
    existing = _existing_shards(prefix)
    if not args.force:
        for p in [manifest] + existing:
            if os.path.lexists(p):
                raise DataError("'%s' exists (pass --force to replace the shards of %s)"
                                % (p, prefix))
    for p in [manifest] + existing:
        _not_an_input(p, files)
    if os.path.isdir(manifest):
        raise DataError("cannot write '%s': it is a directory" % manifest)

    # Encode the documents into a temporary token file next to the shards
    # (2 bytes per token; the text is streamed), then cut it into shards:
    # the validation split is the stream's end, known only at the end. A
    # literal "<|endoftext|>" in the text stays text. On a bad input found
    # on the way nothing stays behind (not even a directory made for it).
    tk.encode_special_tokens = True
    made_dir = not os.path.isdir(directory)
    os.makedirs(directory, exist_ok=True)
    fd, stream_path = tempfile.mkstemp(prefix=".%s.tokens." % os.path.basename(prefix),
                                       dir=directory)
    try:
        stats = {}
        with os.fdopen(fd, "wb") as f:
            batch = []

            def flush():  # encodes the batch's pieces in parallel, in order
                encs = tk.encode_batch_fast([t for _, t in batch], add_special_tokens=False)
                for (starts, _), enc in zip(batch, encs):
                    ids = np.asarray(enc.ids, dtype="<u2")
                    (np.concatenate(([eot_id], ids)).astype("<u2") if starts
                     else ids).tofile(f)
                batch.clear()
            for starts, text in inputs.pieces(files, args.text_key, stats=stats):
                batch.append((starts, text))
                if len(batch) >= 64 or sum(len(t) for _, t in batch) >= 1 << 20:
                    flush()
            flush()
        ndocs, chars = stats["documents"], stats["characters"]
        total = os.path.getsize(stream_path) // 2
        stream = np.memmap(stream_path, dtype="<u2", mode="r") if total else \
            np.zeros(0, dtype="<u2")
        n_val = int(np.ceil(total * args.val_fraction)) if args.val_fraction > 0 else 0
        n_train = total - n_val
        if n_train < 1:
            raise DataError("the text gives %d tokens: none are left for training with "
                            "--val-fraction %g" % (total, args.val_fraction))
        written = {"train": [], "val": []}
        for split, lo, hi in (("train", 0, n_train), ("val", n_train, total)):
            for i, start in enumerate(range(lo, hi, args.shard_tokens)):
                chunk = stream[start:min(hi, start + args.shard_tokens)]
                path = "%s_%s_%06d.bin" % (prefix, split, i)
                shards.write_bin(path, chunk)
                written[split].append({"file": os.path.basename(path),
                                       "tokens": int(chunk.size)})
        del stream
    except BaseException:
        os.unlink(stream_path)
        if made_dir:
            try:
                os.rmdir(directory)
            except OSError:
                pass
        raise
    os.unlink(stream_path)
    keep = {os.path.join(directory, w["file"]) for s in written.values() for w in s}
    for p in existing:  # --force: no stale shard of an earlier run stays
        if p not in keep:
            os.unlink(p)
    info = {
        "format": "llm.c .bin: 256 int32 header (magic %d, version %d, tokens), "
                  "uint16 ids" % (shards.MAGIC, shards.VERSION),
        "tokenizer": os.path.abspath(tok_file),
        "tokenizer_sha256": _sha256(tok_file),
        "vocab_size": vocab,
        "eot": eot,
        "eot_id": eot_id,
        "documents": ndocs,
        "characters": chars,
        "tokens": {"train": int(n_train), "val": int(n_val)},
        "val_fraction": args.val_fraction,
        "shard_tokens": args.shard_tokens,
        "shards": written,
        "inputs": [os.path.abspath(f) for f in files],
    }
    shards.atomic_write(manifest, lambda f: f.write(
        (json.dumps(info, indent=1) + "\n").encode("utf-8")))
    print("%s: wrote %d train shard%s (%d tokens) and %d val shard%s (%d tokens) as %s_*.bin, "
          "and %s: %d document%s, %d characters, %.2f characters/token, vocabulary %d"
          % (PROG, len(written["train"]), "" if len(written["train"]) == 1 else "s", n_train,
             len(written["val"]), "" if len(written["val"]) == 1 else "s", n_val, prefix,
             manifest, ndocs, "" if ndocs == 1 else "s", chars, chars / max(1, total),
             vocab), file=sys.stderr)
    return 0


def _check_id(i, vocab, where):
    if isinstance(i, bool) or not isinstance(i, int):
        raise DataError("%s: %s is not a token id (an integer)" % (where, json.dumps(i)))
    if not 0 <= i < vocab:
        raise DataError("%s: token id %d is outside the tokenizer's vocabulary "
                        "(%d tokens, ids 0..%d)" % (where, i, vocab, vocab - 1))


def _records(name, text, vocab):
    """[(step or None, ids, line)] of a decode input (see the decode help)."""
    body = text.lstrip()
    if not body:
        raise DataError("%s holds no token ids" % name)
    records = []
    if body[0] in "{[":
        for lineno, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            where = "%s:%d" % (name, lineno)
            try:
                obj = json.loads(line)
            except ValueError as e:
                raise DataError("%s: not a JSON line: %s" % (where, e)) from None
            step = None
            if isinstance(obj, dict):
                if obj.get("data") == "bytes":
                    raise DataError("%s: the sample is of byte-level data (the program "
                                    "trained on a text file): its ids are bytes, not the "
                                    "tokenizer's (the program printed it as text)" % where)
                if "ids" not in obj:
                    raise DataError("%s: the JSON object has no \"ids\" (a list of "
                                    "token ids)" % where)
                step = obj.get("step")
                obj = obj["ids"]
            if not isinstance(obj, list):
                raise DataError("%s: expected a list of token ids" % where)
            records.append((step, obj, where))
    else:
        ids = []
        for lineno, line in enumerate(text.splitlines(), start=1):
            for word in line.split():
                try:
                    ids.append(int(word, 10))
                except ValueError:
                    raise DataError("%s:%d: '%s' is not a token id (an integer)"
                                    % (name, lineno, word)) from None
                _check_id(ids[-1], vocab, "%s:%d" % (name, lineno))
        records.append((None, ids, name))
    return records


def decode(args):
    from . import shards, tok
    if args.output:
        _check_new(args.output, args.force)
        if args.file != "-":
            _not_an_input(args.output, [args.file])
    tk = tok.load(args.tokenizer)
    vocab = tok.vocab_size(tk)
    name = "standard input" if args.file == "-" else args.file
    if args.file.endswith(".bin"):
        records = [(None, shards.read_bin(args.file).tolist(), name)]
    else:
        if args.file == "-":
            text = sys.stdin.read()
        else:
            if not os.path.isfile(args.file):
                raise DataError("cannot read '%s': %s" % (args.file, "it is a directory"
                                if os.path.isdir(args.file) else "no such file"))
            try:
                with open(args.file, encoding="utf-8") as f:
                    text = f.read()
            except (OSError, UnicodeDecodeError) as e:
                raise DataError("cannot read '%s': %s" % (args.file, getattr(
                    e, "strerror", None) or e)) from None
        records = _records(name, text, vocab)
    for _, ids, where in records:
        for i in ids:
            _check_id(i, vocab, where)
    out = []
    for step, ids, _ in records:
        text = tk.decode(ids, skip_special_tokens=False)
        if args.jsonl:
            rec = {"step": step} if step is not None else {}
            rec.update(tokens=len(ids), text=text)
            out.append(json.dumps(rec, ensure_ascii=False) + "\n")
        elif step is not None:
            out.append("sample (step %s, %d tokens):\n%s\n--- end of sample ---\n"
                       % (step, len(ids), text))
        else:
            out.append(text if len(records) == 1 else text + "\n")
    data = "".join(out)
    if args.output:
        shards.atomic_write(args.output, lambda f: f.write(data.encode("utf-8")))
    else:
        sys.stdout.write(data)
        sys.stdout.flush()
    return 0


def main(argv):
    parser = _parser()
    args = parser.parse_args(argv)
    if args.version:
        print("%s (Zero) (run through build/bin/zero-data for the version)" % PROG)
        return 0
    if args.command is None:
        raise DataError("no command given (train-tokenizer, shard or decode)")
    return {"train-tokenizer": train_tokenizer, "shard": shard,
            "decode": decode}[args.command](args)


def run():
    try:
        return main(sys.argv[1:])
    except DataError as e:
        sys.stderr.write("%s: error: %s\n" % (PROG, e))
        return 1
    except KeyboardInterrupt:
        sys.stderr.write("%s: interrupted\n" % PROG)
        return 130
    except BrokenPipeError:
        return 1
    except Exception as e:  # noqa: BLE001 - last resort: never a traceback
        sys.stderr.write("%s: internal error: %s: %s (please report it with the "
                         "command line)\n" % (PROG, type(e).__name__, e))
        if os.environ.get("ZERO_DATA_DEBUG"):
            raise
        return 2


if __name__ == "__main__":
    sys.exit(run())
