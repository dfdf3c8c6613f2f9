//===- ZeroDialect.td - the zero (sharding) dialect ----------*- tablegen -*-===//
//
// The `zero` dialect holds what ZeRO data parallelism adds to a training
// step: collectives over the data-parallel ranks, their ordering, and the
// partition layout of sharded state.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_ZERO_DIALECT_TD
#define ZERO_ZERO_DIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Zero_Dialect : Dialect {
  let name = "zero";
  let cppNamespace = "::mlir::zero";
  let summary = "ZeRO data parallelism: shards and collectives";
  let description = [{
    Ops and attributes for ZeRO-DP (Rajbhandari et al., arXiv 1910.02054):
    collectives over the N data-parallel ranks (`all_gather`,
    `reduce_scatter`, `all_reduce`) on flat shards.

    Every collective reads and writes the `zero::CommResource` side-effect
    resource, so `-canonicalize` and `-cse` never merge, drop or reorder two
    collectives: every rank must issue the same sequence.
  }];
  let useDefaultAttributePrinterParser = 1;
  let useDefaultTypePrinterParser = 1;
  // zero.slot, zero.param_span / zero.grad_span and
  // zero.state_arena_bytes (zero-layout-states), zero.written_by_adamw
  // (train-fuse-adamw-cast), zero.state_run (zero-fuse-state-runs) and
  // zero.storage / zero.scratch (zero-buffer-assign) are verified where
  // they sit.
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let extraClassDeclaration = [{
    /// The discardable attributes of the state layout (zero-layout-states).
    static constexpr ::llvm::StringLiteral kSlotAttrName = "zero.slot";
    static constexpr ::llvm::StringLiteral kParamSpanAttrName = "zero.param_span";
    static constexpr ::llvm::StringLiteral kGradSpanAttrName = "zero.grad_span";
    static constexpr ::llvm::StringLiteral kStateArenaBytesAttrName =
        "zero.state_arena_bytes";
    /// The module's rank mesh (#zero.mesh, zero-tensor-parallel).
    static constexpr ::llvm::StringLiteral kMeshAttrName = "zero.mesh";
    /// The tensor-parallel cut of a parameter (#zero.tensor_split).
    static constexpr ::llvm::StringLiteral kTensorSplitAttrName =
        "zero.tensor_split";
    /// On a `train.cast` f32 -> bf16 of a `train.adamw`'s new parameter
    /// (unit, train-fuse-adamw-cast): the AdamW call writes the cast's
    /// result, the bf16 copy of the updated master weights, itself
    /// (zrt_adamw_step's out_bf16); the cast prints nothing.
    static constexpr ::llvm::StringLiteral kWrittenByAdamWAttrName =
        "zero.written_by_adamw";
    /// On a `train.fill 0` into a state or a `train.adamw` (i64 >= 0,
    /// zero-fuse-state-runs): the fills with one id zero states that lie
    /// back to back in their arena, as one call over the whole range at the
    /// last of them; the AdamW ops with one id update back-to-back states as
    /// one call at the first.
    static constexpr ::llvm::StringLiteral kStateRunAttrName =
        "zero.state_run";
    /// Where each result (an array of #zero.storage, one per result) or
    /// argument (one #zero.storage) lives (zero-buffer-assign).
    static constexpr ::llvm::StringLiteral kStorageAttrName = "zero.storage";
    /// The kernel workspace of an op (#zero.storage, temporaries arena,
    /// live over the op's position; zero-buffer-assign).
    static constexpr ::llvm::StringLiteral kScratchAttrName = "zero.scratch";
  }];
}

/// Every tensor operand and result has at least one element
/// (Train/NonEmptyTensors.h).
def Zero_NonEmptyTensors : NativeOpTrait<"NonEmptyTensors">;

class Zero_Op<string mnemonic, list<Trait> traits = []>
    : Op<Zero_Dialect, mnemonic, !listconcat(traits, [Zero_NonEmptyTensors])>;

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

def Zero_PendingType : TypeDef<Zero_Dialect, "Pending"> {
  let mnemonic = "pending";
  let summary = "A collective in flight that will produce a tensor";
  let description = [{
    What a `zero.*_start` op returns: the collective has been issued (its
    buffers are in use) and `zero.wait` turns it into its result tensor of
    type `result`. Each pending value is waited exactly once.

    Example:
    ```mlir
    %p = zero.all_gather_start %shard world_size(4) : tensor<8xbf16> -> !zero.pending<tensor<32xbf16>>
    ```
  }];
  let parameters = (ins "::mlir::RankedTensorType":$result);
  let assemblyFormat = "`<` $result `>`";
}

/// The resource collectives read and write: the communicator's ordered
/// stream of operations.
def Zero_CommResource : Resource<"::mlir::zero::CommResource">;

/// The resource of the checkpoint copies between device and host memory
/// (zero.offload_* / zero.fetch_*): the copy stream's ordered operations.
def Zero_OffloadResource : Resource<"::mlir::zero::OffloadResource">;

def Zero_ReduceKind : I32EnumAttr<"ReduceKind", "reduction of a collective", [
    I32EnumAttrCase<"sum", 0>,
    I32EnumAttrCase<"avg", 1>,
    I32EnumAttrCase<"max", 2>
  ]> {
  let cppNamespace = "::mlir::zero";
  let genSpecializedAttr = 0;
}
def Zero_ShardKind : I32EnumAttr<"ShardKind", "what a shard holds", [
    I32EnumAttrCase<"param", 0>,
    I32EnumAttrCase<"grad", 1>,
    I32EnumAttrCase<"master", 2>,
    I32EnumAttrCase<"exp_avg", 3>,
    I32EnumAttrCase<"exp_avg_sq", 4>
  ]> {
  let cppNamespace = "::mlir::zero";
  let genSpecializedAttr = 0;
}
def Zero_ShardKindAttr : EnumAttr<Zero_Dialect, Zero_ShardKind, "shard_kind"> {
  let assemblyFormat = "`<` $value `>`";
}

/// Sharded state that shard_load / shard_store / shard_accumulate touch.
def Zero_ShardResource : Resource<"::mlir::zero::ShardResource">;

/// The arenas of a compiled program, numbered as zrt_mem_kind
/// (runtime/include/zrt/zrt.h).
def Zero_Arena : I32EnumAttr<"Arena", "an arena of the compiled program", [
    I32EnumAttrCase<"parameters", 0>,
    I32EnumAttrCase<"gradients", 1>,
    I32EnumAttrCase<"master_weights", 2>,
    I32EnumAttrCase<"moments", 3>,
    I32EnumAttrCase<"activations", 4>,
    I32EnumAttrCase<"temporaries", 5>,
    I32EnumAttrCase<"constants", 7>
  ]> {
  let cppNamespace = "::mlir::zero";
  let genSpecializedAttr = 0;
}

def Zero_SlotAttr : AttrDef<Zero_Dialect, "Slot"> {
  let mnemonic = "slot";
  let summary = "A byte range of one arena of the compiled program";
  let description = [{
    `bytes` bytes at byte `offset` of arena `arena` (64-byte aligned, the
    arenas' alignment: `offset` is a multiple of 64; `bytes` is not negative).

    `zero-layout-states` writes the state layout with it, and
    `convert-train-to-emitc` only reads it:
    - `zero.slot` on each state with storage (`train.param` without
      `zero.sharded`, `train.state`, `zero.shard`): where the state lives;
      the arena is the one of its kind (parameters, gradients, master
      weights, moments), `bytes` at least the tensor's bytes.
    - `zero.param_span` / `zero.grad_span` on a `zero.group`: its members'
      parameters (gradient states) lie back to back in member order from
      `offset`, so the group's flat buffer (`padded` elements, `bytes`
      bytes) is that range of the arena, its padding reserved and zero.
    - `zero.state_arena_bytes = {parameters = P, gradients = G,
      master_weights = M, moments = V}` on the module: each state arena's
      size; every slot and span lies inside its arena and no two state
      slots share a byte (checked on the module).

    Example:
    ```mlir
    train.param @w : tensor<4x4xf32> init(<zeros>) trainable {zero.slot = #zero.slot<parameters, 0, 64>}
    ```
  }];
  let parameters = (ins EnumParameter<Zero_Arena>:$arena, "int64_t":$offset,
                        "int64_t":$bytes);
  let assemblyFormat = "`<` $arena `,` $offset `,` $bytes `>`";
  let genVerifyDecl = 1;
}

/// What kind of storage a tensor value of a compiled step has (#zero.storage).
def Zero_StorageKind : I32EnumAttr<"StorageKind", "where a tensor value lives", [
    I32EnumAttrCase<"none", 0>,
    I32EnumAttrCase<"arena", 1>,
    I32EnumAttrCase<"state", 2>,
    I32EnumAttrCase<"tied", 3>,
    I32EnumAttrCase<"view", 4>,
    I32EnumAttrCase<"pack_slot", 5>,
    I32EnumAttrCase<"span", 6>,
    I32EnumAttrCase<"host_slot", 7>
  ]> {
  let cppNamespace = "::mlir::zero";
  let genSpecializedAttr = 0;
}

def Zero_StorageAttr : AttrDef<Zero_Dialect, "Storage"> {
  let mnemonic = "storage";
  let summary = "Where one tensor value of a compiled step lives";
  let description = [{
    `zero-buffer-assign` writes one `#zero.storage` for every result of
    every op of the step's functions (`zero.storage = [...]`, one entry per
    result), for every used argument (`zero.storage` argument attribute)
    and for the scratch of every op that needs a kernel workspace
    (`zero.scratch`). `convert-train-to-emitc` only reads them: it makes no
    choice of its own, refuses a function without them, and checks that
    each recorded choice is one the step allows (a view of a state that the
    state's writes would change under it, an AdamW update in place that
    another read would observe, ... are refused with the reason).

    The kinds:
    - `none`: no buffer (a `!zero.pending` result: its buffer is the
      result of its `zero.wait`).
    - `arena <arena>, offset = O, bytes = B, live = [F, L]`: bytes
      [O, O + B) of the activation or temporary arena (O a multiple of 64,
      B at least the tensor's bytes), live from op position F to L of its
      function (positions count the body's ops from 0; -1 is the entry).
      Scratch has `live = [P, P]`, its op's position. A program constant
      (`train.rope_table`) is `arena constants, offset = O, bytes = B`, its
      `zero.slot`, without `live`.
    - `state @s`: the memory of state `@s` (a `train.load` that reads the
      state in place instead of copying it; a value computed straight into
      the state it is stored into: store forwarding).
    - `tied N`: the buffer of operand #N (a `train.adamw` /
      `zero.shard_adamw` update computed in place in the state it updates).
    - `view N, offset = E`: elements [E, E + numel) of operand #N's buffer
      (`train.reshape`, the members of `zero.unpack` and `zero.split`, the
      gradient of `train.cross_entropy_fused` over the logits).
    - `pack_slot, offset = E`: elements [E, E + numel) of the flat result
      of the `zero.pack` that is the value's only use (contiguous
      gradients: the pack copies nothing for it).
    - `span @g, <arena>`: group `@g`'s span of the parameters or gradients
      arena (`zero.param_span` / `zero.grad_span`): a flat buffer that is
      the members' states themselves (FSDP's flat parameter, DeepSpeed's
      contiguous gradients; an all-reduce in place over it).
    - `host_slot, offset = O, bytes = B, live = [F, L]`: bytes [O, O + B)
      of the step's pinned host block (not a device arena; O a multiple
      of 64), live from op position F to L: the result of a
      `zero.offload_wait` (P_a+cpu, zero-offload-checkpoints), written from
      its `zero.offload_start` on and read until the `zero.fetch_wait` of
      its fetch. The function's `zero.host_slot_bytes` is the block's size.

    Example:
    ```mlir
    %a = train.gelu %w {zero.storage = [#zero.storage<arena activations, offset = 256, bytes = 64, live = [1, 8]>]} : tensor<16xf32>
    %r = train.reshape %b {zero.storage = [#zero.storage<view 0, offset = 0>]} : tensor<4x16xf32> -> tensor<64xf32>
    %w = train.load @w {zero.storage = [#zero.storage<state @w>]} : tensor<16xf32>
    ```
  }];
  let parameters = (ins EnumParameter<Zero_StorageKind>:$kind,
                        EnumParameter<Zero_Arena>:$arena, "int64_t":$offset,
                        "int64_t":$bytes, "int64_t":$first, "int64_t":$last,
                        StringRefParameter<>:$symbol, "int64_t":$operand);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    static StorageAttr getNone(::mlir::MLIRContext *ctx);
    /// Bytes [offset, offset + bytes) of `arena` live over [first, last]
    /// (constants: first = last = 0, not printed).
    static StorageAttr getArena(::mlir::MLIRContext *ctx, Arena arena,
                                int64_t offset, int64_t bytes, int64_t first,
                                int64_t last);
    static StorageAttr getState(::mlir::MLIRContext *ctx,
                                ::llvm::StringRef symbol);
    static StorageAttr getTied(::mlir::MLIRContext *ctx, int64_t operand);
    static StorageAttr getView(::mlir::MLIRContext *ctx, int64_t operand,
                               int64_t elemOffset);
    static StorageAttr getPackSlot(::mlir::MLIRContext *ctx,
                                   int64_t elemOffset);
    static StorageAttr getSpan(::mlir::MLIRContext *ctx,
                               ::llvm::StringRef group, Arena arena);
    /// Bytes [offset, offset + bytes) of the pinned host block, live over
    /// [first, last].
    static StorageAttr getHostSlot(::mlir::MLIRContext *ctx, int64_t offset,
                                   int64_t bytes, int64_t first,
                                   int64_t last);
  }];
}

/// The axes of the rank mesh data × tensor, numbered as zrt_axis
/// (runtime/include/zrt/zrt.h).
def Zero_MeshAxis : I32EnumAttr<"MeshAxis", "an axis of the rank mesh", [
    I32EnumAttrCase<"data", 0>,
    I32EnumAttrCase<"tensor", 1>
  ]> {
  let cppNamespace = "::mlir::zero";
  let genSpecializedAttr = 0;
}
def Zero_MeshAxisAttr : EnumAttr<Zero_Dialect, Zero_MeshAxis, "mesh_axis"> {
  let assemblyFormat = "`<` $value `>`";
}

def Zero_MeshAttr : AttrDef<Zero_Dialect, "Mesh"> {
  let mnemonic = "mesh";
  let summary = "The rank mesh data × tensor of the program";
  let description = [{
    The program runs on `data` × `tensor` ranks, rank r = d·tensor + t
    (d the data-parallel index, t the tensor-parallel index; the ranks of
    one tensor group are consecutive, as zrt_mesh_init makes them). On the
    module as `zero.mesh`; without it the mesh is N × 1. `data` is 0 until
    the world size is known (`zero-tensor-parallel` without `world-size`).
    `tensor` is at least 1, `data` at least 0.

    Example:
    ```mlir
    module attributes {zero.mesh = #zero.mesh<data = 2, tensor = 2>} {}
    ```
  }];
  let parameters = (ins "int64_t":$data, "int64_t":$tensor);
  let assemblyFormat = "`<` `data` `=` $data `,` `tensor` `=` $tensor `>`";
  let genVerifyDecl = 1;
}

def Zero_TensorSplitAttr : AttrDef<Zero_Dialect, "TensorSplit"> {
  let mnemonic = "tensor_split";
  let summary = "How a parameter is cut over the tensor axis";
  let description = [{
    On a `train.param` as `zero.tensor_split`: the declared type is this
    tensor rank's part of the full parameter of shape `full`. Dimension
    `dim` of `full` is cut into `blocks` equal consecutive blocks (3 for a
    packed q/k/v projection, else 1), and each block into `parts` equal
    slices; tensor rank t holds slice t of every block, back to back.
    `full[dim]` is a multiple of blocks × parts and the declared shape is
    `full` with `full[dim] / parts` at `dim`.

    Example (c_fc of a GPT of width 64, M = 2, column-parallel):
    ```mlir
    train.param @h0.mlp.c_fc.weight : tensor<128x64xf32> init(<normal 0.02>) trainable {zero.tensor_split = #zero.tensor_split<dim = 0, blocks = 1, parts = 2, full = [256, 64]>}
    ```
  }];
  let parameters = (ins "int64_t":$dim, "int64_t":$blocks, "int64_t":$parts,
                        ArrayRefParameter<"int64_t">:$full);
  let assemblyFormat = [{
    `<` `dim` `=` $dim `,` `blocks` `=` $blocks `,` `parts` `=` $parts `,`
    `full` `=` `[` $full `]` `>`
  }];
  let genVerifyDecl = 1;
}

def Zero_ReduceKindAttr : EnumAttr<Zero_Dialect, Zero_ReduceKind, "reduce_kind"> {
  let assemblyFormat = "`<` $value `>`";
}

#endif // ZERO_ZERO_DIALECT_TD
