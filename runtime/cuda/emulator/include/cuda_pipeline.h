// Emulator stand-in for <cuda_pipeline.h> (loss.cu's row staging). As
// cp.async in shim.h: the destination (in the block's dynamic shared
// memory) is poisoned at issue and the copy lands when the issuing thread's
// __pipeline_wait_prior retires its batch, so a thread that reads another
// thread's staged data without a barrier in between reads NaN.
#pragma once
#include "cuda_runtime.h"
inline void __pipeline_memcpy_async(void *dst, const void *src, size_t n) {
  EMU_ASSERT(n == 16 || n == 8 || n == 4);
  EMU_ASSERT(reinterpret_cast<uintptr_t>(dst) % n == 0);
  EMU_ASSERT(reinterpret_cast<uintptr_t>(src) % n == 0);
  unsigned char *d = static_cast<unsigned char *>(dst);
  EMU_ASSERT(d >= emu::smemRW && d + n <= emu::smemRW + emu::smemSize);
  memset(d, 0xff, n);
  emu::fibers[emu::cur].open.push_back({size_t(d - emu::smemRW),
                                        static_cast<const unsigned char *>(src),
                                        int(n), int(n)});
}
inline void __pipeline_commit() { emu::cpCommit(); }
inline void __pipeline_wait_prior(size_t n) {
  emu::cpWait(static_cast<int>(n));
}
