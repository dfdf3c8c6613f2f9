// RUN: zero-translate --emit-cpp %s | FileCheck %s

// An array model (@forward's arguments carry train.names): the program
// takes its named inputs as an array of host pointers, and its model
// description lists them (model.h zrt_input_desc) after set_loss_scale;
// forward / forward_backward are NULL, seq is 1 and vocab 0.

train.param @w : tensor<3x4xf32> init(<ones>) trainable
func.func @forward(%x: tensor<2x4xf32> {train.name = "x"},
                   %t: tensor<2xi32> {train.name = "target"}) -> tensor<f32> {
  %w = train.load @w : tensor<3x4xf32>
  %h = train.matmul %x, %w {transpose_b} : tensor<2x4xf32>, tensor<3x4xf32> -> tensor<2x3xf32>
  %l = train.cross_entropy %h, %t : tensor<2x3xf32>, tensor<2xi32> -> tensor<f32>
  return %l : tensor<f32>
}

// CHECK: static const int64_t zrt_input0_shape[2] = {2, 4};
// CHECK-NEXT: static const int64_t zrt_input1_shape[1] = {2};
// CHECK-NEXT: static const zrt_input_desc zrt_inputs[2] = {
// CHECK-NEXT: {"x", ZRT_F32, 2, zrt_input0_shape},
// CHECK-NEXT: {"target", ZRT_I32, 1, zrt_input1_shape},
// CHECK-NEXT: };
// CHECK: static int zrt_gen_forward(const void *const* [[IN:v[0-9]+]], float* [[LOSS:v[0-9]+]]) {
// Input i is inputs[i], copied to its arena buffer.
// CHECK: const void *const [[P0:v[0-9]+]] = [[IN]][0];
// CHECK: void* [[D0:v[0-9]+]] = (void*) {{v[0-9]+}};
// CHECK-NEXT: int [[C0:v[0-9]+]] = zrt_copy_to_device([[D0]], [[P0]], 32);
// CHECK: const void *const [[P1:v[0-9]+]] = [[IN]][1];
// CHECK: zrt_copy_to_device({{v[0-9]+}}, [[P1]], 8);
// CHECK: zrt_cross_entropy_padded(
// CHECK: zrt_copy_to_host([[LOSS]], {{v[0-9]+}}, 4);
// CHECK-LABEL: static zrt_model_desc zrt_model = {
// CHECK-NEXT: ZRT_MODEL_ABI_VERSION, "model", 1, 0,
// CHECK-NEXT: /*batch=*/2, /*seq=*/1, /*vocab=*/0, /*padded_vocab=*/0,
// CHECK: zrt_gen_init, NULL, NULL, NULL, NULL, zrt_gen_destroy,
// CHECK: /*compile_info=*/{{.*}}, NULL,
// CHECK-NEXT: /*num_inputs=*/2, zrt_inputs, zrt_gen_forward, NULL
// CHECK-NEXT: };
