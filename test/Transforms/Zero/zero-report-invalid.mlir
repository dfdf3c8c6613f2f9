// RUN: zero-opt %s --zero-report="micro-batches=0" -verify-diagnostics -o /dev/null

// expected-error @+1 {{zero-report: micro-batches must be >= 1, got 0}}
module {
}
