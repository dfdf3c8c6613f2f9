//===- Version.cpp - Zero's version for --version -------------------------===//

#include "zero/Support/Version.h"

#include "zero/Version.h"

#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CommandLine.h"

#include <string>

namespace mlir::zero {

const char *versionString() {
  return ZERO_VERSION " (git " ZERO_GIT_REVISION ")";
}

static std::string versionTool;
static void (*versionExtra)(llvm::raw_ostream &) = nullptr;

void setVersionPrinter(llvm::StringRef tool,
                       void (*extra)(llvm::raw_ostream &os)) {
  versionTool = tool.str();
  versionExtra = extra;
  llvm::cl::SetVersionPrinter([](llvm::raw_ostream &os) {
    os << versionTool << " (Zero) " << versionString() << "\n";
    os << "LLVM/MLIR: " << LLVM_VERSION_STRING << "\n";
    if (versionExtra)
      versionExtra(os);
  });
}

} // namespace mlir::zero
