//===- ZeroStorage.cpp - #zero.storage ------------------------------------===//
///
/// \file
/// The storage of a compiled step's tensor values (#zero.storage, written
/// by zero-buffer-assign, read by convert-train-to-emitc): its syntax, its
/// verifier, and the checks of `zero.storage` / `zero.scratch` where they
/// sit. Semantics: ZeroDialect.td.
///
//===----------------------------------------------------------------------===//

#include "Zero/ZeroDialect.h"
#include "Zero/ZeroLayout.h"
#include "Zero/ZeroOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectImplementation.h"

using namespace mlir;
using namespace mlir::zero;

// The builders and the parser need the storage class, which
// ZeroAttrs.cpp.inc defines in ZeroDialect.cpp: they are there.

void StorageAttr::print(AsmPrinter &p) const {
  p << "<" << stringifyStorageKind(getKind());
  switch (getKind()) {
  case StorageKind::none:
    break;
  case StorageKind::arena:
    p << " " << stringifyArena(getArena()) << ", offset = " << getOffset()
      << ", bytes = " << getBytes();
    if (getArena() != Arena::constants)
      p << ", live = [" << getFirst() << ", " << getLast() << "]";
    break;
  case StorageKind::state:
    p << " ";
    p.printSymbolName(getSymbol());
    break;
  case StorageKind::tied:
    p << " " << getOperand();
    break;
  case StorageKind::view:
    p << " " << getOperand() << ", offset = " << getOffset();
    break;
  case StorageKind::pack_slot:
    p << ", offset = " << getOffset();
    break;
  case StorageKind::span:
    p << " ";
    p.printSymbolName(getSymbol());
    p << ", " << stringifyArena(getArena());
    break;
  case StorageKind::host_slot:
    p << ", offset = " << getOffset() << ", bytes = " << getBytes()
      << ", live = [" << getFirst() << ", " << getLast() << "]";
    break;
  }
  p << ">";
}

LogicalResult
StorageAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                    StorageKind kind, Arena arena, int64_t offset,
                    int64_t bytes, int64_t first, int64_t last,
                    StringRef symbol, int64_t operand) {
  switch (kind) {
  case StorageKind::arena:
    if (arena != Arena::activations && arena != Arena::temporaries &&
        arena != Arena::constants)
      return emitError() << "#zero.storage<arena> lives in the activations, "
                            "temporaries or constants arena, not "
                         << stringifyArena(arena);
    if (offset < 0 || offset % kArenaAlignment || bytes <= 0)
      return emitError() << "#zero.storage<arena> needs a 64-byte aligned "
                            "offset >= 0 and bytes > 0 (got offset "
                         << offset << ", bytes " << bytes << ")";
    if (arena != Arena::constants && (first < -1 || last < first))
      return emitError() << "#zero.storage<arena> needs a live range [F, L] "
                            "with -1 <= F <= L (got ["
                         << first << ", " << last << "])";
    return success();
  case StorageKind::state:
    if (symbol.empty())
      return emitError() << "#zero.storage<state> names a state";
    return success();
  case StorageKind::span:
    if (symbol.empty() ||
        (arena != Arena::parameters && arena != Arena::gradients))
      return emitError() << "#zero.storage<span> names a group and the "
                            "parameters or gradients arena";
    return success();
  case StorageKind::tied:
  case StorageKind::view:
  case StorageKind::pack_slot:
    if (operand < 0 || offset < 0)
      return emitError() << "#zero.storage<" << stringifyStorageKind(kind)
                         << "> needs a non-negative operand and offset";
    return success();
  case StorageKind::host_slot:
    if (offset < 0 || offset % kArenaAlignment || bytes <= 0)
      return emitError() << "#zero.storage<host_slot> needs a 64-byte "
                            "aligned offset >= 0 and bytes > 0 (got offset "
                         << offset << ", bytes " << bytes << ")";
    if (first < 0 || last < first)
      return emitError() << "#zero.storage<host_slot> needs a live range "
                            "[F, L] with 0 <= F <= L (got ["
                         << first << ", " << last << "])";
    return success();
  case StorageKind::none:
    return success();
  }
  return success();
}

static int64_t numElements(Type t) {
  auto r = dyn_cast<RankedTensorType>(t);
  return r && r.hasStaticShape() ? r.getNumElements() : -1;
}

/// zero.storage on an op: one #zero.storage per result; `none` exactly for
/// results that are not tensors; operand numbers, views and byte counts
/// that fit the op.
static LogicalResult verifyResultStorage(Operation *op, Attribute value) {
  StringRef name = ZeroDialect::kStorageAttrName;
  auto list = dyn_cast<ArrayAttr>(value);
  if (!list || list.size() != op->getNumResults() ||
      !llvm::all_of(list, [](Attribute a) { return isa<StorageAttr>(a); }))
    return op->emitOpError("'")
           << name << "' must be an array of one #zero.storage per result ("
           << op->getNumResults() << ")";
  for (auto [i, a] : llvm::enumerate(list)) {
    auto s = cast<StorageAttr>(a);
    Value r = op->getResult(i);
    auto t = dyn_cast<RankedTensorType>(r.getType());
    auto bad = [&]() {
      return op->emitOpError("'") << name << "' of result #" << i << " ("
                                  << s << ") ";
    };
    if (!t) {
      if (s.getKind() != StorageKind::none)
        return bad() << "must be #zero.storage<none>: the result is not a "
                        "tensor";
      continue;
    }
    switch (s.getKind()) {
    case StorageKind::none:
      return bad() << "leaves a tensor without storage";
    case StorageKind::arena:
      if (s.getBytes() < tensorStorageBytes(t))
        return bad() << "has fewer bytes than the tensor's "
                     << tensorStorageBytes(t);
      break;
    case StorageKind::tied:
      if (s.getOperand() >= op->getNumOperands() ||
          op->getOperand(s.getOperand()).getType() != t)
        return bad() << "must name an operand of the result's type";
      break;
    case StorageKind::view: {
      if (s.getOperand() >= op->getNumOperands())
        return bad() << "names operand #" << s.getOperand() << " of "
                     << op->getNumOperands();
      int64_t whole = numElements(op->getOperand(s.getOperand()).getType());
      if (whole >= 0 && s.getOffset() + t.getNumElements() > whole)
        return bad() << "reaches past the " << whole
                     << " elements of the operand";
      break;
    }
    case StorageKind::pack_slot: {
      auto pack = r.hasOneUse() ? dyn_cast<PackOp>(*r.getUsers().begin())
                                : PackOp();
      if (!pack)
        return bad() << "is for a value whose only use is a zero.pack";
      if (s.getOffset() + t.getNumElements() >
          numElements(pack.getResult().getType()))
        return bad() << "reaches past the zero.pack's flat result";
      break;
    }
    case StorageKind::host_slot:
      if (!isa<OffloadWaitOp>(op))
        return bad() << "is for the result of a zero.offload_wait (a host "
                        "slot of P_a+cpu)";
      if (s.getBytes() < tensorStorageBytes(t))
        return bad() << "has fewer bytes than the tensor's "
                     << tensorStorageBytes(t);
      break;
    case StorageKind::state:
    case StorageKind::span:
      break;
    }
  }
  return success();
}

LogicalResult zero::verifyStorageAttr(Operation *op, StringRef name,
                                      Attribute value) {
  if (name == ZeroDialect::kStorageAttrName) {
    if (isa<func::FuncOp>(op))
      return op->emitOpError("'")
             << name << "' is for an op's results or a function's arguments";
    return verifyResultStorage(op, value);
  }
  auto s = dyn_cast<StorageAttr>(value);
  if (!s || s.getKind() != StorageKind::arena ||
      s.getArena() != Arena::temporaries || s.getFirst() != s.getLast())
    return op->emitOpError("'")
           << name
           << "' must be a #zero.storage<arena temporaries, ...> live at "
              "one position (its op's)";
  return success();
}

LogicalResult ZeroDialect::verifyRegionArgAttribute(Operation *op, unsigned,
                                                    unsigned argIndex,
                                                    NamedAttribute attr) {
  if (attr.getName().getValue() != kStorageAttrName)
    return success();
  auto s = dyn_cast<StorageAttr>(attr.getValue());
  if (!s || s.getKind() != StorageKind::arena ||
      s.getArena() == Arena::constants)
    return op->emitOpError("argument #")
           << argIndex << ": '" << kStorageAttrName
           << "' must be a #zero.storage<arena activations|temporaries, ...>";
  return success();
}
