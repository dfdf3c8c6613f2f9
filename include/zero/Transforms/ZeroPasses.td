//===- ZeroPasses.td - ZeRO sharding passes -------------------*- tablegen -*-===//

#ifndef ZERO_TRANSFORMS_ZEROPASSES_TD
#define ZERO_TRANSFORMS_ZEROPASSES_TD

include "mlir/Pass/PassBase.td"

#endif // ZERO_TRANSFORMS_ZEROPASSES_TD
