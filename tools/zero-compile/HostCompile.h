//===- HostCompile.h - zero-compile's host compiler step ------------------===//
///
/// \file
/// `--emit=exe`: where the runtime to link is and how the host C++ compiler
/// is run on the generated C++ (tools/zero-compile/zero-compile.cpp has the
/// driver; the search order is documented there).
///
//===----------------------------------------------------------------------===//

#ifndef ZERO_COMPILE_HOSTCOMPILE_H
#define ZERO_COMPILE_HOSTCOMPILE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"

#include <string>
#include <vector>

namespace zero_compile {

/// Where the runtime's headers and static libraries are, and why there.
struct RuntimePaths {
  std::string include, library, cudaLibrary;
  std::string from; ///< "--runtime-dir", "ZERO_RUNTIME_DIR", "installed", "build tree"
  std::string error; ///< a --runtime-dir / $ZERO_RUNTIME_DIR without a runtime
};

/// The runtime to link, found once per process: `runtimeDir` (--runtime-dir)
/// when given, else $ZERO_RUNTIME_DIR, else the prefix the program
/// `argv0` is installed in, else the build tree (ZeroCompileConfig.h).
/// `error` is set when a given directory holds no runtime.
const RuntimePaths &runtimePaths(llvm::StringRef runtimeDir, const char *argv0);

/// The host C++ compiler: `cxx` (--cxx) when given, else $ZERO_CXX, else
/// $CXX, else the one CMake configured (ZERO_HOST_CXX).
std::string hostCompiler(llvm::StringRef cxx);

/// What --emit=exe compiles with.
struct HostBuild {
  std::string runtimeDir;               ///< --runtime-dir ("" = not given)
  std::string cxx;                      ///< --cxx ("" = not given)
  bool cuda = false;                    ///< --target=cuda
  std::vector<std::string> extraSources; ///< --extra-source files
};

/// Runs the host compiler on `cppPath`, writing `exePath`, linked against
/// the runtime and its dependencies' configured link flags. Returns 0, or
/// 1 after one error message (no runtime, no compiler, or the compiler's
/// output and a command line that reproduces the failure).
int compileExecutable(llvm::StringRef cppPath, llvm::StringRef exePath,
                      const HostBuild &build, const char *argv0);

/// Prints `zero-compile: error: <message>` and returns 1.
int error(const llvm::Twine &message);

} // namespace zero_compile

#endif // ZERO_COMPILE_HOSTCOMPILE_H
