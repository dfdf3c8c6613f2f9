//===- Version.h - Zero's version for --version -----------------*- C++ -*-===//
///
/// \file
/// The version every tool prints with --version: the project version
/// (CMakeLists.txt) and the git revision of the build (cmake/ZeroVersion.cmake
/// writes both into zero/Version.h at build time).
///
//===----------------------------------------------------------------------===//
#ifndef ZERO_SUPPORT_VERSION_H
#define ZERO_SUPPORT_VERSION_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::zero {

/// "0.1.0 (git 19980e0abcde)".
const char *versionString();

/// Makes `--version` print "TOOL (Zero) <versionString()>" and the LLVM
/// version Zero was built with, then `extra` lines (may be null). Call before
/// cl::ParseCommandLineOptions (or MlirOptMain).
void setVersionPrinter(llvm::StringRef tool,
                       void (*extra)(llvm::raw_ostream &os) = nullptr);

} // namespace mlir::zero

#endif // ZERO_SUPPORT_VERSION_H
