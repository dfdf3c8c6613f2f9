#!/usr/bin/env python3
"""Checks zero-train's position-keeping JSON parser (jsonpos) against the
standard library's json on the same documents, and its positions and
refusals. Prints one line per group; exits 1 on the first mismatch."""
import json
import sys

sys.path.insert(0, sys.argv[1])
from zero_train import jsonpos  # noqa: E402

SAME = [
    '{}', '[]', '0', '-0', '1.5e-3', '-12E+2', '"a\\"b\\\\c\\/\\b\\f\\n\\r\\t"',
    '"\\u00e9\\ud83d\\ude00"', '"caf\u00e9"', '{"a": [1, 2.0, true, false, null], "b": {"c": "d"}}',
    ' \n\t{ "x" : [ ] , "y" : { } }\n ', '[1e400]', '{"reduce_bucket_size": 2e8}',
]
for doc in SAME:
    got, _ = jsonpos.parse(doc)
    want = json.loads(doc)
    if got != want or type(got) is not type(want):
        sys.exit("mismatch on %r: %r vs json's %r" % (doc, got, want))
print("values: %d documents parse as json.loads parses them" % len(SAME))

doc = '{\n  "a": 1,\n  "zero_optimization": {\n    "stage": 3,\n    "list": [10, {"k": 2}]\n  }\n}'
_, where = jsonpos.parse(doc)
want = {("a",): (2, 3), ("zero_optimization",): (3, 3), ("zero_optimization", "stage"): (4, 5),
        ("zero_optimization", "list"): (5, 5), ("zero_optimization", "list", 0): (5, 14),
        ("zero_optimization", "list", 1, "k"): (5, 19)}
for path, pos in want.items():
    if where.get(path) != pos:
        sys.exit("position of %r: %r, expected %r" % (path, where.get(path), pos))
print("positions: %d keys at their line and column" % len(want))

BAD = {'{"a": 1,}': (1, 8, "trailing comma"), '[1,]': (1, 3, "trailing comma"),
       '{"a": 1, "a": 2}': (1, 10, "duplicate key"), '{a: 1}': (1, 2, "expected a key"),
       '[01]': (1, 3, "expected ',' or ']'"), '[1.]': (1, 2, "digits must follow"),
       '"abc': (1, 1, "unterminated string"), '{"a": NaN}': (1, 7, "unexpected character"),
       '{"a": 1} x': (1, 10, "unexpected text"), '"\\x"': (1, 2, "bad escape"),
       '{"a":\n  "b\n"}': (2, 5, "control character"), '': (1, 1, "end of file")}
for doc, (line, col, words) in BAD.items():
    try:
        jsonpos.parse(doc)
    except jsonpos.JsonError as e:
        if (e.line, e.column) != (line, col) or words not in e.message:
            sys.exit("%r: %d:%d %s, expected %d:%d ...%s..." % (
                doc, e.line, e.column, e.message, line, col, words))
        continue
    sys.exit("%r was accepted" % doc)
print("refusals: %d malformed documents, each at its position" % len(BAD))
