// RUN: zero-opt %s --train-checkpoint=policy=layer -split-input-file -verify-diagnostics

// expected-error @+1 {{train-checkpoint: policy must be none or block, got 'layer'}}
module {
}
