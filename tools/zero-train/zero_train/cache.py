"""The compile cache, and building an entry once per launch.

An entry is a directory CACHE/KEY (KEY: a hash of what went into it) that
appears complete or not at all: it is built in CACHE/KEY.tmp.* and renamed.

Under a launcher every rank runs zero-train at once. The first rank to take
the lock CACHE/KEY.lock (flock) builds the entry; the others block on the
lock and then find it built, so the work happens once per machine that
shares the cache directory (once per host when each host has its own). If
the build fails, the builder leaves CACHE/KEY.failed naming this launch, and
every rank that takes the lock after it fails at once instead of building
again (a later launch tries anew).
"""

import contextlib
import fcntl
import json
import os
import shutil
import tempfile

__all__ = ["BuildFailed", "ensure", "launch_id"]


class BuildFailed(Exception):
    """The build failed (`here`: on this process, which printed why)."""

    def __init__(self, message, here):
        super().__init__(message)
        self.message = message
        self.here = here


def launch_id():
    """An identifier shared by the ranks of one launch."""
    for var in ("PMIX_NAMESPACE", "OMPI_MCA_ess_base_jobid", "PMI_KVSNAME"):
        v = os.environ.get(var)
        if v:
            return "%s=%s" % (var, v)
    if os.environ.get("SLURM_JOB_ID"):
        return "slurm=%s.%s" % (os.environ["SLURM_JOB_ID"], os.environ.get("SLURM_STEP_ID", ""))
    return "ppid=%d" % os.getppid()


@contextlib.contextmanager
def _locked(path):
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def ensure(cache, key, build):
    """Returns (entry directory, built here?). `build(tmpdir)` fills a fresh
    directory or raises BuildFailed (having printed why)."""
    entry = os.path.join(cache, key)
    if os.path.isdir(entry):
        return entry, False
    os.makedirs(cache, exist_ok=True)
    failed = entry + ".failed"
    me = launch_id()
    with _locked(entry + ".lock"):
        if os.path.isdir(entry):
            return entry, False
        try:
            with open(failed) as f:
                if json.load(f).get("launch") == me:
                    raise BuildFailed("the build failed on another rank of this launch "
                                      "(that rank printed why)", here=False)
        except (OSError, ValueError):
            pass
        # Leftovers of builders that were killed (we hold the lock: none is running).
        prefix = key + ".tmp."
        for name in os.listdir(cache):
            if name.startswith(prefix):
                shutil.rmtree(os.path.join(cache, name), ignore_errors=True)
        tmp = tempfile.mkdtemp(prefix=prefix, dir=cache)
        try:
            build(tmp)
        except BaseException as e:
            shutil.rmtree(tmp, ignore_errors=True)
            if isinstance(e, BuildFailed):
                with open(failed + ".new", "w") as f:
                    json.dump({"launch": me, "message": e.message}, f)
                os.replace(failed + ".new", failed)
            raise
        os.rename(tmp, entry)
        with contextlib.suppress(OSError):
            os.unlink(failed)
        return entry, True
