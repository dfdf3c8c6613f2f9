/* Compiles zrt.h as C99 and links the runtime from a C program, as a
 * generated program restricted to the C ABI would. */
#include "zrt/zrt.h"

#include <stdio.h>

int main(void) {
  float a[3] = {1.0f, 2.0f, 3.0f}, b[3] = {0.5f, 0.5f, 0.5f}, out[3];
  if (zrt_add(a, b, out, 3) != ZRT_OK || out[2] != 3.5f) {
    fprintf(stderr, "zrt_add failed: %s\n", zrt_last_error());
    return 1;
  }
  {
    /* The native bf16 kernels: 1 + 2 and 1 + 2^-8 (a tie: rounds to 1). */
    zrt_bf16 x[2] = {0x3f80, 0x3f80}, y[2] = {0x4000, 0x3b80}, z[2];
    if (zrt_add_bf16(x, y, z, 2) != ZRT_OK || z[0] != 0x4040 ||
        z[1] != 0x3f80 || zrt_attention_workspace_bf16(3, 2) != 69) {
      fprintf(stderr, "zrt_add_bf16 failed: %s\n", zrt_last_error());
      return 1;
    }
  }
  if (zrt_f32_to_bf16(1.0f) != 0x3f80) {
    fprintf(stderr, "zrt_f32_to_bf16 failed\n");
    return 1;
  }
  zrt_arena arena = NULL;
  if (zrt_arena_create(128, ZRT_MEM_PARAMETERS, &arena) != ZRT_OK ||
      zrt_memory_bytes(ZRT_MEM_PARAMETERS) != 128) {
    fprintf(stderr, "arena failed: %s\n", zrt_last_error());
    return 1;
  }
  zrt_arena_destroy(arena);
  if (zrt_fill(NULL, 0.0f, 1) != ZRT_ERR_INVALID_ARGUMENT) {
    fprintf(stderr, "expected ZRT_ERR_INVALID_ARGUMENT\n");
    return 1;
  }
  printf("C ABI ok: %s\n", zrt_status_name(ZRT_OK));
  return 0;
}
