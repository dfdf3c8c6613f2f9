// RUN: zero-opt %s -split-input-file -verify-diagnostics

// zero.written_by_adamw is verified where it sits.

func.func @not_a_cast(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{'train.add' op 'zero.written_by_adamw' is only for train.cast}}
  %y = train.add %x, %x {zero.written_by_adamw} : tensor<2xf32>
  return %y : tensor<2xf32>
}

// -----

func.func @not_adamw(%x: tensor<2xf32>) -> tensor<2xbf16> {
  // expected-error@+1 {{'train.cast' op 'zero.written_by_adamw' needs a cast to bf16 of a train.adamw's new parameter}}
  %y = train.cast %x {zero.written_by_adamw} : tensor<2xf32> -> tensor<2xbf16>
  return %y : tensor<2xbf16>
}

// -----

func.func @not_unit(%x: tensor<2xf32>) -> tensor<2xbf16> {
  // expected-error@+1 {{'train.cast' op 'zero.written_by_adamw' must be a unit attribute}}
  %y = train.cast %x {zero.written_by_adamw = 1 : i64} : tensor<2xf32> -> tensor<2xbf16>
  return %y : tensor<2xbf16>
}

// -----

func.func @moment(%p: tensor<2xf32>, %g: tensor<2xbf16>, %lr: tensor<f32>, %t: tensor<i64>, %c: tensor<f32>) -> tensor<2xbf16> {
  %np, %nm, %nv = train.adamw %p, %g, %p, %p, %lr, %t, %c beta1(9.000000e-01) beta2(0.999) eps(1.000000e-08) weight_decay(0.000000e+00) : tensor<2xf32>, tensor<2xbf16>
  // expected-error@+1 {{'train.cast' op 'zero.written_by_adamw' needs a cast to bf16 of a train.adamw's new parameter}}
  %y = train.cast %nm {zero.written_by_adamw} : tensor<2xf32> -> tensor<2xbf16>
  return %y : tensor<2xbf16>
}

// -----

func.func @skip(%p: tensor<2xf32>, %g: tensor<2xbf16>, %lr: tensor<f32>, %t: tensor<i64>, %c: tensor<f32>) -> tensor<2xbf16> {
  %np, %nm, %nv = train.adamw %p, %g, %p, %p, %lr, %t, %c skip_nonfinite(%c) beta1(9.000000e-01) beta2(0.999) eps(1.000000e-08) weight_decay(0.000000e+00) : tensor<2xf32>, tensor<2xbf16>
  // expected-error@+1 {{'train.cast' op 'zero.written_by_adamw' cannot fold into an AdamW with skip_nonfinite (the update may not run)}}
  %y = train.cast %np {zero.written_by_adamw} : tensor<2xf32> -> tensor<2xbf16>
  return %y : tensor<2xbf16>
}
