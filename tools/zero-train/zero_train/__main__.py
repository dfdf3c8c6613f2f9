"""zero-train CONFIG: compile (once, cached) and run a training program.

    zero-train CONFIG [--world-size N] [--dry-run | --compile-only] [-- PROGRAM FLAGS...]
    mpirun -np N zero-train CONFIG ...

CONFIG (.json or .toml) holds DeepSpeed's keys and Zero's sections (model,
data, run, zero_compile); see docs/zero-train.md. zero-train prints what it
applied, resolved ("auto") and ignored, compiles the program for the launch's
world size into the cache (a relaunch with the same model and compile
settings does not recompile), and executes it in its own place. A config
problem is one line naming the key and its position, exit status 1, before
anything is compiled or written.
"""

import argparse
import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import time

from . import cache as cachemod
from .config import ConfigError, load
from .model import facts_from_mlir
from .resolve import resolve

PROG = "zero-train"
STARTED = time.time()


def launch_rank():
    for var in ("OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"):
        v = os.environ.get(var)
        if v and v.isdigit():
            if var == "SLURM_PROCID" and not os.environ.get("SLURM_STEP_NUM_TASKS"):
                continue
            return int(v)
    return 0


def launcher_world():
    """(N, variable) from the launcher's environment, or (None, None)."""
    for var in ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_STEP_NUM_TASKS"):
        v = os.environ.get(var)
        if v and v.isdigit() and int(v) >= 1:
            return int(v), var
    return None, None


class Tools:
    """zero-model, zero-compile and zero-import: next to zero-train."""

    def __init__(self):
        here = os.environ.get("ZERO_TRAIN_BIN") or os.path.dirname(os.path.abspath(sys.argv[0]))
        self.bin = here

    def path(self, name):
        return os.path.join(self.bin, name)

    def need(self, name):
        p = self.path(name)
        if not os.access(p, os.X_OK):
            raise SystemExit(fail("%s is not at %s (zero-train runs the tools next to it)" % (
                name, p)))
        return p


def say(text, rank0=True):
    if not rank0 or launch_rank() == 0:
        print("%s: %s" % (PROG, text), flush=True)


def fail(text):
    print("%s: error: %s" % (PROG, text), file=sys.stderr, flush=True)
    return 1


def sha(*parts):
    h = hashlib.sha256()
    for p in parts:
        h.update(p if isinstance(p, bytes) else str(p).encode())
        h.update(b"\0")
    return h.hexdigest()


def file_identity(path):
    try:
        st = os.stat(path)
        return "%s:%d:%d" % (path, st.st_size, st.st_mtime_ns)
    except OSError:
        return "%s:missing" % path


def compiler_identity(tools, target, cxx):
    """What a compiled program depends on besides its model and flags:
    zero-compile itself, the runtime it links (zero-compile --version names
    it), the host compiler and the machine."""
    zc = tools.need("zero-compile")
    ident = [file_identity(zc), target, os.uname().machine, cxx or "",
             os.environ.get("ZERO_CXX", ""), os.environ.get("CXX", "")]
    try:
        out = subprocess.run([zc, "--version"], capture_output=True, text=True,
                             timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        out = ""
    ident.append(out)
    for line in out.splitlines():
        _, _, value = line.partition(":")
        value = value.strip()
        if value.startswith("/") and os.path.exists(value):
            ident.append(file_identity(value))
    return ident


def source_identity(path):
    """The files of an import source (a .py file or a Hugging Face dir)."""
    if os.path.isfile(path):
        with open(path, "rb") as f:
            return [hashlib.sha256(f.read()).hexdigest()]
    if not os.path.isdir(path):
        return [path]
    out = []
    for root, dirs, files in os.walk(path):
        dirs.sort()
        for n in sorted(files):
            out.append(file_identity(os.path.join(root, n)))
    return out


def run_tool(argv, what):
    """Runs a tool; on failure raises BuildFailed after printing its output."""
    proc = subprocess.run(argv, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout + proc.stderr)
        msg = "%s failed (exit status %d): %s" % (what, proc.returncode, shlex.join(argv))
        fail(msg)
        raise cachemod.BuildFailed(msg, here=True)
    return proc


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog=PROG, description=__doc__.split("\n\n")[0],
        epilog="flags after -- go to the program (e.g. -- --print-config); under a launcher\n"
               "(mpirun -np N zero-train CONFIG) N is the launcher's; the keys, \"auto\" and\n"
               "the cache: docs/zero-train.md",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("config", nargs="?", help="JSON or TOML config")
    ap.add_argument("--world-size", type=int, help="N when not under a launcher "
                    "(default: run.world_size, else 1; N > 1 runs mpirun -np N)")
    ap.add_argument("--dry-run", action="store_true",
                    help="print the mapping and the commands; compile and run nothing")
    ap.add_argument("--compile-only", action="store_true",
                    help="compile (or find in the cache) and print the program's path")
    ap.add_argument("--version", action="store_true", help="print the version")
    argv = list(sys.argv[1:] if argv is None else argv)
    extra = []
    if "--" in argv:
        i = argv.index("--")
        argv, extra = argv[:i], argv[i + 1:]
    args = ap.parse_args(argv)
    tools = Tools()
    if args.version:
        zc = tools.path("zero-compile")
        ver = ""
        if os.access(zc, os.X_OK):
            ver = subprocess.run([zc, "--version"], capture_output=True, text=True).stdout
        first = ver.splitlines()[0] if ver else ""
        if not first.startswith("zero-compile (Zero) "):
            return fail("cannot tell the version: no zero-compile at %s" % zc)
        print("zero-train (Zero) %s" % first[len("zero-compile (Zero) "):])
        print("Python: %s" % sys.version.split()[0])
        return 0
    if not args.config:
        ap.print_usage(sys.stderr)
        return fail("a config file is required")
    if args.world_size is not None and args.world_size < 1:
        return fail("--world-size must be at least 1")
    rank0 = launch_rank() == 0

    # 1. The config, checked whole before anything runs.
    try:
        cfg = load(args.config)
    except ConfigError as e:
        if rank0:
            fail(ConfigErrorText(args.config, e))
        return 1
    try:
        return run(cfg, args, extra, tools, rank0)
    except ConfigError as e:
        if rank0:
            fail(cfg.message(e))
        return 1
    except cachemod.BuildFailed as e:
        if not e.here and rank0:
            fail(e.message)
        return 1
    except OSError as e:
        fail("%s%s" % (e.filename + ": " if e.filename else "", e.strerror or e))
        return 1


def ConfigErrorText(filename, e):
    from .config import Config
    return Config(filename, {}, {}).message(e)


def world_size(cfg, args):
    n, var = launcher_world()
    run_ws = cfg.data.get("run", {}).get("world_size") if isinstance(cfg.data.get("run"), dict) \
        else None
    if n is not None:
        if args.world_size is not None and args.world_size != n:
            raise SystemExit(fail("--world-size %d, but the launcher started %d ranks (%s)" % (
                args.world_size, n, var)))
        if isinstance(run_ws, int) and run_ws != n:
            raise ConfigError(("run", "world_size"), "%d, but the launcher started %d ranks (%s)"
                              % (run_ws, n, var))
        return n, var, True
    if args.world_size is not None:
        return args.world_size, "--world-size", False
    if isinstance(run_ws, int) and not isinstance(run_ws, bool) and run_ws >= 1:
        return run_ws, "run.world_size", False
    return 1, "no launcher", False


def run(cfg, args, extra, tools, rank0):
    world, world_src, launched = world_size(cfg, args)
    # Validate with what can be known without writing anything: the model
    # text of a zero-model or mlir source.
    plan = resolve(cfg, world, world_src, None, False)
    kind = plan.model["kind"]
    model_text = None
    if kind == "mlir":
        with open(plan.model["mlir"], encoding="utf-8", errors="replace") as f:
            model_text = f.read()
    elif kind == "zero_model":
        zm = tools.need("zero-model")
        proc = subprocess.run([zm] + plan.model_args, capture_output=True, text=True)
        if proc.returncode != 0:
            msg = (proc.stderr.strip().splitlines() or ["zero-model failed"])[-1]
            msg = msg.replace("zero-model: error: ", "")
            raise ConfigError(("model",), "zero-model rejects it: %s" % msg)
        model_text = proc.stdout
    facts = facts_from_mlir(model_text) if model_text is not None else None
    if facts is not None:
        plan = resolve(cfg, world, world_src, facts, kind == "mlir")
    cache_dir = plan.cache_dir or os.environ.get("ZERO_TRAIN_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
        "zero-train")

    if rank0:
        say("config %s: world size %d (%s), model %s (%s)" % (
            cfg.filename, world, world_src, plan.model_name, kind))
        if facts is not None:
            say("model: %d parameters, micro-batch %s x %s tokens, width %s, %s" % (
                facts.num_params, facts.batch, facts.seq, facts.hidden, facts.dtype))

    # 2. An import source becomes MLIR in the cache (once).
    import_dir = None
    if kind == "import":
        zi = tools.need("zero-import")
        ikey = "import-" + sha("import", plan.model["import"],
                               *source_identity(plan.model["import"]), *plan.model_args,
                               *source_identity(os.path.realpath(zi)))[:24]
        if args.dry_run:
            ipath = os.path.join(cache_dir, ikey)
            if not os.path.isdir(ipath):
                for n in plan.notes:
                    say(n)
                say("dry run: zero-import %s would run first (the width-derived \"auto\" "
                    "values wait for it)" % shlex.join([plan.model["import"]] + plan.model_args))
                return 0

        def build_import(tmp):
            say("importing %s (zero-import)" % plan.model["import"], rank0=False)
            run_tool([zi, plan.model["import"], "-o", os.path.join(tmp, "model.mlir")]
                     + plan.model_args, "zero-import")

        import_dir, _ = ensure(cfg, plan, cache_dir, ikey, build_import)
        with open(os.path.join(import_dir, "model.mlir"), encoding="utf-8") as f:
            model_text = f.read()
        facts = facts_from_mlir(model_text)
        # What the import made is fixed now (a .py model has its own batch).
        plan = resolve(cfg, world, world_src, facts, True)

    if rank0:
        for n in plan.notes:
            say(n)

    # 3. The program: cached by model + compile settings + N + target.
    key = sha("program", model_text, *plan.compile_args,
              *compiler_identity(tools, plan.target, plan.cxx))[:24]
    flags = plan.compile_args + (["--cxx", plan.cxx] if plan.cxx else [])
    entry = os.path.join(cache_dir, key)
    program = os.path.join(entry, "train")
    exe_args = list(plan.exe_args)
    weights = os.path.join(import_dir, "model.safetensors") if import_dir else None
    if weights and os.path.isfile(weights) and not plan.uses_run_import:
        exe_args += ["--import", weights]
    exe_args += extra
    # data.tokenizer: the program writes its sample's ids (run.sample_out,
    # else a temporary file) and zero-data decodes them after the run.
    decode_samples = bool(plan.tokenizer) and plan.sample_tokens > 0 and \
        "--sample-out" not in extra
    sample_file, sample_tmp = plan.sample_out, None
    if decode_samples and sample_file is None:
        sample_file = "SAMPLES.jsonl" if args.dry_run else None
    if args.dry_run:
        if rank0:
            say("compile: zero-compile model.mlir %s -o train%s" % (shlex.join(flags), " (cached)" if
                                   os.path.isdir(entry) else ""))
            say("cache: %s" % entry)
            shown = exe_args + (["--sample-out", sample_file] if decode_samples and
                                plan.sample_out is None else [])
            say("run: %s" % shlex.join(launch_cmd(program, shown, world, launched)))
            if decode_samples:
                say("then: zero-data decode --tokenizer %s %s" % (
                    shlex.quote(plan.tokenizer), sample_file))
        return 0

    def build(tmp):
        say("compiling %s for %d rank%s (rank %d): zero-compile %s" % (
            plan.model_name, world, "" if world == 1 else "s", launch_rank(),
            shlex.join(flags)), rank0=False)
        with open(os.path.join(tmp, "model.mlir"), "w", encoding="utf-8") as f:
            f.write(model_text)
        t0 = time.time()
        run_tool([tools.need("zero-compile"), os.path.join(tmp, "model.mlir"), *flags,
                  "-o", os.path.join(tmp, "train")], "zero-compile")
        with open(os.path.join(tmp, "compile.json"), "w") as f:
            json.dump({"zero_compile": flags, "world_size": world,
                       "target": plan.target, "config": os.path.abspath(cfg.filename),
                       "seconds": round(time.time() - t0, 3)}, f, indent=1)
        say("compiled in %.1f s" % (time.time() - t0), rank0=False)

    entry, built = ensure(cfg, plan, cache_dir, key, build)
    if not built and rank0:
        fresh = os.stat(entry).st_mtime >= STARTED
        say("program: %s (%s)" % (program, "compiled by another rank of this launch"
                                  if fresh else "cached"))
    elif rank0:
        say("program: %s" % program)
    if args.compile_only:
        return 0
    if decode_samples:
        zero_data = tools.need("zero-data")
        if sample_file is None:
            import tempfile
            sample_tmp = tempfile.mkdtemp(prefix="zero-train-samples-")
            sample_file = os.path.join(sample_tmp, "samples.jsonl")
            exe_args += ["--sample-out", sample_file]
    cmd = launch_cmd(program, exe_args, world, launched)
    if rank0:
        say("run: %s" % shlex.join(cmd))
    sys.stdout.flush()
    sys.stderr.flush()
    if not decode_samples:
        try:
            os.execv(cmd[0], cmd)
        except OSError as e:
            return fail("cannot run %s: %s" % (cmd[0], e.strerror))
    try:
        return run_and_decode(cmd, zero_data, plan.tokenizer, sample_file, rank0)
    finally:
        if sample_tmp:
            shutil.rmtree(sample_tmp, ignore_errors=True)


def run_and_decode(cmd, zero_data, tokenizer, sample_file, rank0):
    """Runs the program; then rank 0 prints its sample decoded by zero-data
    (the program's exit status stays the result)."""
    try:
        proc = subprocess.Popen(cmd)
    except OSError as e:
        return fail("cannot run %s: %s" % (cmd[0], e.strerror))
    try:
        rc = proc.wait()
    except KeyboardInterrupt:
        rc = proc.wait()  # the program got the same SIGINT
        return rc if rc > 0 else 130
    if rc != 0:
        return rc if rc > 0 else 128 - rc
    if not rank0:
        return 0
    if not os.path.isfile(sample_file):
        return fail("the program wrote no sample file %s" % sample_file)
    dec = subprocess.run([zero_data, "decode", "--tokenizer", tokenizer, sample_file],
                         capture_output=True, text=True)
    if dec.returncode != 0:
        sys.stderr.write(dec.stderr)
        return fail("decoding the sample with %s failed (exit status %d)" % (
            tokenizer, dec.returncode))
    say("the sample decoded with %s:" % tokenizer)
    sys.stdout.write(dec.stdout)
    sys.stdout.flush()
    return 0


def ensure(cfg, plan, cache_dir, key, build):
    """cache.ensure, with a cache directory that cannot be made, locked or
    written named as what it is (the config key when the config gave it)."""
    try:
        return cachemod.ensure(cache_dir, key, build)
    except OSError as e:
        why = "cannot use the cache directory %s: %s%s" % (
            cache_dir, e.strerror or e, " (%s)" % e.filename if e.filename else "")
        if plan.cache_dir:
            raise ConfigError(("zero_compile", "cache_dir"), why) from None
        raise SystemExit(fail(why + " (set zero_compile.cache_dir or $ZERO_TRAIN_CACHE)"))


def launch_cmd(program, exe_args, world, launched):
    """The program itself under a launcher (or for one rank), else mpirun."""
    if launched or world == 1:
        return [program] + exe_args
    mpirun = os.environ.get("ZERO_MPIRUN") or shutil.which("mpirun") or "mpirun"
    cmd = [mpirun, "-np", str(world)]
    try:
        ver = subprocess.run([mpirun, "--version"], capture_output=True, text=True).stdout
    except OSError:
        ver = ""
    if "Open MPI" in ver or "OpenRTE" in ver:
        cmd.append("--oversubscribe")
        if os.getuid() == 0:
            cmd.append("--allow-run-as-root")
    return cmd + [program] + exe_args


if __name__ == "__main__":
    sys.exit(main())
