//===- HostCompile.cpp - zero-compile's host compiler step ----------------===//
///
/// \file
/// See HostCompile.h.
///
//===----------------------------------------------------------------------===//

#include "HostCompile.h"

#include "ZeroCompileConfig.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>

using llvm::SmallString;
using llvm::SmallVector;
using llvm::StringRef;

namespace zero_compile {

int error(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "zero-compile") << message << "\n";
  return 1;
}

/// A prefix holding an installed runtime: DIR/include/zrt/model.h and
/// DIR/lib/libzero_runtime.a (the CUDA library when it is there).
static bool runtimeAt(StringRef dir, RuntimePaths &out) {
  SmallString<256> inc(dir), lib(dir), cuda(dir), header;
  llvm::sys::path::append(inc, "include");
  header = inc;
  llvm::sys::path::append(header, "zrt", "model.h");
  llvm::sys::path::append(lib, "lib", "libzero_runtime.a");
  llvm::sys::path::append(cuda, "lib", "libzero_runtime_cuda.a");
  if (!llvm::sys::fs::exists(header) || !llvm::sys::fs::exists(lib))
    return false;
  out.include = inc.str().str();
  out.library = lib.str().str();
  out.cudaLibrary = llvm::sys::fs::exists(cuda) ? cuda.str().str() : "";
  return true;
}

const RuntimePaths &runtimePaths(StringRef runtimeDir, const char *argv0) {
  static RuntimePaths paths = [&] {
    RuntimePaths p;
    std::optional<std::string> env = llvm::sys::Process::GetEnv("ZERO_RUNTIME_DIR");
    for (auto [given, from] :
         {std::pair<std::string, const char *>{runtimeDir.str(), "--runtime-dir"},
          {env ? *env : std::string(), "ZERO_RUNTIME_DIR"}}) {
      if (given.empty())
        continue;
      p.from = from;
      if (!runtimeAt(given, p))
        p.error = std::string(from) + " '" + given +
                  "' holds no runtime (include/zrt/model.h and "
                  "lib/libzero_runtime.a)";
      return p;
    }
    std::string self = llvm::sys::fs::getMainExecutable(
        argv0, reinterpret_cast<void *>(&runtimeAt));
    SmallString<256> prefix(llvm::sys::path::parent_path(
        llvm::sys::path::parent_path(self)));
    if (!prefix.empty() && runtimeAt(prefix, p)) {
      p.from = "installed";
      return p;
    }
    p.include = ZERO_COMPILE_RUNTIME_INCLUDE;
    p.library = ZERO_COMPILE_RUNTIME_LIBRARY;
    p.cudaLibrary = ZERO_COMPILE_CUDA_RUNTIME_LIBRARY;
    p.from = "build tree";
    return p;
  }();
  return paths;
}

std::string hostCompiler(StringRef cxx) {
  if (!cxx.empty())
    return cxx.str();
  for (const char *var : {"ZERO_CXX", "CXX"})
    if (std::optional<std::string> v = llvm::sys::Process::GetEnv(var))
      if (!v->empty())
        return *v;
  return ZERO_HOST_CXX;
}

/// Quotes one argument for a shell command line.
static std::string shellQuote(StringRef arg) {
  if (!arg.empty() && arg.find_first_not_of(
                          "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                          "0123456789-_./=+,:@%") == StringRef::npos)
    return arg.str();
  std::string out = "'";
  for (char c : arg)
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

int compileExecutable(StringRef cppPath, StringRef exePath,
                      const HostBuild &build, const char *argv0) {
  const bool cuda = build.cuda;
  const RuntimePaths &rt = runtimePaths(build.runtimeDir, argv0);
  if (!rt.error.empty())
    return error(rt.error);
  const std::string library = cuda ? rt.cudaLibrary : rt.library;
  if (library.empty())
    return error(cuda ? "this zero-compile was configured without the CUDA "
                        "toolkit (or without the runtime): --target=cuda "
                        "--emit=exe is unavailable; --emit=cpp still works"
                      : "this zero-compile was built without the CPU runtime "
                        "(ZERO_BUILD_RUNTIME=OFF, or no OpenBLAS/MPI): "
                        "--emit=exe is unavailable");
  std::string compiler = hostCompiler(build.cxx);
  std::string program = compiler;
  if (!llvm::sys::path::is_absolute(compiler)) {
    llvm::ErrorOr<std::string> found = llvm::sys::findProgramByName(compiler);
    if (!found)
      return error("host compiler '" + compiler + "' not found (use --cxx)");
    program = *found;
  } else if (!llvm::sys::fs::can_execute(compiler)) {
    return error("host compiler '" + compiler + "' not found (use --cxx)");
  }
  SmallVector<std::string> args = {compiler,
                                   "-O2",
                                   "-fopenmp",
                                   "-std=c++17",
                                   "-I" + rt.include,
                                   cppPath.str()};
  for (const std::string &extra : build.extraSources)
    args.push_back(extra);
  args.push_back(library);
  SmallVector<StringRef> linkArgs;
  StringRef(cuda ? ZERO_COMPILE_CUDA_LINK_ARGS : ZERO_COMPILE_LINK_ARGS)
      .split(linkArgs, ';', -1, false);
  for (StringRef a : linkArgs)
    args.push_back(a.str());
  args.append({"-o", exePath.str()});

  SmallString<128> log;
  if (llvm::sys::fs::createTemporaryFile("zero-compile", "log", log))
    return error("cannot create a temporary file");
  llvm::FileRemover removeLog(log);
  SmallVector<StringRef> argRefs(args.begin(), args.end());
  std::optional<StringRef> redirects[3] = {std::nullopt, StringRef(log),
                                           StringRef(log)};
  std::string message;
  int status = llvm::sys::ExecuteAndWait(program, argRefs, std::nullopt,
                                         redirects, 0, 0, &message);
  if (status == 0)
    return 0;
  if (auto out = llvm::MemoryBuffer::getFile(log))
    llvm::errs() << (*out)->getBuffer();
  std::string command;
  for (const std::string &a : args)
    command += (command.empty() ? "" : " ") + shellQuote(a);
  error("the host compiler failed (" +
        (message.empty() ? "exit status " + std::to_string(status) : message) +
        "); reproduce with:\n  " + command);
  return 1;
}

} // namespace zero_compile
