//===- version.cpp - The runtime's version (the program's --version) ------===//
//
// Built in the Zero tree, the version and git revision of zero/Version.h
// (cmake/ZeroVersion.cmake); built standalone (runtime/ alone, as on the GPU
// machine of scripts/gpu-check), "unknown".
//
//===----------------------------------------------------------------------===//

#include "common/internal.h"

#if __has_include("zero/Version.h")
#include "zero/Version.h"
#define ZRT_VERSION_TEXT ZERO_VERSION " (git " ZERO_GIT_REVISION ")"
#else
#define ZRT_VERSION_TEXT "unknown (built outside the Zero tree)"
#endif

namespace zrt {
const char *runtimeVersion() { return ZRT_VERSION_TEXT; }
} // namespace zrt
