"""The importer's one kind of user error, and where in the user's code it is.

Every failure the user can cause (a bad path, config or entry point, an op
or construct without a train-dialect mapping) is an `ImportFailure`; the
command line prints its message on one line and exits 1.
"""
import os
import re


class ImportFailure(Exception):
    """A user error: `str(e)` is the whole message."""


_FRAME = re.compile(r'^\s*File "([^"]+)", line (\d+), in (\S+)\s*$')

# Frames in these directories are PyTorch's machinery, not the model's code.
_MACHINERY = (os.sep + "torch" + os.sep, os.sep + "zero_import" + os.sep)


def _frames(text):
    """(file, line, function, code) of each frame of a printed stack."""
    lines = text.splitlines()
    out = []
    for i, line in enumerate(lines):
        m = _FRAME.match(line)
        if m:
            code = lines[i + 1].strip() if i + 1 < len(lines) else ""
            if _FRAME.match(code):
                code = ""
            out.append((m.group(1), int(m.group(2)), m.group(3), code))
    return out


def _pick(frames):
    """The innermost frame outside PyTorch and the importer, else the last."""
    for f in reversed(frames):
        if not any(d in f[0] for d in _MACHINERY):
            return f
    return frames[-1] if frames else None


def format_frame(frame):
    path, line, fn, code = frame
    text = "%s:%d (in %s)" % (path, line, fn)
    if code:
        text += ": `%s`" % code
    return text


def node_source(node):
    """`file:line (in fn): `code`` of an FX node, from torch.export's
    stack trace (meta["stack_trace"]); "unknown source line" without one."""
    trace = node.meta.get("stack_trace") if node is not None else None
    frame = _pick(_frames(trace)) if trace else None
    return format_frame(frame) if frame else "unknown source line"


def exception_source(exc):
    """The user's source line of an exception raised while tracing: from the
    traceback objects, else from a stack printed into the message."""
    frames = []
    tb = exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        frames.append((code.co_filename, tb.tb_lineno, code.co_name, ""))
        tb = tb.tb_next
    printed = _frames(str(exc))
    frame = _pick(printed) if printed else None
    if frame is None or any(d in frame[0] for d in _MACHINERY):
        frame = _pick(frames)
    if frame is None:
        return "unknown source line"
    if not frame[3]:
        try:
            with open(frame[0]) as f:
                code = f.read().splitlines()[frame[1] - 1].strip()
            frame = frame[:3] + (code,)
        except (OSError, IndexError, UnicodeDecodeError):
            pass
    return format_frame(frame)
