// The CUDA backend's rank mesh data x tensor (comm.cpp: one NCCL
// communicator per axis, split from the world's) on the emulator, with the
// checks of the CPU backend's CommTest.MeshAxesSplitTheWorld
// (runtime/test/comm_test.cpp) on device buffers:
//
//   mpirun -np 4 zrt_cuda_emulated_mesh_test   (ZRT_EMU_STREAMS set by the
//                                               ctest entry)
//
// For every M dividing N: the axis ranks and sizes (r = d*M + t), one
// collective of each kind per axis (blocking and started) against its
// closed form, the axis-less collectives on the data axis, and the bytes
// and calls counted per axis with that axis's size; then the errors (a
// tensor size that does not divide N, 0, a bad axis, a mesh change with a
// collective in flight). Prints one line per failed check and "ALL OK" on
// rank 0; exits 1 on a failed check.
#include "zrt/zrt.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

int failures = 0;
int rank = 0, N = 1;

void expect(bool ok, const std::string &what) {
  if (!ok) {
    std::printf("rank %d FAIL: %s\n", rank, what.c_str());
    ++failures;
  }
}

void must(int status, const char *what) {
  if (status != ZRT_OK) {
    std::fprintf(stderr, "rank %d: %s: %s\n", rank, what, zrt_last_error());
    std::exit(2);
  }
}

bool hasError(const char *part) {
  return std::strstr(zrt_last_error(), part) != nullptr;
}

/// Device buffers from one arena.
struct Device {
  zrt_arena arena = nullptr;
  Device() { must(zrt_arena_create(int64_t(1) << 20, 0, &arena), "arena"); }
  ~Device() { zrt_arena_destroy(arena); }
  void *alloc(int64_t bytes) {
    int64_t off = 0;
    must(zrt_arena_alloc(arena, bytes, 256, &off), "zrt_arena_alloc");
    return static_cast<char *>(zrt_arena_base(arena)) + off;
  }
  float *put(const std::vector<float> &h) {
    auto *d = static_cast<float *>(alloc(h.size() * 4));
    must(zrt_copy_to_device(d, h.data(), h.size() * 4), "copy_to_device");
    return d;
  }
  std::vector<float> get(const float *d, int64_t n) {
    std::vector<float> h(n);
    must(zrt_copy_to_host(h.data(), d, n * 4), "copy_to_host");
    return h;
  }
};

void checkMesh(Device &dev, int M) {
  const std::string at = "M = " + std::to_string(M) + ": ";
  must(zrt_mesh_init(M), "zrt_mesh_init");
  const int Nd = N / M, d = rank / M, t = rank % M;
  expect(zrt_axis_size(ZRT_AXIS_DATA) == Nd, at + "data axis size");
  expect(zrt_axis_size(ZRT_AXIS_TENSOR) == M, at + "tensor axis size");
  expect(zrt_axis_rank(ZRT_AXIS_DATA) == d, at + "data axis rank");
  expect(zrt_axis_rank(ZRT_AXIS_TENSOR) == t, at + "tensor axis rank");
  expect(zrt_rank() == rank && zrt_world_size() == N, at + "world");
  zrt_comm_reset();

  const int64_t n = 3;
  float *x = dev.put(std::vector<float>(n, static_cast<float>(rank)));
  float *y = dev.put(std::vector<float>(n, -1.0f));
  // Tensor all-reduce: the sum over t' of (d*M + t').
  must(zrt_all_reduce_axis(ZRT_AXIS_TENSOR, x, y, n, ZRT_F32, ZRT_SUM),
       "all_reduce tensor");
  for (float v : dev.get(y, n))
    expect(v == static_cast<float>(M * d * M + M * (M - 1) / 2),
           at + "tensor all-reduce");
  // Data all-reduce, started, avg: the mean over d' of (d'*M + t).
  zrt_request req = nullptr;
  must(zrt_all_reduce_axis_start(ZRT_AXIS_DATA, x, y, n, ZRT_F32, ZRT_AVG,
                                 &req),
       "all_reduce_start data");
  must(zrt_wait(req), "zrt_wait");
  for (float v : dev.get(y, n))
    expect(v == static_cast<float>(M) * (Nd - 1) / 2.0f + t,
           at + "data all-reduce (avg)");
  // Tensor all-gather: slot t' holds rank d*M + t''s values.
  float *g = dev.put(std::vector<float>(n * M, -1.0f));
  must(zrt_all_gather_axis(ZRT_AXIS_TENSOR, x, g, n, ZRT_F32),
       "all_gather tensor");
  std::vector<float> hg = dev.get(g, n * M);
  for (int tt = 0; tt < M; ++tt)
    expect(hg[tt * n] == static_cast<float>(d * M + tt),
           at + "tensor all-gather slot " + std::to_string(tt));
  // Data all-gather, started.
  float *gd = dev.put(std::vector<float>(n * Nd, -1.0f));
  must(zrt_all_gather_axis_start(ZRT_AXIS_DATA, x, gd, n, ZRT_F32, &req),
       "all_gather_start data");
  must(zrt_wait(req), "zrt_wait");
  std::vector<float> hgd = dev.get(gd, n * Nd);
  for (int dd = 0; dd < Nd; ++dd)
    expect(hgd[dd * n] == static_cast<float>(dd * M + t),
           at + "data all-gather slot " + std::to_string(dd));
  // Reduce-scatters on each axis: slot s of the sum over the axis of
  // (rank + s).
  for (int axis : {ZRT_AXIS_DATA, ZRT_AXIS_TENSOR}) {
    const int K = axis == ZRT_AXIS_DATA ? Nd : M;
    std::vector<float> full(n * K);
    for (int s = 0; s < K; ++s)
      for (int64_t i = 0; i < n; ++i)
        full[s * n + i] = static_cast<float>(rank + s);
    float *in = dev.put(full), *out = dev.put(std::vector<float>(n, -1.0f));
    must(zrt_reduce_scatter_axis_start(axis, in, out, n, ZRT_F32, ZRT_SUM,
                                       &req),
         "reduce_scatter_start");
    must(zrt_wait(req), "zrt_wait");
    const int mine = axis == ZRT_AXIS_DATA ? d : t;
    float want = 0.0f;
    for (int k = 0; k < K; ++k)
      want += static_cast<float>(
          (axis == ZRT_AXIS_DATA ? k * M + t : d * M + k) + mine);
    for (float v : dev.get(out, n))
      expect(v == want, at + "reduce-scatter on axis " + std::to_string(axis));
  }
  // The axis-less collectives are the data axis.
  must(zrt_all_reduce(x, y, n, ZRT_F32, ZRT_SUM), "all_reduce");
  expect(dev.get(y, n)[0] == static_cast<float>(M * Nd * (Nd - 1) / 2 + Nd * t),
         at + "zrt_all_reduce is the data axis");

  // Per-axis ring bytes, each with its own axis size; the totals add up.
  const int64_t tensorAr = 2 * n * 4 * (M - 1) / M;
  const int64_t dataAr = 2 * n * 4 * (Nd - 1) / Nd;
  expect(zrt_comm_axis_bytes(ZRT_AXIS_TENSOR, ZRT_COLL_ALL_REDUCE) == tensorAr,
         at + "tensor all-reduce bytes");
  expect(zrt_comm_axis_bytes(ZRT_AXIS_DATA, ZRT_COLL_ALL_REDUCE) == 2 * dataAr,
         at + "data all-reduce bytes");
  expect(zrt_comm_axis_bytes(ZRT_AXIS_TENSOR, ZRT_COLL_ALL_GATHER) ==
             n * 4 * (M - 1),
         at + "tensor all-gather bytes");
  expect(zrt_comm_axis_bytes(ZRT_AXIS_DATA, ZRT_COLL_ALL_GATHER) ==
             n * 4 * (Nd - 1),
         at + "data all-gather bytes");
  expect(zrt_comm_axis_bytes(ZRT_AXIS_DATA, ZRT_COLL_REDUCE_SCATTER) ==
             n * 4 * (Nd - 1),
         at + "data reduce-scatter bytes");
  expect(zrt_comm_axis_bytes(ZRT_AXIS_TENSOR, ZRT_COLL_REDUCE_SCATTER) ==
             n * 4 * (M - 1),
         at + "tensor reduce-scatter bytes");
  expect(zrt_comm_axis_calls(ZRT_AXIS_TENSOR, ZRT_COLL_ALL_REDUCE) == 1 &&
             zrt_comm_axis_calls(ZRT_AXIS_DATA, ZRT_COLL_ALL_REDUCE) == 2,
         at + "all-reduce calls per axis");
  expect(zrt_comm_bytes(ZRT_COLL_ALL_REDUCE) == tensorAr + 2 * dataAr &&
             zrt_comm_calls(ZRT_COLL_ALL_REDUCE) == 3,
         at + "totals are the sum of the axes");
  expect(zrt_comm_axis_bytes(2, ZRT_COLL_ALL_REDUCE) == -1 &&
             zrt_comm_axis_bytes(ZRT_AXIS_DATA, ZRT_COLL_NUM_KINDS) == -1,
         at + "bad axis or kind counts -1");
  zrt_comm_reset();
}

void checkErrors(Device &dev) {
  expect(zrt_mesh_init(N + 1) == ZRT_ERR_INVALID_ARGUMENT &&
             hasError(("tensor size " + std::to_string(N + 1) +
                       " does not divide the world size " + std::to_string(N))
                          .c_str()),
         std::string("mesh of N + 1: ") + zrt_last_error());
  expect(zrt_mesh_init(0) == ZRT_ERR_INVALID_ARGUMENT &&
             hasError("tensor size 0 must be at least 1"),
         std::string("mesh of 0: ") + zrt_last_error());
  float *x = dev.put(std::vector<float>(4, 1.0f));
  zrt_request req = reinterpret_cast<zrt_request>(0x1);
  expect(zrt_all_reduce_axis_start(2, x, x, 4, ZRT_F32, ZRT_SUM, &req) ==
                 ZRT_ERR_INVALID_ARGUMENT &&
             req == nullptr &&
             hasError("axis 2 is not ZRT_AXIS_DATA (0) or ZRT_AXIS_TENSOR (1)"),
         std::string("bad axis: ") + zrt_last_error());
  expect(zrt_all_gather_axis(-1, x, x, 1, ZRT_F32) == ZRT_ERR_INVALID_ARGUMENT,
         "all-gather on axis -1");
  expect(zrt_axis_rank(2) == -1 && zrt_axis_size(-1) == -1,
         "a bad axis has rank and size -1");
  // A mesh change while a collective of the data axis (N x 1: the world)
  // is in flight.
  must(zrt_mesh_init(1), "zrt_mesh_init");
  must(zrt_all_reduce_start(x, x, 4, ZRT_F32, ZRT_SUM, &req), "start");
  expect(zrt_mesh_init(1) == ZRT_ERR_INVALID_ARGUMENT &&
             hasError("called with 1 collective(s) in flight"),
         std::string("mesh change in flight: ") + zrt_last_error());
  must(zrt_wait(req), "zrt_wait");
  expect(zrt_mesh_init(1) == ZRT_OK, "mesh change after zrt_wait");
}

} // namespace

int main(int argc, char **argv) {
  must(zrt_init(&argc, &argv), "zrt_init");
  rank = zrt_rank();
  N = zrt_world_size();
  if (N != 4) {
    std::fprintf(stderr, "run with 4 ranks (mpirun -np 4)\n");
    return 2;
  }
  {
    Device dev;
    for (int M = 1; M <= N; ++M)
      if (N % M == 0)
        checkMesh(dev, M);
    checkErrors(dev);
    expect(zrt_axis_size(ZRT_AXIS_DATA) == N &&
               zrt_axis_size(ZRT_AXIS_TENSOR) == 1,
           "back to N x 1");
  }
  must(zrt_finalize(), "zrt_finalize");
  if (rank == 0)
    std::printf(failures ? "FAIL (%d on rank 0)\n" : "ALL OK\n", failures);
  return failures ? 1 : 0;
}
