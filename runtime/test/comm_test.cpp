//===- comm_test.cpp - Collectives under mpirun -np 1/2/4 ------------------===//
//
// Every rank runs every test; data are integer-valued so f32 (and bf16 for
// small integers) sums are exact. Failures use EXPECT (not ASSERT) around
// collectives so that no rank skips a collective the others enter.
//
//===----------------------------------------------------------------------===//

#include "test_util.h"

#include <chrono>
#include <thread>

using namespace zrt_test;

namespace {

int R() { return zrt_rank(); }
int N() { return zrt_world_size(); }

// Value of element i of rank r's contribution.
float val(int r, int64_t i) { return static_cast<float>(r * 1000 + i); }

std::vector<uint16_t> toBf16(const std::vector<float> &x) {
  std::vector<uint16_t> h(x.size());
  zrt_cast_f32_to_bf16(x.data(), h.data(), static_cast<int64_t>(x.size()));
  return h;
}

std::vector<float> toF32(const std::vector<uint16_t> &h) {
  std::vector<float> x(h.size());
  zrt_cast_bf16_to_f32(h.data(), x.data(), static_cast<int64_t>(h.size()));
  return x;
}

} // namespace

TEST(CommTest, WorldInfo) {
  EXPECT_GE(N(), 1);
  EXPECT_GE(R(), 0);
  EXPECT_LT(R(), N());
  EXPECT_EQ(zrt_init(nullptr, nullptr), ZRT_OK); // second call: no-op
  EXPECT_EQ(zrt_barrier(), ZRT_OK);
}

TEST(CommTest, AllGatherF32AndBf16) {
  const int64_t n = 5;
  std::vector<float> send(n), recv(n * N(), -1.0f);
  for (int64_t i = 0; i < n; ++i)
    send[i] = val(R(), i);
  EXPECT_EQ(zrt_all_gather(send.data(), recv.data(), n, ZRT_F32), ZRT_OK);
  for (int r = 0; r < N(); ++r)
    for (int64_t i = 0; i < n; ++i)
      EXPECT_EQ(recv[r * n + i], val(r, i));

  // bf16: raw 16-bit payload moves unchanged (including a NaN).
  std::vector<uint16_t> hs = {static_cast<uint16_t>(0x3f80 + R()), 0x7fc1};
  std::vector<uint16_t> hr(2 * N());
  EXPECT_EQ(zrt_all_gather(hs.data(), hr.data(), 2, ZRT_BF16), ZRT_OK);
  for (int r = 0; r < N(); ++r) {
    EXPECT_EQ(hr[2 * r], 0x3f80 + r);
    EXPECT_EQ(hr[2 * r + 1], 0x7fc1);
  }

  // In place: the local shard already sits at offset rank * n.
  std::vector<float> buf(n * N(), -1.0f);
  for (int64_t i = 0; i < n; ++i)
    buf[R() * n + i] = val(R(), i);
  EXPECT_EQ(zrt_all_gather(buf.data() + R() * n, buf.data(), n, ZRT_F32),
            ZRT_OK);
  for (int r = 0; r < N(); ++r)
    for (int64_t i = 0; i < n; ++i)
      EXPECT_EQ(buf[r * n + i], val(r, i));
}

TEST(CommTest, ReduceScatterSumAvgMax) {
  const int64_t n = 3;
  std::vector<float> send(n * N());
  for (int64_t i = 0; i < n * N(); ++i)
    send[i] = val(R(), i);
  std::vector<float> recv(n);
  for (int op : {ZRT_SUM, ZRT_AVG, ZRT_MAX}) {
    EXPECT_EQ(zrt_reduce_scatter(send.data(), recv.data(), n, ZRT_F32, op),
              ZRT_OK);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t g = R() * n + i; // global index of my shard element
      double sum = 0, mx = -1e30;
      for (int r = 0; r < N(); ++r) {
        sum += val(r, g);
        mx = std::max<double>(mx, val(r, g));
      }
      const double want = op == ZRT_SUM   ? sum
                          : op == ZRT_AVG ? static_cast<float>(sum) *
                                                (1.0f / static_cast<float>(N()))
                                          : mx;
      EXPECT_EQ(recv[i], static_cast<float>(want)) << "op " << op;
    }
  }
}

TEST(CommTest, ReduceScatterBf16SumsInF32) {
  // Small integers are exact in bf16 (8 significant bits); the sum 1+..+N
  // per element too.
  const int64_t n = 4;
  std::vector<float> send(n * N());
  for (int64_t i = 0; i < n * N(); ++i)
    send[i] = static_cast<float>(R() + 1 + (i % 3));
  auto hs = toBf16(send);
  std::vector<uint16_t> hr(n);
  EXPECT_EQ(zrt_reduce_scatter(hs.data(), hr.data(), n, ZRT_BF16, ZRT_SUM),
            ZRT_OK);
  auto got = toF32(hr);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t g = R() * n + i;
    float want = 0;
    for (int r = 0; r < N(); ++r)
      want += static_cast<float>(r + 1 + (g % 3));
    EXPECT_EQ(got[i], zrt_bf16_to_f32(zrt_f32_to_bf16(want)));
  }
  // Accumulating in f32 and rounding once: rank 0 sends 256, the others 1.
  // The f32 sum 256 + (N-1) is rounded to bf16 once (N = 4: 259 -> 260);
  // accumulating in bf16 would give 256 or 258.
  std::vector<uint16_t> mixed(n * N(), zrt_f32_to_bf16(R() == 0 ? 256.f : 1.f));
  EXPECT_EQ(zrt_reduce_scatter(mixed.data(), hr.data(), n, ZRT_BF16, ZRT_SUM),
            ZRT_OK);
  const float once =
      zrt_bf16_to_f32(zrt_f32_to_bf16(256.0f + static_cast<float>(N() - 1)));
  if (N() == 4)
    EXPECT_EQ(once, 260.0f);
  for (int64_t i = 0; i < n; ++i)
    EXPECT_EQ(zrt_bf16_to_f32(hr[i]), once);
}

TEST(CommTest, AllReduceF32AndBf16) {
  const int64_t n = 7;
  std::vector<float> send(n), recv(n);
  for (int64_t i = 0; i < n; ++i)
    send[i] = val(R(), i);
  float sumR = 0;
  for (int r = 0; r < N(); ++r)
    sumR += r * 1000;
  EXPECT_EQ(zrt_all_reduce(send.data(), recv.data(), n, ZRT_F32, ZRT_SUM),
            ZRT_OK);
  for (int64_t i = 0; i < n; ++i)
    EXPECT_EQ(recv[i], sumR + N() * i);
  EXPECT_EQ(zrt_all_reduce(send.data(), recv.data(), n, ZRT_F32, ZRT_MAX),
            ZRT_OK);
  for (int64_t i = 0; i < n; ++i)
    EXPECT_EQ(recv[i], val(N() - 1, i));
  // In place average.
  std::vector<float> buf = send;
  EXPECT_EQ(zrt_all_reduce(buf.data(), buf.data(), n, ZRT_F32, ZRT_AVG),
            ZRT_OK);
  for (int64_t i = 0; i < n; ++i)
    EXPECT_EQ(buf[i], (sumR + N() * i) * (1.0f / N()));
  // bf16 sum, avg, max with small integers.
  std::vector<float> small(n);
  for (int64_t i = 0; i < n; ++i)
    small[i] = static_cast<float>(R() + i);
  auto hs = toBf16(small);
  std::vector<uint16_t> hr(n);
  for (int op : {ZRT_SUM, ZRT_AVG, ZRT_MAX}) {
    EXPECT_EQ(zrt_all_reduce(hs.data(), hr.data(), n, ZRT_BF16, op), ZRT_OK);
    auto got = toF32(hr);
    for (int64_t i = 0; i < n; ++i) {
      float sum = 0;
      for (int r = 0; r < N(); ++r)
        sum += static_cast<float>(r + i);
      const float want = op == ZRT_SUM   ? sum
                         : op == ZRT_AVG ? sum * (1.0f / N())
                                         : static_cast<float>(N() - 1 + i);
      EXPECT_EQ(got[i], zrt_bf16_to_f32(zrt_f32_to_bf16(want))) << "op " << op;
    }
  }
  // bf16 in place.
  EXPECT_EQ(zrt_all_reduce(hs.data(), hs.data(), n, ZRT_BF16, ZRT_MAX),
            ZRT_OK);
  EXPECT_EQ(toF32(hs)[0], static_cast<float>(N() - 1));
}

TEST(CommTest, BroadcastFromRoot) {
  for (int root : {0, N() - 1}) {
    std::vector<float> buf(6, static_cast<float>(R()));
    if (R() == root)
      for (int i = 0; i < 6; ++i)
        buf[i] = 100.0f + i;
    EXPECT_EQ(zrt_broadcast(buf.data(), 6, ZRT_F32, root), ZRT_OK);
    for (int i = 0; i < 6; ++i)
      EXPECT_EQ(buf[i], 100.0f + i);
  }
  uint16_t h = R() == 0 ? 0x4049 : 0;
  EXPECT_EQ(zrt_broadcast(&h, 1, ZRT_BF16, 0), ZRT_OK);
  EXPECT_EQ(h, 0x4049);
  float x = 0;
  EXPECT_EQ(zrt_broadcast(&x, 1, ZRT_F32, N()), ZRT_ERR_INVALID_ARGUMENT);
}

TEST(CommTest, NonblockingOverlapsAndCompletesOnWait) {
  const int64_t n = 1 << 14;
  std::vector<float> shard(n), gathered(n * N());
  std::vector<float> grads(n * N()), gshard(n);
  std::vector<uint16_t> hgrads(n * N()), hshard(n);
  std::vector<float> vec(n), vsum(n);
  for (int64_t i = 0; i < n; ++i) {
    shard[i] = val(R(), i % 100);
    vec[i] = static_cast<float>(i % 7);
  }
  for (int64_t i = 0; i < n * N(); ++i) {
    grads[i] = static_cast<float>((i + R()) % 5);
    hgrads[i] = zrt_f32_to_bf16(static_cast<float>((i + R()) % 5));
  }
  zrt_request ag = nullptr, rs = nullptr, rsb = nullptr, ar = nullptr;
  EXPECT_EQ(zrt_all_gather_start(shard.data(), gathered.data(), n, ZRT_F32,
                                 &ag),
            ZRT_OK);
  EXPECT_EQ(zrt_reduce_scatter_start(grads.data(), gshard.data(), n, ZRT_F32,
                                     ZRT_AVG, &rs),
            ZRT_OK);
  EXPECT_EQ(zrt_reduce_scatter_start(hgrads.data(), hshard.data(), n, ZRT_BF16,
                                     ZRT_SUM, &rsb),
            ZRT_OK);
  EXPECT_EQ(zrt_all_reduce_start(vec.data(), vsum.data(), n, ZRT_F32, ZRT_SUM,
                                 &ar),
            ZRT_OK);
  // "Compute" while the collectives are in flight.
  std::vector<float> a(64 * 64, 1.0f), c(64 * 64);
  EXPECT_EQ(zrt_matmul(a.data(), a.data(), nullptr, c.data(), 1, 64, 64, 64, 0,
                       0, 1.0f, 0.0f, -1, -1, -1),
            ZRT_OK);
  EXPECT_EQ(c[0], 64.0f);
  // Progress while in flight (as compiled steps do after each compute op),
  // without allocating; completion is still observed by zrt_wait.
  const int64_t allocs = zrt_heap_allocations();
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(zrt_comm_progress(), ZRT_OK);
  EXPECT_EQ(zrt_heap_allocations(), allocs);
  // Wait in a different order than started.
  EXPECT_EQ(zrt_wait(ar), ZRT_OK);
  EXPECT_EQ(zrt_wait(rsb), ZRT_OK);
  EXPECT_EQ(zrt_wait(ag), ZRT_OK);
  EXPECT_EQ(zrt_wait(rs), ZRT_OK);
  EXPECT_EQ(zrt_comm_progress(), ZRT_OK); // nothing in flight
  for (int r = 0; r < N(); ++r)
    for (int64_t i = 0; i < n; i += 101)
      EXPECT_EQ(gathered[r * n + i], val(r, i % 100));
  for (int64_t i = 0; i < n; i += 37) {
    const int64_t g = R() * n + i;
    float sum = 0;
    for (int r = 0; r < N(); ++r)
      sum += static_cast<float>((g + r) % 5);
    EXPECT_EQ(gshard[i], sum * (1.0f / N()));
    EXPECT_EQ(zrt_bf16_to_f32(hshard[i]), sum);
    EXPECT_EQ(vsum[i], static_cast<float>(N() * (i % 7)));
  }
}

TEST(CommTest, ByteCountersFollowRingFormula) {
  zrt_comm_reset();
  EXPECT_EQ(zrt_comm_wait_seconds(), 0.0);
  const int64_t n = 1000, Nn = N();
  std::vector<float> a(n), b(n * Nn);
  std::vector<uint16_t> ha(n), hb(n * Nn);
  EXPECT_EQ(zrt_all_gather(a.data(), b.data(), n, ZRT_F32), ZRT_OK);
  EXPECT_EQ(zrt_all_gather(ha.data(), hb.data(), n, ZRT_BF16), ZRT_OK);
  EXPECT_EQ(zrt_reduce_scatter(b.data(), a.data(), n, ZRT_F32, ZRT_SUM),
            ZRT_OK);
  EXPECT_EQ(zrt_all_reduce(a.data(), a.data(), n, ZRT_F32, ZRT_SUM), ZRT_OK);
  EXPECT_EQ(zrt_all_reduce(ha.data(), ha.data(), n, ZRT_BF16, ZRT_SUM),
            ZRT_OK);
  zrt_request r = nullptr;
  EXPECT_EQ(zrt_all_reduce_start(a.data(), a.data(), 3, ZRT_F32, ZRT_SUM, &r),
            ZRT_OK);
  EXPECT_EQ(zrt_wait(r), ZRT_OK);
  EXPECT_EQ(zrt_broadcast(a.data(), n, ZRT_F32, 0), ZRT_OK);

  // all-gather: S = n*N*elem, sends S(N-1)/N per rank.
  EXPECT_EQ(zrt_comm_bytes(ZRT_COLL_ALL_GATHER),
            n * 4 * (Nn - 1) + n * 2 * (Nn - 1));
  EXPECT_EQ(zrt_comm_calls(ZRT_COLL_ALL_GATHER), 2);
  // reduce-scatter: S = n*N*elem input, sends S(N-1)/N.
  EXPECT_EQ(zrt_comm_bytes(ZRT_COLL_REDUCE_SCATTER), n * 4 * (Nn - 1));
  // all-reduce: S = n*elem, sends 2 S (N-1)/N (integer division).
  EXPECT_EQ(zrt_comm_bytes(ZRT_COLL_ALL_REDUCE),
            2 * n * 4 * (Nn - 1) / Nn + 2 * n * 2 * (Nn - 1) / Nn +
                2 * 3 * 4 * (Nn - 1) / Nn);
  EXPECT_EQ(zrt_comm_calls(ZRT_COLL_ALL_REDUCE), 3);
  EXPECT_EQ(zrt_comm_bytes(ZRT_COLL_BROADCAST), Nn > 1 ? n * 4 : 0);
  EXPECT_GE(zrt_comm_wait_seconds(), 0.0);
  zrt_comm_reset();
  for (int k = 0; k < ZRT_COLL_NUM_KINDS; ++k) {
    EXPECT_EQ(zrt_comm_bytes(k), 0);
    EXPECT_EQ(zrt_comm_calls(k), 0);
  }
}

TEST(CommTest, WaitTimeMeasuresExposedCommunication) {
  // Rank 0 arrives late; every other rank is blocked in zrt_wait meanwhile.
  zrt_comm_reset();
  float x = 1.0f, y = 0.0f;
  if (R() == 0)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  zrt_request r = nullptr;
  EXPECT_EQ(zrt_all_reduce_start(&x, &y, 1, ZRT_F32, ZRT_SUM, &r), ZRT_OK);
  EXPECT_EQ(zrt_wait(r), ZRT_OK);
  EXPECT_EQ(y, static_cast<float>(N()));
  if (R() != 0)
    EXPECT_GE(zrt_comm_wait_seconds(), 0.05);
}

TEST(CommTest, ArgumentErrorsAreLocal) {
  float x = 0;
  zrt_request r = reinterpret_cast<zrt_request>(0x1);
  EXPECT_EQ(zrt_all_reduce_start(&x, &x, 1, 7, ZRT_SUM, &r),
            ZRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(r, nullptr);
  EXPECT_EQ(zrt_all_reduce(&x, &x, 1, ZRT_F32, 9), ZRT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(zrt_last_error()).find("reduce op"), std::string::npos);
  EXPECT_EQ(zrt_reduce_scatter(&x, &x, -1, ZRT_F32, ZRT_SUM),
            ZRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(zrt_all_gather(nullptr, nullptr, 0, ZRT_F32), ZRT_OK); // n = 0
}

/// Checks the mesh N_d x M (rank r = d*M + t): the axis indices and sizes,
/// one collective of each kind per axis against its closed form, and the
/// per-axis byte counters. Called with every M that divides N.
static void checkMesh(int M) {
  SCOPED_TRACE("tensor size " + std::to_string(M));
  ASSERT_EQ(zrt_mesh_init(M), ZRT_OK) << zrt_last_error();
  const int Nd = N() / M, d = R() / M, t = R() % M;
  EXPECT_EQ(zrt_axis_size(ZRT_AXIS_DATA), Nd);
  EXPECT_EQ(zrt_axis_size(ZRT_AXIS_TENSOR), M);
  EXPECT_EQ(zrt_axis_rank(ZRT_AXIS_DATA), d);
  EXPECT_EQ(zrt_axis_rank(ZRT_AXIS_TENSOR), t);
  EXPECT_EQ(zrt_rank(), R());
  EXPECT_EQ(zrt_world_size(), N());
  zrt_comm_reset();

  // Tensor all-reduce: the sum over t' of (d*M + t') = M*d*M + M(M-1)/2.
  const int64_t n = 3;
  std::vector<float> x(n, static_cast<float>(R())), y(n, -1.0f);
  EXPECT_EQ(zrt_all_reduce_axis(ZRT_AXIS_TENSOR, x.data(), y.data(), n,
                                ZRT_F32, ZRT_SUM),
            ZRT_OK);
  for (float v : y)
    EXPECT_EQ(v, static_cast<float>(M * d * M + M * (M - 1) / 2));
  // Data all-reduce, avg: the mean over d' of (d'*M + t).
  EXPECT_EQ(zrt_all_reduce_axis(ZRT_AXIS_DATA, x.data(), y.data(), n, ZRT_F32,
                                ZRT_AVG),
            ZRT_OK);
  for (float v : y)
    EXPECT_FLOAT_EQ(v, static_cast<float>(M) * (Nd - 1) / 2.0f + t);
  // Tensor all-gather: slot t' holds rank d*M + t''s values.
  std::vector<float> g(n * M, -1.0f);
  EXPECT_EQ(
      zrt_all_gather_axis(ZRT_AXIS_TENSOR, x.data(), g.data(), n, ZRT_F32),
      ZRT_OK);
  for (int tt = 0; tt < M; ++tt)
    for (int64_t i = 0; i < n; ++i)
      EXPECT_EQ(g[tt * n + i], static_cast<float>(d * M + tt));
  // Data reduce-scatter (nonblocking), bf16: slot d of the sum over d' of
  // (d'*M + t + slot index).
  std::vector<float> full(n * Nd);
  for (int s = 0; s < Nd; ++s)
    for (int64_t i = 0; i < n; ++i)
      full[s * n + i] = static_cast<float>(R() + s);
  std::vector<uint16_t> hfull = toBf16(full), hshard(n);
  zrt_request req = nullptr;
  EXPECT_EQ(zrt_reduce_scatter_axis_start(ZRT_AXIS_DATA, hfull.data(),
                                          hshard.data(), n, ZRT_BF16, ZRT_SUM,
                                          &req),
            ZRT_OK);
  EXPECT_EQ(zrt_wait(req), ZRT_OK);
  float expect = 0.0f;
  for (int dd = 0; dd < Nd; ++dd)
    expect += static_cast<float>(dd * M + t + d);
  for (float v : toF32(hshard))
    EXPECT_EQ(v, expect);
  // The axis-less collectives are the data axis.
  EXPECT_EQ(zrt_all_reduce(x.data(), y.data(), n, ZRT_F32, ZRT_SUM), ZRT_OK);
  EXPECT_EQ(y[0], static_cast<float>(M * Nd * (Nd - 1) / 2 + Nd * t));

  // Per-axis ring bytes, each with its own axis size; the totals add up.
  const int64_t tensorAr = 2 * n * 4 * (M - 1) / M;
  const int64_t dataAr = 2 * n * 4 * (Nd - 1) / Nd;
  EXPECT_EQ(zrt_comm_axis_bytes(ZRT_AXIS_TENSOR, ZRT_COLL_ALL_REDUCE),
            tensorAr);
  EXPECT_EQ(zrt_comm_axis_bytes(ZRT_AXIS_DATA, ZRT_COLL_ALL_REDUCE),
            2 * dataAr);
  EXPECT_EQ(zrt_comm_axis_bytes(ZRT_AXIS_TENSOR, ZRT_COLL_ALL_GATHER),
            n * 4 * (M - 1));
  EXPECT_EQ(zrt_comm_axis_bytes(ZRT_AXIS_DATA, ZRT_COLL_REDUCE_SCATTER),
            n * 2 * (Nd - 1));
  EXPECT_EQ(zrt_comm_axis_calls(ZRT_AXIS_TENSOR, ZRT_COLL_ALL_REDUCE), 1);
  EXPECT_EQ(zrt_comm_axis_calls(ZRT_AXIS_DATA, ZRT_COLL_ALL_REDUCE), 2);
  EXPECT_EQ(zrt_comm_bytes(ZRT_COLL_ALL_REDUCE), tensorAr + 2 * dataAr);
  EXPECT_EQ(zrt_comm_calls(ZRT_COLL_ALL_REDUCE), 3);
  EXPECT_EQ(zrt_comm_axis_bytes(2, ZRT_COLL_ALL_REDUCE), -1);
  EXPECT_EQ(zrt_comm_axis_bytes(ZRT_AXIS_DATA, ZRT_COLL_NUM_KINDS), -1);
  zrt_comm_reset();
}

TEST(CommTest, MeshAxesSplitTheWorld) {
  for (int M = 1; M <= N(); ++M)
    if (N() % M == 0)
      checkMesh(M);
  // Back to N x 1 for the other tests.
  EXPECT_EQ(zrt_mesh_init(1), ZRT_OK);
  EXPECT_EQ(zrt_axis_size(ZRT_AXIS_DATA), N());
  EXPECT_EQ(zrt_axis_size(ZRT_AXIS_TENSOR), 1);
}

TEST(CommTest, MeshErrorsNameTheSizes) {
  // N + 1 never divides N; every rank fails alike, before any MPI call.
  EXPECT_EQ(zrt_mesh_init(N() + 1), ZRT_ERR_INVALID_ARGUMENT);
  const std::string want = "tensor size " + std::to_string(N() + 1) +
                           " does not divide the world size " +
                           std::to_string(N());
  EXPECT_NE(std::string(zrt_last_error()).find(want), std::string::npos)
      << zrt_last_error();
  EXPECT_EQ(zrt_mesh_init(0), ZRT_ERR_INVALID_ARGUMENT);
  float x = 1.0f;
  EXPECT_EQ(zrt_all_reduce_axis(2, &x, &x, 1, ZRT_F32, ZRT_SUM),
            ZRT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(zrt_last_error()).find("axis 2"), std::string::npos);
  EXPECT_EQ(zrt_axis_rank(5), -1);
  EXPECT_EQ(zrt_axis_size(-1), -1);
  // The mesh is unchanged by a refused call.
  EXPECT_EQ(zrt_axis_size(ZRT_AXIS_DATA), N());
}

int main(int argc, char **argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (zrt_init(&argc, &argv) != ZRT_OK) {
    std::fprintf(stderr, "zrt_init failed: %s\n", zrt_last_error());
    return 2;
  }
  // Only rank 0 prints the per-test progress.
  if (zrt_rank() != 0) {
    auto &listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  const int rc = RUN_ALL_TESTS();
  // Combine results so every rank exits with the same status.
  float failed = rc != 0 ? 1.0f : 0.0f, anyFailed = 0.0f;
  zrt_all_reduce(&failed, &anyFailed, 1, ZRT_F32, ZRT_MAX);
  if (rc != 0)
    std::fprintf(stderr, "rank %d: tests FAILED\n", zrt_rank());
  zrt_finalize();
  return anyFailed != 0.0f ? 1 : 0;
}
