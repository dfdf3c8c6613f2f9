// Emulator stand-in for the CUDA runtime header (README.md): the execution
// model of ../shim.h plus the few host API calls the emulated kernel files
// make, on host memory (a "device pointer" is a host pointer).
#pragma once
#include "../shim.h"

typedef int cudaError_t;
typedef struct CUstream_st *cudaStream_t;
enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4
};
enum { cudaSuccess = 0, cudaErrorInvalidValue = 1 };
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8 };
enum cudaDeviceAttr { cudaDevAttrMaxSharedMemoryPerBlockOptin = 97 };

namespace emu {
/// cudaDevAttrMaxSharedMemoryPerBlockOptin of the emulated device (H100/H200:
/// 227 KiB); tests lower it to reach the kernels' fallbacks.
inline int optin = 232448;
/// Largest dynamic shared memory size a kernel was opted in to (0: none).
inline int maxDynSmem = 0;
} // namespace emu

template <class K>
cudaError_t cudaFuncSetAttribute(K, cudaFuncAttribute attr, int bytes) {
  if (attr != cudaFuncAttributeMaxDynamicSharedMemorySize || bytes < 0 ||
      bytes > emu::optin)
    return cudaErrorInvalidValue;
  emu::maxDynSmem = std::max(emu::maxDynSmem, bytes);
  return cudaSuccess;
}
inline cudaError_t cudaGetDevice(int *d) {
  *d = 0;
  return cudaSuccess;
}
inline cudaError_t cudaDeviceGetAttribute(int *v, cudaDeviceAttr attr, int) {
  if (attr != cudaDevAttrMaxSharedMemoryPerBlockOptin)
    return cudaErrorInvalidValue;
  *v = emu::optin;
  return cudaSuccess;
}
inline cudaError_t cudaGetLastError() { return cudaSuccess; }
inline cudaError_t cudaMemcpyAsync(void *d, const void *s, size_t n,
                                   cudaMemcpyKind, cudaStream_t) {
  memmove(d, s, n);
  return cudaSuccess;
}
inline cudaError_t cudaMemsetAsync(void *d, int v, size_t n, cudaStream_t) {
  memset(d, v, n);
  return cudaSuccess;
}
inline const char *cudaGetErrorString(cudaError_t) {
  return "emulated CUDA error";
}
/// The only atomic the emulated files use; fibers switch only at barriers,
/// so a plain read-modify-write is atomic.
inline int atomicCAS(int *w, int cmp, int val) {
  const int old = *w;
  if (old == cmp)
    *w = val;
  return old;
}

// For the GoogleTest files of runtime/cuda/test (gtest_host.cpp): one
// emulated device; device memory is host memory.
typedef struct CUevent_st *cudaEvent_t;
inline cudaError_t cudaGetDeviceCount(int *c) {
  *c = 1;
  return cudaSuccess;
}
inline cudaError_t cudaMalloc(void **p, size_t n) {
  *p = aligned_alloc(256, (n + 255) / 256 * 256);
  return *p ? cudaSuccess : cudaErrorInvalidValue;
}
inline cudaError_t cudaFree(void *p) {
  free(p);
  return cudaSuccess;
}
inline cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }
inline cudaError_t cudaEventCreate(cudaEvent_t *e) {
  *e = nullptr;
  return cudaSuccess;
}
inline cudaError_t cudaEventDestroy(cudaEvent_t) { return cudaSuccess; }
inline cudaError_t cudaEventRecord(cudaEvent_t, cudaStream_t = nullptr) {
  return cudaSuccess;
}
inline cudaError_t cudaEventSynchronize(cudaEvent_t) { return cudaSuccess; }
inline cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t, cudaEvent_t) {
  *ms = 0;
  return cudaSuccess;
}
