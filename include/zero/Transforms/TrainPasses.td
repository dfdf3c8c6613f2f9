//===- TrainPasses.td - passes on the train dialect ----------*- tablegen -*-===//

#ifndef ZERO_TRANSFORMS_TRAINPASSES_TD
#define ZERO_TRANSFORMS_TRAINPASSES_TD

include "mlir/Pass/PassBase.td"

#endif // ZERO_TRANSFORMS_TRAINPASSES_TD
