//===- TrainDialect.cpp - the train dialect -------------------------------===//

#include "Train/TrainDialect.h"
#include "Train/TrainOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::train;

#include "Train/TrainDialect.cpp.inc"
#include "Train/TrainEnums.cpp.inc"
#include "Train/TrainInterfaces.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "Train/TrainAttrs.cpp.inc"

void TrainDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "Train/TrainOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "Train/TrainAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// InitAttr
//===----------------------------------------------------------------------===//

/// Parses `<normal, 0.02>`, `<zeros>` or `<ones>`.
Attribute InitAttr::parse(AsmParser &parser, Type) {
  if (parser.parseLess())
    return {};
  StringRef keyword;
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseKeyword(&keyword))
    return {};
  std::optional<InitKind> kind = symbolizeInitKind(keyword);
  if (!kind) {
    parser.emitError(loc, "unknown initializer '")
        << keyword << "'; expected normal, zeros or ones";
    return {};
  }
  double std = 0.0;
  if (*kind == InitKind::normal) {
    if (parser.parseComma() || parser.parseFloat(std))
      return {};
  }
  if (parser.parseGreater())
    return {};
  return parser.getChecked<InitAttr>(loc, parser.getContext(), *kind,
                                    llvm::APFloat(std));
}

void InitAttr::print(AsmPrinter &printer) const {
  printer << "<" << stringifyInitKind(getKind());
  if (getKind() == InitKind::normal)
    printer << ", " << getStd();
  printer << ">";
}

LogicalResult InitAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               InitKind kind, llvm::APFloat stdAp) {
  double std = stdAp.convertToDouble();
  if (kind == InitKind::normal && !(std > 0.0))
    return emitError() << "normal initializer needs a positive standard "
                          "deviation, got "
                       << std;
  return success();
}
