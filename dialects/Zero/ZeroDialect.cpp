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

//===----------------------------------------------------------------------===//
// #zero.storage builders and parser (the rest is in ZeroStorage.cpp)
//===----------------------------------------------------------------------===//

StorageAttr StorageAttr::getNone(MLIRContext *ctx) {
  return get(ctx, StorageKind::none, Arena::parameters, 0, 0, 0, 0, "", 0);
}
StorageAttr StorageAttr::getArena(MLIRContext *ctx, Arena arena,
                                  int64_t offset, int64_t bytes, int64_t first,
                                  int64_t last) {
  return get(ctx, StorageKind::arena, arena, offset, bytes, first, last, "",
             0);
}
StorageAttr StorageAttr::getState(MLIRContext *ctx, StringRef symbol) {
  return get(ctx, StorageKind::state, Arena::parameters, 0, 0, 0, 0, symbol,
             0);
}
StorageAttr StorageAttr::getTied(MLIRContext *ctx, int64_t operand) {
  return get(ctx, StorageKind::tied, Arena::parameters, 0, 0, 0, 0, "",
             operand);
}
StorageAttr StorageAttr::getView(MLIRContext *ctx, int64_t operand,
                                 int64_t elemOffset) {
  return get(ctx, StorageKind::view, Arena::parameters, elemOffset, 0, 0, 0,
             "", operand);
}
StorageAttr StorageAttr::getPackSlot(MLIRContext *ctx, int64_t elemOffset) {
  return get(ctx, StorageKind::pack_slot, Arena::parameters, elemOffset, 0, 0,
             0, "", 0);
}
StorageAttr StorageAttr::getSpan(MLIRContext *ctx, StringRef group,
                                 Arena arena) {
  return get(ctx, StorageKind::span, arena, 0, 0, 0, 0, group, 0);
}

StorageAttr StorageAttr::getHostSlot(MLIRContext *ctx, int64_t offset,
                                     int64_t bytes, int64_t first,
                                     int64_t last) {
  return get(ctx, StorageKind::host_slot, Arena::parameters, offset, bytes,
             first, last, "", 0);
}

/// Parses `, offset = N`.
static ParseResult parseOffset(AsmParser &p, int64_t &offset) {
  return failure(p.parseComma() || p.parseKeyword("offset") ||
                 p.parseEqual() || p.parseInteger(offset));
}

static ParseResult parseArenaName(AsmParser &p, Arena &arena) {
  StringRef name;
  SMLoc loc = p.getCurrentLocation();
  if (p.parseKeyword(&name))
    return failure();
  std::optional<Arena> a = symbolizeArena(name);
  if (!a)
    return p.emitError(loc, "expected an arena name, got '") << name << "'";
  arena = *a;
  return success();
}

Attribute StorageAttr::parse(AsmParser &p, Type) {
  MLIRContext *ctx = p.getContext();
  StringRef kindName;
  SMLoc loc = p.getCurrentLocation();
  if (p.parseLess() || p.parseKeyword(&kindName))
    return {};
  std::optional<StorageKind> kind = symbolizeStorageKind(kindName);
  if (!kind) {
    p.emitError(loc, "expected a storage kind (none, arena, state, tied, "
                     "view, pack_slot, span, host_slot), got '")
        << kindName << "'";
    return {};
  }
  Arena arena = Arena::parameters;
  int64_t offset = 0, bytes = 0, first = 0, last = 0, operand = 0;
  std::string symbol;
  auto parseSymbol = [&]() -> ParseResult {
    StringAttr s;
    if (p.parseSymbolName(s))
      return failure();
    symbol = s.getValue().str();
    return success();
  };
  switch (*kind) {
  case StorageKind::none:
    break;
  case StorageKind::arena:
    if (parseArenaName(p, arena) || parseOffset(p, offset) || p.parseComma() ||
        p.parseKeyword("bytes") || p.parseEqual() || p.parseInteger(bytes))
      return {};
    if (succeeded(p.parseOptionalComma()) &&
        (p.parseKeyword("live") || p.parseEqual() || p.parseLSquare() ||
         p.parseInteger(first) || p.parseComma() || p.parseInteger(last) ||
         p.parseRSquare()))
      return {};
    break;
  case StorageKind::state:
    if (parseSymbol())
      return {};
    break;
  case StorageKind::tied:
    if (p.parseInteger(operand))
      return {};
    break;
  case StorageKind::view:
    if (p.parseInteger(operand) || parseOffset(p, offset))
      return {};
    break;
  case StorageKind::pack_slot:
    if (parseOffset(p, offset))
      return {};
    break;
  case StorageKind::span:
    if (parseSymbol() || p.parseComma() || parseArenaName(p, arena))
      return {};
    break;
  case StorageKind::host_slot:
    if (parseOffset(p, offset) || p.parseComma() || p.parseKeyword("bytes") ||
        p.parseEqual() || p.parseInteger(bytes) || p.parseComma() ||
        p.parseKeyword("live") || p.parseEqual() || p.parseLSquare() ||
        p.parseInteger(first) || p.parseComma() || p.parseInteger(last) ||
        p.parseRSquare())
      return {};
    break;
  }
  if (p.parseGreater())
    return {};
  return getChecked([&] { return p.emitError(loc); }, ctx, *kind, arena,
                    offset, bytes, first, last, symbol, operand);
}


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
