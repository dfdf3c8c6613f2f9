"""zero-data: text -> byte-level BPE tokenizer -> llm.c .bin token shards,
and token ids -> text. See docs/data.md; the command line is __main__.py."""
