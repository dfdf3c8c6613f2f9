// Host stand-ins for the context functions of zrt_cuda.h (common.cpp) the
// emulated kernel files call: errors, launch checks, the stream, the
// workspace and the device error word, on host memory.
#include "zrt_cuda.h"

#include <string>
#include <vector>

namespace {
std::string lastError;
int errorWord = 0;
} // namespace

namespace zrt_cuda {
int fail(int status, const char *fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  lastError = buf;
  return status;
}
const char *last_error() { return lastError.c_str(); }
void clear_error() { lastError.clear(); }
int check(int err, int status, const char *fn, const char *what) {
  return err == cudaSuccess
             ? ZRT_OK
             : fail(status, "%s: %s: emulated CUDA error %d", fn, what, err);
}
int launched(const char *fn) {
  return check(cudaGetLastError(), ZRT_ERR_INVALID_ARGUMENT, fn,
               "kernel launch");
}
cudaStream_t stream() { return nullptr; }
int workspace(int64_t bytes, void **out, const char *) {
  // 256-byte aligned like cudaMalloc; NaN-filled, grown only when needed.
  static std::vector<unsigned char> ws;
  if (ws.size() < static_cast<size_t>(bytes) + 256)
    ws.assign(bytes + 256, 0xff);
  uintptr_t a = reinterpret_cast<uintptr_t>(ws.data());
  *out = reinterpret_cast<void *>((a + 255) & ~uintptr_t(255));
  return ZRT_OK;
}
int *device_error_word() { return &errorWord; }
int take_device_error(const char *fn) {
  const int e = errorWord;
  errorWord = 0;
  return e ? fail(ZRT_ERR_OUT_OF_RANGE, "%s: device error %d", fn, e) : ZRT_OK;
}
} // namespace zrt_cuda
