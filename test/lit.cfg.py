# -*- Python -*-
# lit configuration for Zero's tests.

import os

import lit.formats
from lit.llvm import llvm_config

config.name = "ZERO"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.zero_obj_root, "test")
config.excludes = ["CMakeLists.txt", "README.md", "lit.cfg.py", "lit.site.cfg.py", "Inputs"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%shared", config.zero_shared_dir))
# %zero_src: the repository root (scripts/, bench/).
config.substitutions.append(("%zero_src", config.zero_src_root))

llvm_config.use_default_substitutions()

# glibc fills memory with this byte's complement on malloc and with the
# byte on free: a read of freed or uninitialized heap memory (a stale
# DenseMap bucket after the map grew) then gives a wrong value on every
# run instead of on a rare one. Override with ZERO_MALLOC_PERTURB (0: off).
config.environment["MALLOC_PERTURB_"] = os.environ.get("ZERO_MALLOC_PERTURB", "165")

llvm_config.with_environment("PATH", config.zero_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

tools = ["zero-opt", "zero-model", "zero-translate", "zero-compile", "zero-import", "zero-train",
         "zero-data"]
llvm_config.add_tool_substitutions(tools, [config.zero_tools_dir])

if config.zero_have_cuda:
    config.available_features.add("cuda-toolkit")
    # `cuda`: a usable NVIDIA GPU as well (tests that run CUDA programs).
    try:
        import subprocess
        gpus = subprocess.run(["nvidia-smi", "-L"], capture_output=True,
                              text=True, timeout=30)
        if gpus.returncode == 0 and "GPU" in gpus.stdout:
            config.available_features.add("cuda")
    except (OSError, subprocess.SubprocessError):
        pass

# Programs built by zero-compile --emit=exe (runtime + training driver);
# %mpirun starts N ranks (Open MPI also as root and oversubscribed).
if getattr(config, "zero_have_runtime", False):
    config.available_features.add("zero-runtime")
mpiexec = getattr(config, "zero_mpiexec", "") or "mpiexec"
mpirun = mpiexec
try:
    import subprocess
    version = subprocess.run([mpiexec, "--version"], capture_output=True, text=True).stdout
    if "Open MPI" in version or "OpenRTE" in version:
        mpirun += " --allow-run-as-root --oversubscribe"
except OSError:
    pass
config.substitutions.append(("%mpirun", mpirun))
config.substitutions.append(("%python", "/usr/bin/python3"))
# %venv_python: the project's virtual environment (.venv, made by
# scripts/setup-deps from requirements.txt: PyTorch 2.x, transformers,
# safetensors); `REQUIRES: venv` where a test needs it.
venv_python = os.path.join(config.zero_src_root, ".venv", "bin", "python3")
if os.path.exists(venv_python):
    config.available_features.add("venv")
config.substitutions.append(("%venv_python", venv_python))

# %zero_bin: the tools directory, for scripts that drive several tools
# (test/e2e/reference_gpt.py); `REQUIRES: zero-compile` once it is built.
config.substitutions.append(("%zero_bin", config.zero_tools_dir))
if os.path.exists(os.path.join(config.zero_tools_dir, "zero-compile")):
    config.available_features.add("zero-compile")

# The CUDA backend on the CPU emulator (runtime/cuda/emulator/README.md):
# %zrt_emulated_cxx compiles the C++ of `zero-compile --target=cuda
# --emit=cpp` against it; `REQUIRES: cuda-emulator` once it is built.
emulated_cxx = os.path.join(config.zero_tools_dir, "zrt-emulated-cxx")
if os.path.exists(emulated_cxx):
    config.available_features.add("cuda-emulator")
config.substitutions.append(("%zrt_emulated_cxx", emulated_cxx))

# zero-train's compile cache: inside the build tree, never ~/.cache (the
# tests of the cache itself give their own zero_compile.cache_dir).
config.environment["ZERO_TRAIN_CACHE"] = os.path.join(config.test_exec_root, "zero-train-cache")

# Tests run OpenBLAS exactly as the machine sets it up (no driver re-exec
# choosing kernels; see runtime/src/cpu/blas_core.cpp).
config.environment["ZRT_BLAS_REEXEC"] = "0"
