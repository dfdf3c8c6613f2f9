"""zero-data's one kind of user error.

Every failure the user can cause (a missing or empty input, a vocabulary
size out of range, an output that exists, a file that is not a tokenizer,
token ids outside the vocabulary) is a `DataError`; the command line prints
its message on one line and exits 1, with nothing written.
"""


class DataError(Exception):
    """A user error: `str(e)` is the whole message."""
