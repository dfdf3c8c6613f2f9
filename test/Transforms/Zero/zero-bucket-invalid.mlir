// RUN: zero-opt %s --zero-bucket="bucket-bytes=0" -verify-diagnostics
// RUN: sed 's/got 0/got -8/' %s | zero-opt --zero-bucket="bucket-bytes=-8" -verify-diagnostics

// expected-error @+1 {{zero-bucket: bucket-bytes must be > 0, got 0}}
module {
}
