//===- ZeroOffloadOps.td - checkpoint offload to host memory -*- tablegen -*-===//
//
// ZeRO-R's P_a+cpu (Rajbhandari et al., arXiv 1910.02054, §6.1; DeepSpeed's
// `cpu_checkpointing`): the 1/M slices of the partitioned activation
// checkpoints (train-checkpoint partition=tensor) leave the device between
// the forward and the backward. `zero.offload_start` copies a device slice
// into a pinned host slot on a copy stream, `zero.offload_wait` orders the
// compute stream after that copy (the device buffer may then be reused) and
// yields the host slot; `zero.fetch_start` copies the host slot back into a
// device buffer on the copy stream and `zero.fetch_wait` orders the compute
// stream after it, ahead of the recomputation's all-gather. Nothing blocks
// the host: each wait is a stream-on-event wait (docs/cuda.md). A host
// slot's storage is `#zero.storage<host_slot, ...>` (zero-buffer-assign).
// `zero-offload-checkpoints` forms them. Included by ZeroOps.td; verifiers
// in ZeroOffload.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_ZERO_OFFLOAD_OPS_TD
#define ZERO_ZERO_OFFLOAD_OPS_TD

/// The copy stream's ordered operations: offloads and fetches never
/// commute with each other, and no rewrite drops them.
defvar Zero_OffloadEffects = MemoryEffects<[MemRead<Zero_OffloadResource>,
                                            MemWrite<Zero_OffloadResource>]>;

def Zero_OffloadStartOp : Zero_Op<"offload_start", [Zero_OffloadEffects]> {
  let summary = "Starts copying a device tensor into a pinned host slot";
  let description = [{
    Queues the copy of `input` (a device buffer) into a host slot on the
    copy stream, after the compute stream's work queued so far (an event):
    the copy reads `input` as the compute stream left it. `input` stays in
    use until the matching `zero.offload_wait`, whose result is the host
    slot. The pending value has exactly one use, that `zero.offload_wait`.

    Example:
    ```mlir
    %p = zero.offload_start %s : tensor<4096xf32> -> !zero.pending<tensor<4096xf32>>
    ```
  }];
  let arguments = (ins Zero_Tensor:$input);
  let results = (outs Zero_PendingType:$pending);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` qualified(type($pending))";
  let hasVerifier = 1;
}

def Zero_OffloadWaitOp : Zero_Op<"offload_wait", [Zero_OffloadEffects,
    TypesMatchWith<"result is the pending offload's tensor", "pending",
                   "host", "::llvm::cast<PendingType>($_self).getResult()">]> {
  let summary = "Orders compute after an offload; yields the host slot";
  let description = [{
    Makes the compute stream wait for the copy of `zero.offload_start`
    (the host does not block): from here on the device buffer of the
    offloaded tensor may be reused. The result is the host slot, which
    only `zero.fetch_start` reads (it lives in pinned host memory,
    `#zero.storage<host_slot, ...>`, not in a device arena).

    Example:
    ```mlir
    %h = zero.offload_wait %p : !zero.pending<tensor<4096xf32>>
    ```
  }];
  let arguments = (ins Zero_PendingType:$pending);
  let results = (outs Zero_Tensor:$host);
  let assemblyFormat = "$pending attr-dict `:` qualified(type($pending))";
  let hasVerifier = 1;
}

def Zero_FetchStartOp : Zero_Op<"fetch_start", [Zero_OffloadEffects]> {
  let summary = "Starts copying a host slot back into a device buffer";
  let description = [{
    Queues the copy of the host slot `host` (a `zero.offload_wait` result)
    into a device buffer on the copy stream, after the compute stream's
    work queued so far (the buffer's earlier occupant is done with it) and
    after the slot's offload (the same stream). The device buffer is the
    result of the matching `zero.fetch_wait`, the pending value's only use.

    Example:
    ```mlir
    %q = zero.fetch_start %h : tensor<4096xf32> -> !zero.pending<tensor<4096xf32>>
    ```
  }];
  let arguments = (ins Zero_Tensor:$host);
  let results = (outs Zero_PendingType:$pending);
  let assemblyFormat = "$host attr-dict `:` type($host) `->` qualified(type($pending))";
  let hasVerifier = 1;
}

def Zero_FetchWaitOp : Zero_Op<"fetch_wait", [Zero_OffloadEffects,
    TypesMatchWith<"result is the pending fetch's tensor", "pending",
                   "result", "::llvm::cast<PendingType>($_self).getResult()">]> {
  let summary = "Orders compute after a fetch; yields the device tensor";
  let description = [{
    Makes the compute stream wait for the copy of `zero.fetch_start` (the
    host does not block) and yields the device tensor, equal to the one
    that was offloaded.

    Example:
    ```mlir
    %d = zero.fetch_wait %q : !zero.pending<tensor<4096xf32>>
    ```
  }];
  let arguments = (ins Zero_PendingType:$pending);
  let results = (outs Zero_Tensor:$result);
  let assemblyFormat = "$pending attr-dict `:` qualified(type($pending))";
  let hasVerifier = 1;
}

#endif // ZERO_ZERO_OFFLOAD_OPS_TD
