"""Tokenizers: training a byte-level BPE, and loading a tokenizer file.

Both use Hugging Face `tokenizers` (pinned in requirements.txt). A trained
tokenizer is GPT-2's scheme on the user's text: the 256 byte tokens, the
learned merges, and one special end-of-text token (id 0), saved as a
tokenizer.json that `tokenizers.Tokenizer.from_file` and transformers'
`PreTrainedTokenizerFast(tokenizer_file=...)` read.
"""

import os

from .errors import DataError

__all__ = ["EOT", "MIN_VOCAB", "MAX_VOCAB", "train_bpe", "load", "eot_id"]

EOT = "<|endoftext|>"
MIN_VOCAB = 257    # 256 byte tokens + the end-of-text token
MAX_VOCAB = 65536  # llm.c shards hold uint16 ids


def check_vocab_size(n, eot=EOT):
    if not MIN_VOCAB <= n <= MAX_VOCAB:
        raise DataError("--vocab-size %d is out of range [%d, %d]: a byte-level BPE "
                        "needs the 256 byte tokens and %s, and .bin shards hold "
                        "uint16 token ids" % (n, MIN_VOCAB, MAX_VOCAB, eot))


def train_bpe(texts, vocab_size, min_frequency, eot=EOT):
    """A byte-level BPE tokenizer trained on the strings of `texts` (an
    iterable): vocabulary `vocab_size` at most (fewer when the text has
    fewer pairs seen `min_frequency` times), `eot` its id 0."""
    from tokenizers import ByteLevelBPETokenizer
    tok = ByteLevelBPETokenizer(add_prefix_space=False)
    tok.train_from_iterator(texts, vocab_size=vocab_size, min_frequency=min_frequency,
                            special_tokens=[eot], show_progress=False)
    return tok._tokenizer  # the tokenizers.Tokenizer the wrapper builds


def load(path):
    """The tokenizers.Tokenizer of `path` (a tokenizer.json, or a directory
    holding one, as a Hugging Face model directory does)."""
    from tokenizers import Tokenizer
    file = os.path.join(path, "tokenizer.json") if os.path.isdir(path) else path
    if not os.path.exists(file):
        if os.path.isdir(path):
            raise DataError("--tokenizer '%s' is a directory without tokenizer.json" % path)
        raise DataError("--tokenizer '%s': no such file (zero-data downloads nothing: "
                        "give a tokenizer.json, or a directory holding one)" % path)
    try:
        tok = Tokenizer.from_file(file)
    except Exception as e:  # noqa: BLE001 - tokenizers raises plain Exception
        why = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise DataError("--tokenizer '%s' is not a tokenizer file (a Hugging Face "
                        "tokenizers tokenizer.json, e.g. from zero-data "
                        "train-tokenizer): %s" % (file, why)) from None
    if tok.get_vocab_size(with_added_tokens=True) < 1:
        raise DataError("--tokenizer '%s' has an empty vocabulary" % file)
    return tok


def vocab_size(tok):
    """Ids 0..vocab_size-1: the model's vocabulary and added tokens."""
    return tok.get_vocab_size(with_added_tokens=True)


def eot_id(tok, eot, path):
    i = tok.token_to_id(eot)
    if i is None:
        raise DataError("--tokenizer '%s' has no end-of-text token '%s' (name its "
                        "token with --eot)" % (path, eot))
    return i
