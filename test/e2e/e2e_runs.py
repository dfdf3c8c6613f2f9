"""What the e2e checkers (tensor_parallel.py, pa_offload.py,
reference_gpt.py, import_gpt2.py) share: running
a command, and reading a training run's --metrics JSON lines."""
import json
import subprocess
import sys


def run(cmd, env=None, echo=False):
    """Runs `cmd` and returns its output (stdout and stderr together);
    exits with the command and the tail of its output when it fails.
    `echo`: print the command line first."""
    if echo:
        print("$ " + " ".join(cmd), flush=True)
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, env=env)
    if proc.returncode != 0:
        sys.exit("command failed (%d): %s\n%s" % (proc.returncode, " ".join(cmd),
                                                  proc.stdout[-4000:]))
    return proc.stdout


def records(path):
    """The config record and the step records of a --metrics file; exits
    when either is missing."""
    recs = [json.loads(l) for l in open(path)]
    config = [r for r in recs if r.get("type") == "config"]
    steps = [r for r in recs if r.get("type") == "step"]
    if not config or not steps:
        sys.exit("%s: no config or step records" % path)
    return config[0], steps
