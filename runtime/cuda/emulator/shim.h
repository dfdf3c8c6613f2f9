// The CUDA execution model on the CPU, for the kernel emulator (README.md).
// Included through the emulator's stand-in <cuda_runtime.h>, so the kernel
// sources (transformed by gen.py at build time) see it where they would see
// the CUDA runtime.
//
//  * One fiber per thread (ucontext); the blocks of a grid run one after
//    another, in grid order, reversed or shuffled (emu::order); the threads
//    of a block are scheduled round-robin forward (order 0), reversed (1),
//    shuffled every round (2), or greedily restarted from the first (3) or
//    last (4) thread after every step that made progress.
//  * __syncthreads is a real barrier, tagged with its source line: every
//    thread of the block must arrive at the same one (else: error); a
//    deadlock (no fiber can progress) aborts.
//  * Warp collectives (shuffle, ldmatrix, mma) are real barriers among the
//    32 lanes, tagged with the operation: all 32 lanes must execute the same
//    one (.sync.aligned).
//  * Dynamic shared memory is filled with 0xFF (bf16 / f32 NaN) at the start
//    of every block. It is mapped twice (memfd): kernels whose shared memory
//    goes through emulated primitives (flash_attention_tc.cu) get the
//    PROT_NONE view smemView, so a direct dereference crashes, and the
//    primitives check every access with a per-byte race detector (epochs
//    separated by __syncthreads: read after another thread's write, write
//    after another thread's read or write in the same epoch, and any access
//    to the destination of a cp.async not yet waited for, are errors). The
//    other kernels dereference shared memory directly (smemRW): no race
//    detection there.
//  * cp.async: at issue the destination is poisoned (0xFF) and marked
//    pending; the copy lands when the issuing thread's cp.async.wait_group
//    retires its group (as late as the hardware may do it).
//  * ldmatrix / mma.m16n8k16: the PTX ISA fragment layouts (ldmatrix: lane
//    l addresses row l % 8 of matrix l / 8 and receives (l / 4, 2 (l % 4) +
//    {0, 1}), transposed with .trans; mma: "Matrix Fragments for
//    mma.m16n8k16 with floating point type", A: row g (+8 for a2,a3,a6,a7),
//    col 2 t + (i & 1) (+8 for i >= 4); B: row 2 t + (i & 1) (+8 for i >=
//    2), col g; C: row g (+8 for c2, c3), col 2 t + (i & 1); g = lane >> 2,
//    t = lane % 4; lower-indexed element in the low half of a register).
//    mma sums the exact products in double and rounds once to f32.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <setjmp.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>
#include <utility>
#include <vector>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __restrict__ __restrict
#define __align__(n) alignas(n)

struct alignas(16) uint4 {
  uint32_t x, y, z, w;
};
inline uint4 make_uint4(uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
  return {a, b, c, d};
}
struct alignas(8) uint2 {
  uint32_t x, y;
};
struct alignas(16) float4 {
  float x, y, z, w;
};
inline float4 make_float4(float a, float b, float c, float d) {
  return {a, b, c, d};
}
struct alignas(8) float2 {
  float x, y;
};
inline float2 make_float2(float a, float b) { return {a, b}; }
struct dim3 {
  unsigned x = 1, y = 1, z = 1;
  dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
};

inline float __uint_as_float(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}
inline uint32_t __float_as_uint(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}
inline float __int_as_float(int i) {
  float f;
  memcpy(&f, &i, 4);
  return f;
}
// The _rn intrinsics: IEEE round-to-nearest, as the host computes in f32.
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fdiv_rn(float a, float b) { return a / b; }
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fsub_rn(float a, float b) { return a - b; }
inline float __fsqrt_rn(float a) { return std::sqrt(a); }
inline float __fmaf_rn(float a, float b, float c) { return std::fma(a, b, c); }

namespace emu {
[[noreturn]] inline void die(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

inline dim3 threadIdx, blockIdx, blockDim, gridDim;

struct Copy {
  size_t off;
  const unsigned char *src;
  int n, srcBytes;
};
struct Fiber {
  jmp_buf jb;
  bool started = false, done = false;
  std::vector<Copy> open;
  std::vector<std::vector<Copy>> committed;
};
inline std::vector<Fiber> fibers;
inline ucontext_t schedCtx;
inline jmp_buf schedJb;
inline int cur = -1;
inline std::function<void()> body;
inline bool progress = false;
inline long blockGen = 0;
inline int blockArrived = 0;
inline int blockTag = 0;
inline long warpGen[32];
inline int warpArrived[32];
inline int warpTag[32];
inline int order = 0; // scheduling order, see above (0..4)
inline uint32_t seed = 1;
inline long long stats[8]; // 0 ldsm phases, 1 conflicted phases, 2 mma, 3
                           // barriers, 4 cp.async
inline int64_t epoch = 0;

// Knobs gen.py substitutes for grid-size limits of the kernel files, so
// small shapes reach the kernels' work loops (defaults: the real values).
inline int64_t tcMaxGrid = 2147483647; // flash_attention_tc.cu kTcMaxGrid
inline int64_t ySlicesCap = 65535;     // flash_attention.cu gridDim.y cap
inline int64_t lossMaxRowBlocks = int64_t(1) << 16; // loss.cu kLossMaxRowBlocks
inline long long launches = 0;

// Shared memory: PROT_NONE view for guarded kernels, RW view for the
// primitives and for the kernels that dereference shared memory.
inline size_t smemCap = 0, smemSize = 0;
inline unsigned char *smemView = nullptr, *smemRW = nullptr;
struct Shadow {
  int64_t wEpoch = -1, rEpoch = -1;
  int32_t writer = -1, reader = -1, pending = -1;
};
inline std::vector<Shadow> shadow;

inline void die(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "EMU ERROR (block %u,%u thread %d): ", blockIdx.x, blockIdx.y,
          cur);
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n");
  va_end(ap);
  abort();
}
#define EMU_ASSERT(c)                                                          \
  ((c) ? (void)0 : emu::die("%s:%d: %s", __FILE__, __LINE__, #c))

inline void mapSmem(size_t bytes) {
  if (bytes <= smemCap)
    return;
  if (smemView) {
    munmap(smemView, smemCap);
    munmap(smemRW, smemCap);
  }
  const size_t page = 65536;
  smemCap = (bytes + page - 1) / page * page;
  int fd = memfd_create("emu-smem", 0);
  if (fd < 0 || ftruncate(fd, smemCap))
    die("memfd");
  smemRW = (unsigned char *)mmap(nullptr, smemCap, PROT_READ | PROT_WRITE,
                                 MAP_SHARED, fd, 0);
  smemView =
      (unsigned char *)mmap(nullptr, smemCap, PROT_NONE, MAP_SHARED, fd, 0);
  if (smemRW == MAP_FAILED || smemView == MAP_FAILED)
    die("mmap");
  close(fd);
  shadow.assign(smemCap, Shadow());
}

/// Offset of shared pointer p (checked: inside, aligned to `align`).
inline size_t smemOff(const void *p, size_t n, size_t align) {
  const unsigned char *c = (const unsigned char *)p;
  if (c < smemView || c + n > smemView + smemSize)
    die("shared access %p (+%zu) outside the %zu bytes of dynamic shared "
        "memory",
        p, n, smemSize);
  const size_t off = c - smemView;
  if (off % align)
    die("shared access at offset %zu not %zu-byte aligned", off, align);
  return off;
}

inline void checkRead(size_t off, size_t n, const char *what) {
  for (size_t i = off; i < off + n; ++i) {
    Shadow &s = shadow[i];
    if (s.pending >= 0)
      die("%s: read of byte %zu, destination of a pending cp.async of thread "
          "%d",
          what, i, s.pending);
    if (s.wEpoch == epoch && s.writer != cur)
      die("%s: RAW race on byte %zu (written by thread %d in this epoch)", what,
          i, s.writer);
    if (s.rEpoch != epoch) {
      s.rEpoch = epoch;
      s.reader = cur;
    } else if (s.reader != cur)
      s.reader = -2;
  }
}
inline void checkWrite(size_t off, size_t n, const char *what) {
  for (size_t i = off; i < off + n; ++i) {
    Shadow &s = shadow[i];
    if (s.pending >= 0)
      die("%s: write of byte %zu, destination of a pending cp.async of thread "
          "%d",
          what, i, s.pending);
    if (s.wEpoch == epoch && s.writer != cur)
      die("%s: WW race on byte %zu (thread %d wrote it in this epoch)", what, i,
          s.writer);
    if (s.rEpoch == epoch && s.reader != cur)
      die("%s: WAR race on byte %zu (read by thread %d in this epoch)", what, i,
          s.reader);
    s.wEpoch = epoch;
    s.writer = cur;
  }
}

/// A vector access through reinterpret_cast: p must be aligned to its size.
template <class T> T *aligned(T *p) {
  if (reinterpret_cast<uintptr_t>(p) % sizeof(T))
    die("%zu-byte vector access at %p", sizeof(T), (const void *)p);
  return p;
}

inline int linearTid() { return threadIdx.x + threadIdx.y * blockDim.x; }
// Fibers switch with _setjmp/_longjmp, which (unlike swapcontext) make no
// signal-mask system call: most of the emulator's time is spent switching.
// Each stack slot gets one trampoline (makecontext/swapcontext once per
// slot, for the life of the process) that loops: park at its start point,
// run a thread's body when the scheduler jumps there, mark it done, park
// again. Starting a thread is then one _longjmp.
inline void yield() {
  if (!_setjmp(fibers[cur].jb))
    _longjmp(schedJb, 1);
}
struct Slot0 {
  ucontext_t ctx;
  jmp_buf start;
  bool made = false;
};
inline std::vector<Slot0> slotStarts;
inline void trampoline() {
  const int slot = cur;
  for (;;) {
    if (!_setjmp(slotStarts[slot].start))
      _longjmp(schedJb, 1); // parked; the scheduler jumps back to start
    body();
    Fiber &f = fibers[cur];
    if (!f.open.empty() || !f.committed.empty())
      die("thread exits with cp.async not waited for");
    f.done = true;
    progress = true;
  }
}
inline void syncthreads(int line) {
  if (blockArrived == 0)
    blockTag = line;
  else if (blockTag != line)
    die("__syncthreads at line %d while others wait at line %d", line,
        blockTag);
  const long g = blockGen;
  if (++blockArrived == (int)fibers.size()) {
    blockArrived = 0;
    ++blockGen;
    ++epoch;
    ++stats[3];
    progress = true;
    return;
  }
  while (blockGen == g)
    yield();
}
inline void warpSync(int tag) {
  const int w = linearTid() / 32;
  if (warpArrived[w] == 0)
    warpTag[w] = tag;
  else if (warpTag[w] != tag)
    die("warp %d: divergent collectives (tag %d vs %d)", w, tag, warpTag[w]);
  // A partial last warp (a block of, say, 1 thread) has fewer lanes.
  const int lanes = std::min(32, (int)fibers.size() - 32 * w);
  const long g = warpGen[w];
  if (++warpArrived[w] == lanes) {
    warpArrived[w] = 0;
    ++warpGen[w];
    progress = true;
    return;
  }
  while (warpGen[w] == g)
    yield();
}

enum { TAG_SHFL = 1, TAG_LDSM = 2, TAG_LDSMT = 3, TAG_MMA = 4, TAG_SHFLD = 5 };
struct Slot {
  float f;
  double d;
  size_t off;
  uint32_t a[4], b[2];
};
inline Slot slots[32][32];

template <class T> T shflXor(T v, int o) {
  const int t = linearTid(), w = t / 32, lane = t % 32;
  constexpr bool dbl = sizeof(T) == 8;
  if ((int)fibers.size() < 32 * (w + 1))
    die("full-mask shuffle in a warp of fewer than 32 threads");
  if (dbl)
    slots[w][lane].d = v;
  else
    slots[w][lane].f = v;
  warpSync(dbl ? TAG_SHFLD : TAG_SHFL);
  const T r = dbl ? (T)slots[w][lane ^ o].d : (T)slots[w][lane ^ o].f;
  warpSync(dbl ? TAG_SHFLD : TAG_SHFL);
  return r;
}

inline uint16_t rd16(size_t off) {
  uint16_t x;
  memcpy(&x, smemRW + off, 2);
  return x;
}

inline void ldsm(uint32_t (&r)[4], const void *p, bool trans) {
  const int t = linearTid(), w = t / 32, lane = t % 32;
  const size_t off = smemOff(p, 16, 16);
  checkRead(off, 16, trans ? "ldmatrix.trans" : "ldmatrix");
  slots[w][lane].off = off;
  warpSync(trans ? TAG_LDSMT : TAG_LDSM);
  if (lane == 0) {
    for (int i = 0; i < 4; ++i) {
      unsigned seen = 0;
      bool conflict = false;
      for (int j = 0; j < 8; ++j) {
        const unsigned q = (slots[w][8 * i + j].off / 16) % 8;
        if (seen & (1u << q))
          conflict = true;
        seen |= 1u << q;
      }
      ++stats[0];
      stats[1] += conflict;
    }
  }
  for (int i = 0; i < 4; ++i) {
    uint32_t v[2];
    for (int e = 0; e < 2; ++e) {
      int row, col;
      if (!trans) {
        row = lane / 4;
        col = 2 * (lane % 4) + e;
      } else {
        row = 2 * (lane % 4) + e;
        col = lane / 4;
      }
      v[e] = rd16(slots[w][8 * i + row].off + 2 * col);
    }
    r[i] = v[0] | (v[1] << 16);
  }
  warpSync(trans ? TAG_LDSMT : TAG_LDSM);
}

inline float bf(uint32_t h) { return __uint_as_float(h << 16); }

inline void mma(float (&d)[4], const uint32_t (&a)[4], uint32_t b0,
                uint32_t b1) {
  const int t = linearTid(), w = t / 32, lane = t % 32;
  Slot &s = slots[w][lane];
  for (int i = 0; i < 4; ++i)
    s.a[i] = a[i];
  s.b[0] = b0;
  s.b[1] = b1;
  warpSync(TAG_MMA);
  float A[16][16], B[16][8];
  for (int L = 0; L < 32; ++L) {
    const int g = L >> 2, tq = L & 3;
    for (int i = 0; i < 8; ++i) {
      const uint32_t reg = slots[w][L].a[i / 2];
      const uint32_t h = (i & 1) ? reg >> 16 : reg & 0xffff;
      const int row = (i < 2 || (i >= 4 && i < 6)) ? g : g + 8;
      const int col = tq * 2 + (i & 1) + (i >= 4 ? 8 : 0);
      A[row][col] = bf(h);
    }
    for (int i = 0; i < 4; ++i) {
      const uint32_t reg = slots[w][L].b[i / 2];
      const uint32_t h = (i & 1) ? reg >> 16 : reg & 0xffff;
      const int row = tq * 2 + (i & 1) + (i >= 2 ? 8 : 0);
      B[row][g] = bf(h);
    }
  }
  const int g = lane >> 2, tq = lane & 3;
  float out[4];
  for (int i = 0; i < 4; ++i) {
    const int row = i < 2 ? g : g + 8, col = tq * 2 + (i & 1);
    double acc = d[i];
    for (int k = 0; k < 16; ++k)
      acc += (double)A[row][k] * (double)B[k][col];
    out[i] = (float)acc;
  }
  if (lane == 0)
    ++stats[2];
  warpSync(TAG_MMA);
  for (int i = 0; i < 4; ++i)
    d[i] = out[i];
}

/// Global buffers the kernels may address with cp.async (empty: unchecked).
inline std::vector<std::pair<const unsigned char *, size_t>> regions;
inline void checkGlobal(const void *p, size_t n, const char *what) {
  if (regions.empty())
    return;
  const unsigned char *c = (const unsigned char *)p;
  for (auto &r : regions)
    if (c >= r.first && c + n <= r.first + r.second)
      return;
  die("%s: global address %p (+%zu) outside every buffer", what, p, n);
}
inline void cpAsync(void *dst, const void *src, int n, int srcBytes) {
  if (srcBytes != 0 && srcBytes != n)
    die("cp.async src-size %d of %d", srcBytes, n);
  checkGlobal(src, n, "cp.async source (even with src-size 0)");
  const size_t off = smemOff(dst, n, n);
  if (((uintptr_t)src) % n)
    die("cp.async source %p not %d-byte aligned", src, n);
  checkWrite(off, n, "cp.async issue");
  for (int i = 0; i < n; ++i) {
    shadow[off + i].pending = cur;
    smemRW[off + i] = 0xff;
  }
  fibers[cur].open.push_back({off, (const unsigned char *)src, n, srcBytes});
  ++stats[4];
}
inline void cpCommit() {
  Fiber &f = fibers[cur];
  f.committed.push_back(f.open);
  f.open.clear();
}
inline void cpWait(int N) {
  Fiber &f = fibers[cur];
  while ((int)f.committed.size() > N) {
    for (const Copy &c : f.committed.front()) {
      for (int i = 0; i < c.n; ++i) {
        smemRW[c.off + i] = i < c.srcBytes ? c.src[i] : 0;
        Shadow &s = shadow[c.off + i];
        s.pending = -1;
        s.wEpoch = epoch;
        s.writer = cur;
      }
    }
    f.committed.erase(f.committed.begin());
  }
}

/// Fiber stacks, one per thread slot of the largest block (1024): reserved
/// once (untouched pages cost nothing), never moved, so the trampolines
/// parked on them stay valid.
constexpr size_t kStack = 256 << 10;
constexpr unsigned kMaxThreads = 1024;
inline char *stacks = nullptr;

/// Runs f on every thread of every block of grid x block, with smemBytes of
/// dynamic shared memory.
inline void launch(dim3 grid, dim3 block, size_t smemBytes,
                   const std::function<void()> &f) {
  const unsigned nthreads = block.x * block.y * block.z;
  if (block.z != 1 || nthreads > 1024 || nthreads == 0)
    die("block shape %ux%ux%u", block.x, block.y, block.z);
  if (grid.x < 1 || grid.y < 1 || grid.z != 1 || grid.x > 2147483647u ||
      grid.y > 65535)
    die("grid shape %ux%ux%u", grid.x, grid.y, grid.z);
  if (smemBytes > 232448)
    die("%zu bytes of dynamic shared memory", smemBytes);
  ++launches;
  blockDim = block;
  gridDim = grid;
  mapSmem(smemBytes + 16);
  smemSize = smemBytes;
  if (!stacks) {
    stacks = (char *)mmap(nullptr, kStack * kMaxThreads, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (stacks == MAP_FAILED)
      die("stacks");
    slotStarts.resize(kMaxThreads);
  }
  std::vector<std::pair<unsigned, unsigned>> ord;
  for (unsigned y = 0; y < grid.y; ++y)
    for (unsigned x = 0; x < grid.x; ++x)
      ord.push_back({x, y});
  // Seeded per launch (the shuffled order only: seeding costs 624 words).
  static std::mt19937 gen;
  if (order == 2)
    gen.seed(seed);
  ++seed;
  if (order == 2)
    std::shuffle(ord.begin(), ord.end(), gen);
  if (order == 1)
    std::reverse(ord.begin(), ord.end());
  const size_t touched =
      std::min(smemCap, (smemBytes + 16 + 4095) / 4096 * 4096);
  for (auto [bx, by] : ord) {
    blockIdx = dim3(bx, by);
    ++epoch;
    memset(smemRW, 0xff, touched);
    for (size_t i = 0; i < touched; ++i)
      if (shadow[i].pending >= 0)
        die("pending cp.async across blocks");
    fibers.assign(nthreads, Fiber());
    body = f;
    blockArrived = 0;
    memset(warpArrived, 0, sizeof warpArrived);
    for (unsigned t = 0; t < nthreads; ++t) {
      Slot0 &sl = slotStarts[t];
      if (sl.made)
        continue;
      sl.made = true;
      getcontext(&sl.ctx);
      sl.ctx.uc_stack.ss_sp = stacks + kStack * t;
      sl.ctx.uc_stack.ss_size = kStack;
      sl.ctx.uc_link = nullptr;
      makecontext(&sl.ctx, (void (*)())trampoline, 0);
      cur = t;
      if (!_setjmp(schedJb))
        swapcontext(&schedCtx, &sl.ctx); // runs to the first park
    }
    std::vector<int> perm(nthreads);
    for (unsigned t = 0; t < nthreads; ++t)
      perm[t] = t;
    if (order == 1 || order == 4)
      std::reverse(perm.begin(), perm.end());
    if (order == 2)
      std::shuffle(perm.begin(), perm.end(), gen);
    const bool greedy = order >= 3;
    for (;;) {
      bool any = false;
      progress = false;
      if (order == 2)
        std::shuffle(perm.begin(), perm.end(), gen);
      for (int t : perm) {
        if (fibers[t].done)
          continue;
        any = true;
        cur = t;
        threadIdx = dim3(t % block.x, t / block.x);
        Fiber &fb = fibers[t];
        if (!_setjmp(schedJb)) {
          if (!fb.started) {
            fb.started = true;
            _longjmp(slotStarts[t].start, 1);
          } else
            _longjmp(fb.jb, 1);
        }
        if (greedy && progress)
          break;
      }
      if (!any)
        break;
      if (!progress)
        die("DEADLOCK");
    }
    cur = -1;
  }
}
} // namespace emu

using emu::blockDim;
using emu::blockIdx;
using emu::gridDim;
using emu::threadIdx;
#define __syncthreads() emu::syncthreads(__LINE__)
inline float __shfl_xor_sync(unsigned mask, float v, int o) {
  if (mask != 0xffffffffu)
    emu::die("shuffle mask %x", mask);
  return emu::shflXor(v, o);
}
inline double __shfl_xor_sync(unsigned mask, double v, int o) {
  if (mask != 0xffffffffu)
    emu::die("shuffle mask %x", mask);
  return emu::shflXor(v, o);
}
