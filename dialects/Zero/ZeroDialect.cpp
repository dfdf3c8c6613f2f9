//===- ZeroDialect.cpp - the zero dialect ---------------------------------===//

#include "Zero/ZeroDialect.h"
#include "Zero/ZeroOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::zero;

#include "Zero/ZeroDialect.cpp.inc"
#include "Zero/ZeroEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "Zero/ZeroAttrs.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "Zero/ZeroTypes.cpp.inc"

void ZeroDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "Zero/ZeroOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "Zero/ZeroAttrs.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "Zero/ZeroTypes.cpp.inc"
      >();
}
