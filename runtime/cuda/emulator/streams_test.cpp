// The emulated streams have teeth: programs that use a collective's result
// before zrt_wait, or overwrite its input before zrt_wait, compute the
// right numbers under eager streams but not under the lazy modes that the
// end-to-end tests run (include/cuda_runtime.h), while correct programs
// compute the same numbers under all three.
//
//   mpirun -np 2 zrt_cuda_emulated_streams_test        (ZRT_EMU_STREAMS set
//                                                       by the ctest entry)
//
// Prints one line per check and "ALL OK"; exits 1 on a failed check. Links
// zero_runtime_cuda_emulated, so the CUDA backend's own comm.cpp (events
// between the compute and the communication stream) is what runs.
#include "zrt/zrt.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

int failures = 0;

void expect(bool ok, const char *what) {
  std::printf("%s: %s\n", ok ? "ok" : "FAIL", what);
  if (!ok)
    ++failures;
}

void must(int status, const char *what) {
  if (status != ZRT_OK) {
    std::fprintf(stderr, "%s: %s\n", what, zrt_last_error());
    std::exit(2);
  }
}

std::vector<float> toHost(const float *d, int64_t n) {
  std::vector<float> h(n);
  must(zrt_copy_to_host(h.data(), d, n * 4), "zrt_copy_to_host");
  return h;
}

} // namespace

int main(int argc, char **argv) {
  must(zrt_init(&argc, &argv), "zrt_init");
  const int rank = zrt_rank(), N = zrt_world_size();
  const char *modeEnv = std::getenv("ZRT_EMU_STREAMS");
  const std::string mode = modeEnv && *modeEnv ? modeEnv : "eager";
  if (N != 2) {
    std::fprintf(stderr, "run with 2 ranks (mpirun -np 2)\n");
    return 2;
  }
  const int64_t n = 256; // elements per rank's shard
  zrt_arena arena = nullptr;
  must(zrt_arena_create(int64_t(1) << 20, 0, &arena), "zrt_arena_create");
  auto alloc = [&](int64_t elems) {
    int64_t off = 0;
    must(zrt_arena_alloc(arena, elems * 4, 256, &off), "zrt_arena_alloc");
    return reinterpret_cast<float *>(
        static_cast<char *>(zrt_arena_base(arena)) + off);
  };
  float *shard = alloc(n), *full = alloc(N * n), *grad = alloc(N * n),
        *reduced = alloc(n);
  const float mine = 1.0f + rank;

  // 1. All-gather, result read after zrt_wait: right in every mode.
  must(zrt_fill(shard, mine, n), "zrt_fill");
  must(zrt_fill(full, -1.0f, N * n), "zrt_fill");
  zrt_request req = nullptr;
  must(zrt_all_gather_start(shard, full, n, ZRT_F32, &req), "all_gather");
  must(zrt_wait(req), "zrt_wait");
  std::vector<float> h = toHost(full, N * n);
  expect(h[0] == 1.0f && h[n] == 2.0f && h[2 * n - 1] == 2.0f,
         "all-gather read after zrt_wait has both shards");

  // 2. All-gather, result read before zrt_wait: stale unless eager/early.
  must(zrt_fill(full, -1.0f, N * n), "zrt_fill");
  must(zrt_all_gather_start(shard, full, n, ZRT_F32, &req), "all_gather");
  h = toHost(full, N * n);
  const bool landed = h[n] == 2.0f;
  must(zrt_wait(req), "zrt_wait");
  if (mode == "late")
    expect(!landed, "late streams: an all-gather read before zrt_wait is "
                    "stale");
  else
    expect(landed, "eager/early streams: the all-gather ran at its start");

  // 3. Reduce-scatter whose input is overwritten before zrt_wait: the
  // overwrite leaks into the sum under late streams only.
  must(zrt_fill(grad, mine, N * n), "zrt_fill");
  must(zrt_reduce_scatter_start(grad, reduced, n, ZRT_F32, ZRT_SUM, &req),
       "reduce_scatter");
  must(zrt_fill(grad, 100.0f, N * n), "zrt_fill");
  must(zrt_wait(req), "zrt_wait");
  h = toHost(reduced, n);
  if (mode == "late")
    expect(h[0] == 200.0f, "late streams: an input overwritten before "
                           "zrt_wait changes the reduce-scatter");
  else
    expect(h[0] == 3.0f, "eager/early streams: the reduce-scatter read its "
                         "input at its start");

  // 4. Compute written after the start and read by the collective? No: the
  // collective waits for compute issued before its start only; a fill after
  // the start must not reach an all-gather under early streams.
  must(zrt_fill(shard, mine, n), "zrt_fill");
  must(zrt_all_gather_start(shard, full, n, ZRT_F32, &req), "all_gather");
  must(zrt_fill(shard, 50.0f, n), "zrt_fill");
  must(zrt_wait(req), "zrt_wait");
  h = toHost(full, N * n);
  if (mode == "late")
    expect(h[n] == 50.0f, "late streams: a shard overwritten after the "
                          "start reaches the all-gather");
  else
    expect(h[n] == 2.0f, "eager/early streams: the all-gather sent the "
                         "shard as it was at the start");

  // 5. bf16 average over two ranks (NCCL's ncclAvg: premultiplied sum).
  zrt_bf16 *b16 = reinterpret_cast<zrt_bf16 *>(alloc(n));
  zrt_bf16 *b16out = reinterpret_cast<zrt_bf16 *>(alloc(n));
  std::vector<zrt_bf16> hb(N * n, zrt_f32_to_bf16(rank ? 3.0f : 1.0f));
  must(zrt_copy_to_device(b16, hb.data(), N * n * 2), "copy_to_device");
  must(zrt_reduce_scatter(b16, b16out, n, ZRT_BF16, ZRT_AVG),
       "reduce_scatter bf16");
  must(zrt_copy_to_host(hb.data(), b16out, n * 2), "copy_to_host");
  expect(zrt_bf16_to_f32(hb[0]) == 2.0f, "bf16 average of 1 and 3 is 2");

  zrt_arena_destroy(arena);
  must(zrt_finalize(), "zrt_finalize");
  if (rank == 0)
    std::printf(failures ? "FAIL (%d)\n" : "ALL OK\n", failures);
  return failures ? 1 : 0;
}
