"""A JSON parser that remembers where each value is (line, column).

The standard library's json module returns values only; a config error has
to name the line of the key it is about, so this parser (RFC 8259, strict:
no comments, no trailing commas, no NaN) returns the value together with a
table from key path to position:

    value, where = parse(text)
    where[("zero_optimization", "stage")]  ->  (12, 5)   # 1-based line, column

A path is the tuple of object keys and array indices leading to a value;
() is the document. Objects become dicts (insertion order), arrays lists,
numbers int (no fraction or exponent) or float. A duplicate key is an error
(json.load would silently keep the last one).
"""

__all__ = ["JsonError", "parse"]


class JsonError(Exception):
    """A syntax error at (line, column), both 1-based."""

    def __init__(self, message, line, column):
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column


_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f",
            "n": "\n", "r": "\r", "t": "\t"}


class _Parser:
    def __init__(self, text):
        self.s = text
        self.i = 0
        self.where = {}

    def pos(self, i=None):
        i = self.i if i is None else i
        line = self.s.count("\n", 0, i) + 1
        column = i - (self.s.rfind("\n", 0, i) + 1) + 1
        return line, column

    def fail(self, message, i=None):
        line, column = self.pos(i)
        raise JsonError(message, line, column)

    def ws(self):
        s, i = self.s, self.i
        while i < len(s) and s[i] in " \t\r\n":
            i += 1
        self.i = i

    def peek(self):
        return self.s[self.i] if self.i < len(self.s) else ""

    def value(self, path):
        self.ws()
        self.where.setdefault(path, self.pos())
        c = self.peek()
        if c == "{":
            return self.obj(path)
        if c == "[":
            return self.arr(path)
        if c == '"':
            return self.string()
        if c == "-" or c.isdigit():
            return self.number()
        for word, val in (("true", True), ("false", False), ("null", None)):
            if self.s.startswith(word, self.i):
                self.i += len(word)
                return val
        if not c:
            self.fail("unexpected end of file (a value is missing)")
        self.fail("unexpected character %r (expected a value)" % c)

    def obj(self, path):
        self.i += 1
        out = {}
        self.ws()
        if self.peek() == "}":
            self.i += 1
            return out
        while True:
            self.ws()
            if self.peek() != '"':
                self.fail("expected a key in double quotes")
            key_at = self.pos()
            key = self.string()
            if key in out:
                self.fail("duplicate key %r" % key, self.i - len(key) - 2)
            self.where[path + (key,)] = key_at
            self.ws()
            if self.peek() != ":":
                self.fail("expected ':' after the key %r" % key)
            self.i += 1
            out[key] = self.value(path + (key,))
            self.ws()
            c = self.peek()
            if c == ",":
                comma = self.i
                self.i += 1
                self.ws()
                if self.peek() == "}":
                    self.fail("trailing comma before '}'", comma)
                continue
            if c == "}":
                self.i += 1
                return out
            self.fail("expected ',' or '}' in the object")

    def arr(self, path):
        self.i += 1
        out = []
        self.ws()
        if self.peek() == "]":
            self.i += 1
            return out
        while True:
            out.append(self.value(path + (len(out),)))
            self.ws()
            c = self.peek()
            if c == ",":
                comma = self.i
                self.i += 1
                self.ws()
                if self.peek() == "]":
                    self.fail("trailing comma before ']'", comma)
                continue
            if c == "]":
                self.i += 1
                return out
            self.fail("expected ',' or ']' in the array")

    def string(self):
        s = self.s
        start = self.i
        self.i += 1
        parts = []
        while True:
            j = self.i
            while j < len(s) and s[j] not in '"\\' and s[j] >= " ":
                j += 1
            parts.append(s[self.i:j])
            self.i = j
            if j >= len(s):
                self.fail("unterminated string", start)
            c = s[j]
            if c == '"':
                self.i = j + 1
                return "".join(parts)
            if c < " ":
                self.fail("control character in a string (escape it)")
            esc = s[j + 1:j + 2]
            if esc in _ESCAPES:
                parts.append(_ESCAPES[esc])
                self.i = j + 2
            elif esc == "u":
                hexd = s[j + 2:j + 6]
                if len(hexd) != 4 or any(h not in "0123456789abcdefABCDEF" for h in hexd):
                    self.fail("bad \\u escape")
                code = int(hexd, 16)
                self.i = j + 6
                if 0xD800 <= code < 0xDC00 and s.startswith("\\u", self.i):
                    low = int(s[self.i + 2:self.i + 6] or "0", 16)
                    if 0xDC00 <= low < 0xE000:
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                        self.i += 6
                parts.append(chr(code))
            else:
                self.fail("bad escape \\%s in a string" % esc)

    def number(self):
        s = self.s
        start = self.i
        j = start
        if s[j:j + 1] == "-":
            j += 1
        if s[j:j + 1] == "0":
            j += 1
        elif s[j:j + 1].isdigit():
            while j < len(s) and s[j].isdigit():
                j += 1
        else:
            self.fail("bad number", start)
        is_float = False
        if s[j:j + 1] == ".":
            is_float = True
            j += 1
            if not s[j:j + 1].isdigit():
                self.fail("bad number (digits must follow '.')", start)
            while j < len(s) and s[j].isdigit():
                j += 1
        if s[j:j + 1] in ("e", "E"):
            is_float = True
            j += 1
            if s[j:j + 1] in ("+", "-"):
                j += 1
            if not s[j:j + 1].isdigit():
                self.fail("bad number (digits must follow the exponent)", start)
            while j < len(s) and s[j].isdigit():
                j += 1
        self.i = j
        text = s[start:j]
        return float(text) if is_float else int(text)


def parse(text):
    """Returns (value, where) for a JSON document; raises JsonError."""
    p = _Parser(text)
    value = p.value(())
    p.ws()
    if p.i != len(text):
        p.fail("unexpected text after the JSON value")
    return value, p.where
