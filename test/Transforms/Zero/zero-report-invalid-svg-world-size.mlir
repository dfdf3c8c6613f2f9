// RUN: zero-opt %s --zero-report="svg=%t.svg svg-world-size=0" -verify-diagnostics -o /dev/null

// The chart's own option is named (not the world-size of the partitions it
// draws).
// expected-error @+1 {{zero-report: svg-world-size must be >= 1, got 0}}
module {
  train.param @w : tensor<4xf32> init(<zeros>) trainable
}
