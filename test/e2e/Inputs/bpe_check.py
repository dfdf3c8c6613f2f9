#!/usr/bin/env python3
"""Checks of test/e2e/bpe-shards-train-decode.test (the project's venv:
Hugging Face tokenizers, numpy).

  bpe_check.py shards PREFIX TOK.json CORPUS
      PREFIX.json names the shards; each is an llm.c .bin (magic 20240520,
      version 1, its token count); train + val shards concatenated are the
      end-of-text id followed by exactly tokenizer.encode(CORPUS) (the
      corpus encoded whole: zero-data's chunked encoding changes no id),
      and decode() of them gives the corpus back;
  bpe_check.py samples SAMPLES.jsonl DECODED.jsonl TOK.json CORPUS [--tokens N]
      SAMPLES.jsonl (a program's --sample-out) holds one sample with N ids,
      all inside the vocabulary; DECODED.jsonl (zero-data decode --jsonl) is
      its text: tokenizer.decode(ids), non-empty, made of the corpus's
      characters, and text -> encode -> decode gives the same text; the
      sample's prompt decodes to a piece of the corpus.
Prints one line per check; exits 1 on the first failure.
"""
import json
import os
import sys

import numpy as np
from tokenizers import Tokenizer


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def read_bin(path):
    raw = open(path, "rb").read()
    header = np.frombuffer(raw, dtype="<i4", count=256)
    if header[0] != 20240520 or header[1] != 1:
        fail("%s: header %s %s is not llm.c's" % (path, header[0], header[1]))
    n = int(header[2])
    if len(raw) != 1024 + 2 * n:
        fail("%s: %d bytes for %d tokens" % (path, len(raw), n))
    return np.frombuffer(raw, dtype="<u2", offset=1024)


def shards(prefix, tok_path, corpus_path):
    tok = Tokenizer.from_file(tok_path)
    info = json.load(open(prefix + ".json"))
    d = os.path.dirname(prefix)
    parts = {s: [read_bin(os.path.join(d, e["file"])) for e in info["shards"][s]]
             for s in ("train", "val")}
    for s in ("train", "val"):
        got = sum(p.size for p in parts[s])
        if got != info["tokens"][s]:
            fail("%s: %d tokens in the shards, %d in PREFIX.json" % (s, got, info["tokens"][s]))
    stream = np.concatenate(parts["train"] + parts["val"]).tolist()
    text = open(corpus_path, encoding="utf-8").read()
    whole = tok.encode(text, add_special_tokens=False).ids
    eot = tok.token_to_id("<|endoftext|>")
    if stream[0] != eot or info["eot_id"] != eot:
        fail("the stream does not start with <|endoftext|> = %s" % eot)
    if stream[1:] != whole:
        first = next(i for i, (a, b) in enumerate(zip(stream[1:], whole)) if a != b) \
            if len(stream) - 1 == len(whole) else "length"
        fail("the shards are not encode(corpus): %d vs %d ids, first difference %s"
             % (len(stream) - 1, len(whole), first))
    if tok.decode(stream[1:]) != text:
        fail("decode(shards) is not the corpus")
    print("shards: %d train + %d val tokens = <|endoftext|> + encode(corpus) (%d ids), "
          "max id %d < vocab %d; decode gives the corpus back"
          % (info["tokens"]["train"], info["tokens"]["val"], len(whole), max(stream),
             tok.get_vocab_size()))


def samples(samples_path, decoded_path, tok_path, corpus_path, want_tokens):
    tok = Tokenizer.from_file(tok_path)
    vocab = tok.get_vocab_size()
    corpus = open(corpus_path, encoding="utf-8").read()
    recs = [json.loads(l) for l in open(samples_path) if l.strip()]
    texts = [json.loads(l) for l in open(decoded_path, encoding="utf-8") if l.strip()]
    if len(recs) != 1 or len(texts) != 1:
        fail("%d samples and %d decoded texts (expected 1 and 1)" % (len(recs), len(texts)))
    rec, dec = recs[0], texts[0]
    ids = rec["ids"]
    if rec.get("type") != "sample" or rec.get("data") != "tokens":
        fail("the sample record is %r" % {k: rec.get(k) for k in ("type", "data")})
    if want_tokens is not None and len(ids) != want_tokens:
        fail("%d ids, expected %d" % (len(ids), want_tokens))
    if not all(isinstance(i, int) and 0 <= i < vocab for i in ids):
        fail("ids outside [0, %d)" % vocab)
    text = dec["text"]
    if dec.get("step") != rec["step"] or text != tok.decode(ids, skip_special_tokens=False):
        fail("zero-data decode's text is not tokenizer.decode(ids)")
    body = text.replace("<|endoftext|>", "")
    if not body.strip():
        fail("the decoded sample is empty")
    alien = sorted(set(body) - set(corpus))
    if alien:
        fail("characters not in the corpus: %r" % alien)
    again = tok.decode(tok.encode(text, add_special_tokens=False).ids, skip_special_tokens=False)
    if again != text:
        fail("decode(encode(text)) != text")
    prompt = tok.decode(rec["prompt"])
    if not prompt or prompt not in corpus:
        fail("the prompt %r is not a piece of the corpus" % prompt[:60])
    print("sample at step %d: %d ids in [0, %d), %d characters of the corpus's alphabet, "
          "text round-trips; its prompt (%d ids) is a piece of the corpus"
          % (rec["step"], len(ids), vocab, len(text), len(rec["prompt"])))


def main(argv):
    if argv[:1] == ["shards"] and len(argv) == 4:
        shards(*argv[1:])
    elif argv[:1] == ["samples"] and len(argv) in (5, 7):
        n = int(argv[6]) if len(argv) == 7 and argv[5] == "--tokens" else None
        samples(*argv[1:5], n)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
