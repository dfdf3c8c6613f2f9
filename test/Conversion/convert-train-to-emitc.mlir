// RUN: zero-opt %s --train-autodiff --train-fuse-cross-entropy --train-optimizer --zero-layout-states --train-fuse-adamw-cast --zero-fuse-state-runs --zero-buffer-assign=strategy=bump --convert-train-to-emitc | FileCheck %s
// RUN: zero-opt %s --train-autodiff --train-fuse-cross-entropy --train-optimizer --zero-layout-states --train-fuse-adamw-cast --zero-fuse-state-runs --zero-buffer-assign=strategy=bump --convert-train-to-emitc="emit-main=false emit-comments=false" | FileCheck %s --check-prefix=BARE
// RUN: zero-opt %s --train-autodiff --train-fuse-cross-entropy --train-optimizer --zero-partition="stage=2 world-size=2" --zero-layout-states --train-fuse-adamw-cast --zero-fuse-state-runs --zero-buffer-assign=strategy=bump --convert-train-to-emitc="emit-comments=false" | FileCheck %s --check-prefix=STAGE2

// convert-train-to-emitc on a complete training step (an embedding, a
// linear layer, cross-entropy over 2 of 3 classes): only EmitC is left.

// CHECK: emitc.include <"zrt/model.h">
// CHECK: emitc.include <"zrt/zrt.h">
// CHECK: emitc.global static @zrt_arena_parameters : !emitc.opaque<"zrt_arena"> = #emitc.opaque<"NULL">
// CHECK: emitc.global static @zrt_mem_parameters : !emitc.ptr<ui8> = #emitc.opaque<"NULL">
// CHECK: emitc.global static @zrt_states : !emitc.array<12x!emitc.opaque<"zrt_state_desc">> = #emitc.opaque<"{\0A  {\22emb\22, 0, ZRT_F32, 32, 0, -1, NULL},\0A  {\22emb.grad\22, 1, ZRT_F32, 32, 0, -1, NULL},

// Exact sizes: 3 parameters of 32, 12 and 3 f32 (128, 48 and 12 bytes),
// each 64-byte aligned; the moments twice that; activations (forward values
// the backward reads) and temporaries sized by the largest function.
// CHECK-LABEL: emitc.func @zrt_gen_init(
// CHECK-SAME: %[[SEED:.*]]: ui64) -> !emitc.opaque<"int"> attributes {specifiers = ["static"]}
// CHECK: call_opaque "zrt_arena_create"(%{{.*}}) {args = [256, #emitc.opaque<"ZRT_MEM_PARAMETERS">, 0 : index]}
// CHECK: call_opaque "zrt_arena_create"(%{{.*}}) {args = [256, #emitc.opaque<"ZRT_MEM_GRADIENTS">, 0 : index]}
// CHECK: call_opaque "zrt_arena_create"(%{{.*}}) {args = [0, #emitc.opaque<"ZRT_MEM_MASTER_WEIGHTS">, 0 : index]}
// CHECK: call_opaque "zrt_arena_create"(%{{.*}}) {args = [512, #emitc.opaque<"ZRT_MEM_MOMENTS">, 0 : index]}
// CHECK: call_opaque "zrt_arena_create"(%{{.*}}) {args = [192, #emitc.opaque<"ZRT_MEM_ACTIVATIONS">, 0 : index]}
// CHECK: call_opaque "zrt_arena_create"(%{{.*}}) {args = [{{[0-9]+}}, #emitc.opaque<"ZRT_MEM_TEMPORARIES">, 0 : index]}
// CHECK: %[[S:.*]] = call_opaque "zrt_param_seed"(%[[SEED]]) {args = [0 : index, #emitc.opaque<"\22emb\22">]} : (ui64) -> ui64
// CHECK-NEXT: call_opaque "zrt_init_param_slice"(%{{.*}}, %[[S]]) {args = [0 : index, #emitc.opaque<"ZRT_F32">, 0, 32, 0, 32, #emitc.opaque<"ZRT_INIT_NORMAL">, 2.000000e-02 : f32, 1 : index]}
// CHECK: #emitc.opaque<"ZRT_INIT_ZEROS">

// CHECK-LABEL: emitc.func @zrt_gen_forward(
// CHECK-SAME: %[[IDS:[^:]*]]: !emitc.ptr<!emitc.opaque<"const int32_t">>, %[[TGT:[^:]*]]: !emitc.ptr<!emitc.opaque<"const int32_t">>, %[[LOSS:[^:]*]]: !emitc.ptr<f32>) -> !emitc.opaque<"int">
// The host/device boundary: ids and targets are copied into arena buffers
// (2x2 int32: 16 bytes) on entry, and the kernels read those.
// CHECK: %[[IDB:.*]] = cast %{{.*}} : !emitc.ptr<ui8> to !emitc.ptr<!emitc.opaque<"const int32_t">>
// CHECK-NEXT: %[[IDV:.*]] = cast %[[IDB]] : !emitc.ptr<!emitc.opaque<"const int32_t">> to !emitc.ptr<!emitc.opaque<"void">>
// CHECK-NEXT: %[[C1:.*]] = call_opaque "zrt_copy_to_device"(%[[IDV]], %[[IDS]]) {args = [0 : index, 1 : index, 16]}
// CHECK-NEXT: call_opaque "ZRT_CHECK"(%[[C1]])
// CHECK: %[[TGB:.*]] = cast %{{.*}} : !emitc.ptr<ui8> to !emitc.ptr<!emitc.opaque<"const int32_t">>
// CHECK-NEXT: %[[TGV:.*]] = cast %[[TGB]] : !emitc.ptr<!emitc.opaque<"const int32_t">> to !emitc.ptr<!emitc.opaque<"void">>
// CHECK-NEXT: call_opaque "zrt_copy_to_device"(%[[TGV]], %[[TGT]]) {args = [0 : index, 1 : index, 16]}
// CHECK: verbatim "// train.embedding -> tensor<2x2x4xf32>"
// CHECK: %[[E:.*]] = call_opaque "zrt_embedding"(%{{.*}}, %[[IDB]], %{{.*}}) {args = [0 : index, 1 : index, 2 : index, 4, 8, 4]}
// CHECK-NEXT: call_opaque "ZRT_CHECK"(%[[E]]) : (!emitc.opaque<"int">) -> ()
// A linear layer on [2, 2, 4]: one GEMM with M = 4 rows, bias, transposed B.
// CHECK: call_opaque "zrt_matmul"({{.*}}) {args = [0 : index, 1 : index, 2 : index, 3 : index, 1, 4, 3, 4, 0, 1, 1.000000e+00 : f32, 0.000000e+00 : f32, #emitc.opaque<"ZRT_STRIDE_PACKED">, #emitc.opaque<"ZRT_STRIDE_PACKED">, #emitc.opaque<"ZRT_STRIDE_PACKED">]}
// The reshaped targets are a view of their arena buffer; the loss is copied
// to the caller's float.
// CHECK: %[[L:.*]] = cast %{{.*}} : !emitc.ptr<ui8> to !emitc.ptr<f32>
// CHECK-NEXT: call_opaque "zrt_cross_entropy_padded"(%{{.*}}, %[[TGB]], %[[L]]) {args = [0 : index, 1 : index, 2 : index, 4, 3, 2]}
// CHECK: verbatim "// func.return"
// CHECK-NEXT: call_opaque "zrt_copy_to_host"(%[[LOSS]], %[[L]]) {args = [0 : index, 1 : index, 4]}
// CHECK-NOT: dereference
// CHECK: return %{{.*}} : !emitc.opaque<"int">

// CHECK-LABEL: emitc.func @zrt_gen_forward_backward(
// CHECK: verbatim "// @forward_backward: 192 bytes of activations,
// The loss and its gradient in one pass (the loss seed 1.0 is the
// gradient's scale), the gradient written over the logits.
// CHECK: verbatim "// train.cross_entropy_fused -> tensor<f32>, tensor<4x3xf32> (the gradient over the logits)"
// CHECK: %[[CEL:.*]] = cast %{{.*}} : !emitc.ptr<ui8> to !emitc.ptr<f32>
// CHECK-NEXT: call_opaque "zrt_cross_entropy_padded_fused"(%[[LOGITS:.*]], %{{.*}}, %[[CEL]]) {args = [0 : index, 1 : index, 2 : index, 1.000000e+00 : f32, 4, 3, 2]}
// CHECK-NOT: zrt_cross_entropy_padded_backward
// CHECK: verbatim "// train.accumulate @w.grad"
// CHECK: call_opaque "zrt_axpy"
// CHECK: call_opaque "zrt_embedding_backward"

// The update runs in place on the state: no copies, stores elided; the
// gradient is zeroed in its state.
// CHECK-LABEL: emitc.func @zrt_gen_optimizer_step(
// CHECK-SAME: %[[LR:[^:]*]]: f32, %[[STEP:[^:]*]]: i64, %{{.*}}: f32, %[[NORM:[^:]*]]: !emitc.ptr<f32>)
// CHECK: %[[GG:.*]] = get_global @zrt_mem_gradients
// CHECK-NEXT: %[[GB:.*]] = load %[[GG]]
// The scalar arguments go to their 1-element buffers through host locals.
// CHECK: %[[LRL:.*]] = "emitc.variable"() <{value = #emitc.opaque<"0">}> : () -> !emitc.lvalue<f32>
// CHECK-NEXT: assign %[[LR]] : f32 to %[[LRL]]
// CHECK-NEXT: %[[LRA:.*]] = address_of %[[LRL]]
// CHECK-NEXT: call_opaque "zrt_copy_to_device"(%{{.*}}, %[[LRA]]) {args = [0 : index, 1 : index, 4]}
// CHECK: %[[STL:.*]] = "emitc.variable"() <{value = #emitc.opaque<"0">}> : () -> !emitc.lvalue<i64>
// CHECK-NEXT: assign %[[STEP]] : i64 to %[[STL]]
// CHECK-NEXT: %[[STA:.*]] = address_of %[[STL]]
// CHECK-NEXT: call_opaque "zrt_copy_to_device"(%{{.*}}, %[[STA]]) {args = [0 : index, 1 : index, 8]}
// The gradient norm: the squares of @emb.grad and @w.grad (back to back in
// the gradients arena: 128 bytes, then 48) are summed by one call over the
// 44 elements at the add that combined them; @b.grad (after w's 16-byte
// alignment gap) keeps its own sum and add.
// CHECK: verbatim "// train.sum_squares -> tensor<f32> (in a later sum of squares over adjacent states)"
// CHECK-NEXT: verbatim "// train.sum_squares -> tensor<f32> (in a later sum of squares over adjacent states)"
// CHECK-NEXT: verbatim "// train.add -> tensor<f32> (one sum of squares over adjacent states)"
// CHECK: %[[G0:.*]] = cast %[[GB]] : !emitc.ptr<ui8> to !emitc.ptr<f32>
// CHECK: call_opaque "zrt_sum_squares"(%[[G0]], %{{.*}}) {args = [0 : index, 44, 1 : index]}
// CHECK: verbatim "// train.sum_squares -> tensor<f32>"
// CHECK: call_opaque "zrt_sum_squares"(%{{.*}}, %{{.*}}) {args = [0 : index, 3, 1 : index]}
// CHECK: call_opaque "zrt_add"
// CHECK: call_opaque "zrt_clip_coef_scaled"
// CHECK-NOT: zrt_copy_any
// @emb and @w: one AdamW call over both (their parameters, gradients and
// moments lie back to back), with a table of the members and their weight
// decay flags; @b after the gap: its own call.
// CHECK: verbatim "// train.adamw -> tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32> (one AdamW call over adjacent states)"
// The clip coefficient is copied to a host local; lr and step are the
// arguments themselves.
// CHECK: %[[CL:.*]] = "emitc.variable"() <{value = #emitc.opaque<"0">}> : () -> !emitc.lvalue<f32>
// CHECK-NEXT: %[[CA:.*]] = address_of %[[CL]]
// CHECK-NEXT: call_opaque "zrt_copy_to_host"(%[[CA]], %{{.*}}) {args = [0 : index, 1 : index, 4]}
// CHECK: %[[COEF:.*]] = load %[[CL]] : <f32>
// CHECK-NOT: zrt_copy_any
// CHECK: call_opaque "zrt_shard_adamw"(%{{.*}}, %{{.*}}, %{{.*}}, %[[G0]], %[[LR]], %[[COEF]], %[[STEP]]) {args = [0 : index, 1 : index, 2 : index, 3 : index, #emitc.opaque<"ZRT_F32">, 44, #emitc.opaque<"0">, 2, #emitc.opaque<"zrt_adamw_run_offsets0">, #emitc.opaque<"zrt_adamw_run_numels0">, #emitc.opaque<"zrt_adamw_run_decay0">, 4 : index, 9.000000e-01, 0.99899999999999999, 1.000000e-08, 1.000000e-02, 5 : index, 6 : index]}
// CHECK: verbatim "// train.store @emb (no copy: computed in place)"
// The gradients are zeroed in their states, all three (back to back in
// the gradients arena: 128 + 64 + 64 bytes with the 64-byte alignment) by
// one fill at the last one's place.
// CHECK: verbatim "// train.fill -> tensor<8x4xf32> (zeroed by a later fill of adjacent states)"
// CHECK-NEXT: verbatim "// train.store @emb.grad (no copy: computed in place)"
// CHECK-NEXT: verbatim "// train.adamw -> tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32> (updated by an earlier AdamW call of adjacent states)"
// CHECK-NEXT: verbatim "// train.store @w (no copy: computed in place)"
// CHECK: verbatim "// train.fill -> tensor<3x4xf32> (zeroed by a later fill of adjacent states)"
// CHECK: verbatim "// train.adamw -> tensor<3xf32>, tensor<3xf32>, tensor<3xf32>"
// CHECK: call_opaque "zrt_adamw_step"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[LR]], %[[COEF]], %[[STEP]]) {args = [0 : index, 1 : index, 2 : index, 3 : index, #emitc.opaque<"NULL">, #emitc.opaque<"NULL">, 3, 4 : index, 9.000000e-01, 0.99899999999999999, 1.000000e-08, 0.000000e+00, 5 : index, 6 : index]}
// CHECK: verbatim "// train.fill -> tensor<3xf32> (one fill over adjacent states)"
// CHECK-NEXT: %[[Z:.*]] = cast %[[GB]] : !emitc.ptr<ui8> to !emitc.ptr<f32>
// CHECK-NEXT: call_opaque "zrt_fill"(%[[Z]]) {args = [0 : index, 0.000000e+00 : f32, 64]}
// CHECK: verbatim "// train.store @b.grad (no copy: computed in place)"
// CHECK: call_opaque "zrt_copy_to_host"(%[[NORM]], %{{.*}}) {args = [0 : index, 1 : index, 4]}

// CHECK-LABEL: emitc.func @zrt_gen_destroy()
// CHECK: call_opaque "zrt_arena_destroy"
// CHECK: emitc.global static @zrt_model : !emitc.opaque<"zrt_model_desc"> = #emitc.opaque<"{\0A  ZRT_MODEL_ABI_VERSION, \22model\22, 1, 0,\0A  /*batch=*/2, /*seq=*/2, /*vocab=*/2, /*padded_vocab=*/3,\0A  /*num_params=*/47,
// CHECK-LABEL: emitc.func @zrt_model_get() -> !emitc.ptr<!emitc.opaque<"const zrt_model_desc">>
// CHECK-LABEL: emitc.func @main(
// CHECK: call @zrt_model_get()
// CHECK: call_opaque "zrt_train_main"

// BARE-NOT: {{train\.|zero\.|func\.func}}
// BARE: emitc.func @zrt_model_get
// BARE-NOT: @main

// STAGE2: emitc.global static const @zrt_groups
// STAGE2-LABEL: emitc.func @zrt_gen_forward_backward(
// STAGE2: call_opaque "zrt_reduce_scatter"
// STAGE2-LABEL: emitc.func @zrt_gen_optimizer_step(
// STAGE2: call_opaque "zrt_shard_adamw"
// STAGE2: call_opaque "zrt_all_gather"
// STAGE2: #emitc.opaque<"{\0A  ZRT_MODEL_ABI_VERSION, \22model\22, 2, 2,

train.param @emb : tensor<8x4xf32> init(<normal, 2.000000e-02>) trainable
train.param @w : tensor<3x4xf32> init(<normal, 2.000000e-02>) trainable
train.param @b : tensor<3xf32> init(<zeros>) trainable
func.func @forward(%ids: tensor<2x2xi32>, %t: tensor<2x2xi32>) -> tensor<f32> {
  %e = train.load @emb : tensor<8x4xf32>
  %x = train.embedding %e, %ids : tensor<8x4xf32>, tensor<2x2xi32> -> tensor<2x2x4xf32>
  %w = train.load @w : tensor<3x4xf32>
  %b = train.load @b : tensor<3xf32>
  %y = train.matmul %x, %w bias %b {transpose_b} : tensor<2x2x4xf32>, tensor<3x4xf32>, tensor<3xf32> -> tensor<2x2x3xf32>
  %f = train.reshape %y : tensor<2x2x3xf32> -> tensor<4x3xf32>
  %ft = train.reshape %t : tensor<2x2xi32> -> tensor<4xi32>
  %l = train.cross_entropy %f, %ft {num_classes = 2 : i64} : tensor<4x3xf32>, tensor<4xi32> -> tensor<f32>
  return %l : tensor<f32>
}
