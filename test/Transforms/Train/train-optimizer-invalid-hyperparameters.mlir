// AdamW hyperparameters are range-checked and NaN is rejected: one error
// each, naming the option, without a dump of the module.
// RUN: not zero-opt %s --train-optimizer=weight-decay=nan 2>&1 | FileCheck %s --check-prefix=WD --implicit-check-not=train.param
// RUN: not zero-opt %s --train-optimizer=weight-decay=-0.1 2>&1 | FileCheck %s --check-prefix=WDNEG
// RUN: not zero-opt %s --train-optimizer=max-grad-norm=nan 2>&1 | FileCheck %s --check-prefix=CLIP --implicit-check-not=train.param
// RUN: not zero-opt %s --train-optimizer=max-grad-norm=inf 2>&1 | FileCheck %s --check-prefix=CLIPINF
// RUN: not zero-opt %s --train-optimizer=beta1=1 2>&1 | FileCheck %s --check-prefix=BETA1
// RUN: not zero-opt %s --train-optimizer=beta2=-0.5 2>&1 | FileCheck %s --check-prefix=BETA2
// RUN: not zero-opt %s --train-optimizer=eps=0 2>&1 | FileCheck %s --check-prefix=EPS
// RUN: not zero-opt %s --train-optimizer=decay-min-rank=-1 2>&1 | FileCheck %s --check-prefix=RANK
// max-grad-norm <= 0 is documented as "no clipping" and accepted.
// RUN: zero-opt %s --train-optimizer=max-grad-norm=0 | FileCheck %s --check-prefix=OFF

// WD: error: train-optimizer: weight-decay must be a finite number >= 0, got nan
// WDNEG: error: train-optimizer: weight-decay must be a finite number >= 0, got -1.000000e-01
// CLIP: error: train-optimizer: max-grad-norm must be a finite number (<= 0: no clipping), got nan
// CLIPINF: error: train-optimizer: max-grad-norm must be a finite number (<= 0: no clipping), got INF
// BETA1: error: train-optimizer: beta1 must be in [0, 1), got 1.000000e+00
// BETA2: error: train-optimizer: beta2 must be in [0, 1), got -5.000000e-01
// EPS: error: train-optimizer: eps must be a finite number > 0, got 0.000000e+00
// RANK: error: train-optimizer: decay-min-rank must be >= 0, got -1
// OFF-LABEL: func.func @optimizer_step(
module {
  train.param @w : tensor<4xf32> init(<zeros>) trainable
  train.state @w.grad : tensor<4xf32> kind(<grad>) of(@w)
}
