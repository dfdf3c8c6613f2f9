//===- ZeroOps.td - zero dialect operations ------------------*- tablegen -*-===//

#ifndef ZERO_ZERO_OPS_TD
#define ZERO_ZERO_OPS_TD

include "Zero/ZeroDialect.td"
include "mlir/IR/BuiltinAttributes.td"

def Zero_Tensor : StaticShapeTensorOf<[F32, BF16, F16]>;
def Zero_FlatTensor : 1DTensorOf<[F32, BF16, F16]>;

/// Collectives order against each other through Zero_CommResource.
defvar Zero_CollectiveEffects = MemoryEffects<[MemRead<Zero_CommResource>,
                                               MemWrite<Zero_CommResource>]>;

def Zero_AllGatherOp : Zero_Op<"all_gather", [Zero_CollectiveEffects]> {
  let summary = "Gathers every rank's shard into the full flat tensor";
  let description = [{
    Each of the `world_size` ranks contributes its flat shard of `n`
    elements; every rank receives the concatenation in rank order, `n ×
    world_size` elements (rank r's shard at offset r·n). Sends
    n·(N−1) elements per rank with the ring algorithm.

    Example:
    ```mlir
    %full = zero.all_gather %shard world_size(4) : tensor<8xbf16> -> tensor<32xbf16>
    ```
  }];
  let arguments = (ins Zero_FlatTensor:$shard, ConfinedAttr<I64Attr, [IntPositive]>:$world_size);
  let results = (outs Zero_FlatTensor:$result);
  let assemblyFormat = [{
    $shard `world_size` `(` $world_size `)` attr-dict `:` type($shard) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Zero_ReduceScatterOp : Zero_Op<"reduce_scatter", [Zero_CollectiveEffects]> {
  let summary = "Reduces the full flat tensor over ranks; each keeps its shard";
  let description = [{
    Every rank contributes a flat tensor of `n × world_size` elements; the
    element-wise reduction (`sum` or `avg`) over ranks is computed and rank r
    receives elements [r·n, (r+1)·n). Sends n·(N−1) elements per rank with
    the ring algorithm. Reductions of `bf16`/`f16` data accumulate in `f32`.

    Example:
    ```mlir
    %g = zero.reduce_scatter %full kind(<avg>) world_size(4) : tensor<32xf32> -> tensor<8xf32>
    ```
  }];
  let arguments = (ins Zero_FlatTensor:$input, Zero_ReduceKindAttr:$kind,
                       ConfinedAttr<I64Attr, [IntPositive]>:$world_size);
  let results = (outs Zero_FlatTensor:$result);
  let assemblyFormat = [{
    $input `kind` `(` $kind `)` `world_size` `(` $world_size `)` attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Zero_AllReduceOp : Zero_Op<"all_reduce", [Zero_CollectiveEffects,
    AllTypesMatch<["input", "result"]>]> {
  let summary = "Element-wise reduction over ranks, result on every rank";
  let description = [{
    Every rank contributes a tensor of one shape; every rank receives the
    element-wise `sum`, `avg` or `max` over ranks. Sends 2·S·(N−1)/N
    elements per rank for a tensor of S elements (ring all-reduce).

    Example:
    ```mlir
    %n = zero.all_reduce %sq kind(<sum>) world_size(4) : tensor<f32>
    ```
  }];
  let arguments = (ins Zero_Tensor:$input, Zero_ReduceKindAttr:$kind,
                       ConfinedAttr<I64Attr, [IntPositive]>:$world_size);
  let results = (outs Zero_Tensor:$result);
  let assemblyFormat = [{
    $input `kind` `(` $kind `)` `world_size` `(` $world_size `)` attr-dict `:` type($result)
  }];
}

#endif // ZERO_ZERO_OPS_TD
