//===- Blocks.cpp - which block a parameter belongs to --------------------===//

#include "zero/Analysis/Blocks.h"

#include "llvm/ADT/StringExtras.h"

using namespace llvm;

StringRef mlir::zero::blockOfParameter(StringRef name) {
  size_t end = 0;
  while (true) {
    size_t dot = name.find('.', end);
    if (dot == StringRef::npos)
      return {}; // the last component names the tensor, not a block
    StringRef component = name.slice(end, dot);
    StringRef word = component.rtrim("0123456789");
    bool number = !component.empty() && word.empty();
    bool indexed = !word.empty() && word.size() < component.size();
    // A bare number only counts after a container name (`layers.3`).
    if ((number && end > 0) || indexed)
      return name.take_front(dot);
    end = dot + 1;
  }
}
