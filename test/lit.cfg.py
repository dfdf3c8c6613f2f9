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

llvm_config.use_default_substitutions()

llvm_config.with_environment("PATH", config.zero_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

tools = ["zero-opt", "zero-model"]
llvm_config.add_tool_substitutions(tools, [config.zero_tools_dir])

if config.zero_have_cuda:
    config.available_features.add("cuda-toolkit")
