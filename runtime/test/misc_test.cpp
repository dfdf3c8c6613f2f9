//===- misc_test.cpp - RNG, arenas, error API, uninitialized comm ----------===//

#include "test_util.h"

#include "common/internal.h" // Philox known-answer test

#include <cmath>

using namespace zrt_test;

TEST(RngTest, PhiloxKnownAnswer) {
  // Random123 kat_vectors: philox4x32 10 rounds, counter 0, key 0.
  zrt::Philox4x32 r = zrt::philox4x32(0, 0, 0, 0, 0);
  EXPECT_EQ(r.v[0], 0x6627e8d5u);
  EXPECT_EQ(r.v[1], 0xe169c58du);
  EXPECT_EQ(r.v[2], 0xbc57ac4cu);
  EXPECT_EQ(r.v[3], 0x9b00dbd8u);
  // counter = key = all ones
  r = zrt::philox4x32(~0u, ~0u, ~0u, ~0u, ~0ull);
  EXPECT_EQ(r.v[0], 0x408f276du);
  EXPECT_EQ(r.v[1], 0x41c83b0eu);
  EXPECT_EQ(r.v[2], 0xa20bc7c6u);
  EXPECT_EQ(r.v[3], 0x6d5451fdu);
}

TEST(RngTest, ShardedInitEqualsWholeInit) {
  const int64_t n = 10007;
  std::vector<float> whole(n), pieces(n);
  ASSERT_EQ(zrt_init_normal(whole.data(), n, 0.5f, 0.02f, 1234, 0), ZRT_OK);
  // Uneven shards, as a ZeRO partition of a flat tensor might produce.
  const int64_t cuts[] = {0, 1, 2500, 2501, 7000, n};
  for (int s = 0; s + 1 < 6; ++s)
    ASSERT_EQ(zrt_init_normal(pieces.data() + cuts[s], cuts[s + 1] - cuts[s],
                              0.5f, 0.02f, 1234, cuts[s]),
              ZRT_OK);
  EXPECT_EQ(whole, pieces);
  ASSERT_EQ(zrt_init_uniform(whole.data(), n, -0.1f, 0.3f, 99, 0), ZRT_OK);
  for (int s = 0; s + 1 < 6; ++s)
    ASSERT_EQ(zrt_init_uniform(pieces.data() + cuts[s], cuts[s + 1] - cuts[s],
                               -0.1f, 0.3f, 99, cuts[s]),
              ZRT_OK);
  EXPECT_EQ(whole, pieces);
}

TEST(RngTest, MomentsAndSeeds) {
  const int64_t n = 200000;
  std::vector<float> x(n), y(n);
  ASSERT_EQ(zrt_init_normal(x.data(), n, 1.0f, 2.0f, 7, 0), ZRT_OK);
  double s = 0, s2 = 0;
  for (float v : x) {
    s += v;
    s2 += double(v) * v;
  }
  const double mean = s / n, var = s2 / n - mean * mean;
  EXPECT_NEAR(mean, 1.0, 0.02);
  EXPECT_NEAR(std::sqrt(var), 2.0, 0.02);
  ASSERT_EQ(zrt_init_normal(y.data(), n, 1.0f, 2.0f, 8, 0), ZRT_OK);
  EXPECT_NE(x, y);
  ASSERT_EQ(zrt_init_uniform(x.data(), n, 2.0f, 3.0f, 7, 0), ZRT_OK);
  double mn = 1e9, mx = -1e9;
  s = 0;
  for (float v : x) {
    mn = std::min<double>(mn, v);
    mx = std::max<double>(mx, v);
    s += v;
  }
  EXPECT_GE(mn, 2.0);
  EXPECT_LT(mx, 3.0);
  EXPECT_NEAR(s / n, 2.5, 0.01);
  EXPECT_EQ(zrt_init_normal(x.data(), 1, 0, 1, 0, -1),
            ZRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(zrt_init_uniform(x.data(), 1, 1, 0, 0, 0),
            ZRT_ERR_INVALID_ARGUMENT);
}

TEST(ArenaTest, AlignedZeroedAndBump) {
  zrt_arena a = nullptr;
  ASSERT_EQ(zrt_arena_create(1000, ZRT_MEM_ACTIVATIONS, &a), ZRT_OK);
  ASSERT_NE(a, nullptr);
  auto *base = static_cast<unsigned char *>(zrt_arena_base(a));
  ASSERT_NE(base, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(base) % 64, 0u);
  EXPECT_EQ(zrt_arena_size(a), 1000);
  for (int i = 0; i < 1000; ++i)
    ASSERT_EQ(base[i], 0);
  int64_t off = -1;
  ASSERT_EQ(zrt_arena_alloc(a, 10, 0, &off), ZRT_OK);
  EXPECT_EQ(off, 0);
  ASSERT_EQ(zrt_arena_alloc(a, 100, 0, &off), ZRT_OK);
  EXPECT_EQ(off, 64);
  ASSERT_EQ(zrt_arena_alloc(a, 4, 4, &off), ZRT_OK);
  EXPECT_EQ(off, 164);
  EXPECT_EQ(zrt_arena_used(a), 168);
  EXPECT_EQ(zrt_arena_alloc(a, 900, 0, &off), ZRT_ERR_OUT_OF_MEMORY);
  EXPECT_EQ(zrt_arena_alloc(a, 1, 3, &off), ZRT_ERR_INVALID_ARGUMENT);
  zrt_arena_reset(a);
  EXPECT_EQ(zrt_arena_used(a), 0);
  ASSERT_EQ(zrt_arena_alloc(a, 1000, 0, &off), ZRT_OK);
  zrt_arena_destroy(a);
  zrt_arena_destroy(nullptr);
}

TEST(ArenaTest, PerKindAndPeakCounters) {
  const int64_t total0 = zrt_memory_total_bytes();
  zrt_memory_reset_peak();
  zrt_arena p = nullptr, g = nullptr, t = nullptr;
  ASSERT_EQ(zrt_arena_create(4000, ZRT_MEM_PARAMETERS, &p), ZRT_OK);
  ASSERT_EQ(zrt_arena_create(2000, ZRT_MEM_GRADIENTS, &g), ZRT_OK);
  EXPECT_EQ(zrt_memory_bytes(ZRT_MEM_PARAMETERS), 4000);
  EXPECT_EQ(zrt_memory_bytes(ZRT_MEM_GRADIENTS), 2000);
  EXPECT_EQ(zrt_memory_total_bytes(), total0 + 6000);
  zrt_arena_destroy(g);
  ASSERT_EQ(zrt_arena_create(500, ZRT_MEM_TEMPORARIES, &t), ZRT_OK);
  EXPECT_EQ(zrt_memory_bytes(ZRT_MEM_GRADIENTS), 0);
  EXPECT_EQ(zrt_memory_peak_bytes(ZRT_MEM_GRADIENTS), 2000);
  EXPECT_EQ(zrt_memory_peak_total_bytes(), total0 + 6000); // peak of the sum
  EXPECT_EQ(zrt_memory_total_bytes(), total0 + 4500);
  zrt_arena_destroy(p);
  zrt_arena_destroy(t);
  EXPECT_EQ(zrt_memory_total_bytes(), total0);
  EXPECT_EQ(zrt_memory_bytes(ZRT_MEM_NUM_KINDS), -1);
  zrt_arena z = nullptr;
  EXPECT_EQ(zrt_arena_create(16, 99, &z), ZRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(z, nullptr);
  EXPECT_EQ(zrt_arena_create(-1, ZRT_MEM_MOMENTS, &z),
            ZRT_ERR_INVALID_ARGUMENT);
  ASSERT_EQ(zrt_arena_create(0, ZRT_MEM_MOMENTS, &z), ZRT_OK);
  EXPECT_NE(zrt_arena_base(z), nullptr);
  zrt_arena_destroy(z);
}

TEST(ErrorTest, LastErrorAndStatusNames) {
  zrt_clear_error();
  EXPECT_STREQ(zrt_last_error(), "");
  EXPECT_EQ(zrt_fill(nullptr, 0.0f, 3), ZRT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(zrt_last_error()).find("zrt_fill"), std::string::npos);
  EXPECT_EQ(zrt_fill(nullptr, 0.0f, 0), ZRT_OK);
  EXPECT_NE(std::string(zrt_last_error()), ""); // success does not clear
  zrt_clear_error();
  EXPECT_STREQ(zrt_last_error(), "");
  EXPECT_STREQ(zrt_status_name(ZRT_ERR_IO), "ZRT_ERR_IO");
  EXPECT_STREQ(zrt_status_name(12345), "ZRT_UNKNOWN");
  EXPECT_EQ(zrt_set_num_threads(0), ZRT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(zrt_set_num_threads(2), ZRT_OK);
}

TEST(CommTest, CollectivesBeforeInitAreErrors) {
  // This binary never calls zrt_init.
  EXPECT_EQ(zrt_rank(), -1);
  EXPECT_EQ(zrt_world_size(), -1);
  float x = 1.0f;
  EXPECT_EQ(zrt_all_reduce(&x, &x, 1, ZRT_F32, ZRT_SUM),
            ZRT_ERR_NOT_INITIALIZED);
  EXPECT_NE(std::string(zrt_last_error()).find("zrt_init"), std::string::npos);
  zrt_request r = nullptr;
  EXPECT_EQ(zrt_all_gather_start(&x, &x, 1, ZRT_F32, &r),
            ZRT_ERR_NOT_INITIALIZED);
  EXPECT_EQ(zrt_wait(nullptr), ZRT_OK);
  EXPECT_EQ(zrt_barrier(), ZRT_ERR_NOT_INITIALIZED);
  EXPECT_EQ(zrt_finalize(), ZRT_OK); // no-op
  EXPECT_EQ(zrt_comm_bytes(ZRT_COLL_ALL_REDUCE), 0);
  EXPECT_EQ(zrt_comm_bytes(-1), -1);
}

// The kernels the driver's re-exec asks OpenBLAS for (blas_core.cpp).
TEST(BlasCoreTest, ReplacesOnlySseFallbacks) {
  // A CPU OpenBLAS 0.3.21 does not know: its SSE-era fallback is replaced
  // by the best kernels the CPU runs.
  EXPECT_STREQ(zrt::blasCoreFor("Prescott", true, true), "SkylakeX");
  EXPECT_STREQ(zrt::blasCoreFor("prescott", false, true), "Haswell");
  EXPECT_STREQ(zrt::blasCoreFor("Nehalem", false, true), "Haswell");
  EXPECT_EQ(zrt::blasCoreFor("Prescott", false, false), nullptr);
  // A core OpenBLAS knows stays (on this AMD Zen 5 VM it picks Cooperlake).
  EXPECT_EQ(zrt::blasCoreFor("Cooperlake", true, true), nullptr);
  EXPECT_EQ(zrt::blasCoreFor("Haswell", true, true), nullptr);
  EXPECT_EQ(zrt::blasCoreFor("Zen", false, true), nullptr);
  EXPECT_EQ(zrt::blasCoreFor("SkylakeX", true, true), nullptr);
  EXPECT_EQ(zrt::blasCoreFor("", true, true), nullptr);
}

// The wait policy the same re-exec sets: passive only when the teams and the
// other runnable tasks oversubscribe the cores (blas_core.cpp's numbers).
TEST(BlasCoreTest, PassiveWaitOnlyWhenOversubscribed) {
  // One rank, 2 threads, 2 cores, nothing else running: keep the spin.
  EXPECT_EQ(zrt::waitPolicyFor(2, 1, 2, 0), nullptr);
  // Another runnable task (a build) wants one of the cores.
  EXPECT_STREQ(zrt::waitPolicyFor(2, 1, 2, 1), "passive");
  // Two ranks of 2 threads on 2 cores oversubscribe by themselves.
  EXPECT_STREQ(zrt::waitPolicyFor(2, 2, 2, 0), "passive");
  EXPECT_EQ(zrt::waitPolicyFor(2, 2, 4, 0), nullptr);
  EXPECT_STREQ(zrt::waitPolicyFor(8, 1, 4, 0), "passive");
  // One thread per rank: no team waits, whatever the load.
  EXPECT_EQ(zrt::waitPolicyFor(1, 4, 2, 3), nullptr);
  // Nonsense counts are clamped, not trusted.
  EXPECT_EQ(zrt::waitPolicyFor(2, 0, 2, -5), nullptr);
  EXPECT_STREQ(zrt::waitPolicyFor(2, 1, 0, 0), "passive");
}

// A thread or rank count from a flag or the environment.
TEST(BlasCoreTest, PositiveCount) {
  EXPECT_EQ(zrt::positiveCount("2"), 2);
  EXPECT_EQ(zrt::positiveCount("4096"), 4096);
  EXPECT_EQ(zrt::positiveCount("4097"), 0);
  EXPECT_EQ(zrt::positiveCount("0"), 0);
  EXPECT_EQ(zrt::positiveCount("2x"), 0);
  EXPECT_EQ(zrt::positiveCount(""), 0);
  EXPECT_EQ(zrt::positiveCount(nullptr), 0);
}

// --threads wins without asking for the local ranks (an MPI collective).
TEST(BlasCoreTest, TeamThreadsFlagFirst) {
  int asked = 0;
  EXPECT_EQ(zrt::teamThreads(
                3, [](void *n) { return ++*static_cast<int *>(n); }, &asked),
            3);
  EXPECT_EQ(asked, 0);
}

// The driver's default team: cores over local ranks, within the affinity.
TEST(BlasCoreTest, DefaultThreads) {
  EXPECT_EQ(zrt::defaultThreads(2, 1, 2), 2);
  EXPECT_EQ(zrt::defaultThreads(16, 4, 16), 4);
  EXPECT_EQ(zrt::defaultThreads(16, 4, 2), 2);  // taskset to 2 CPUs
  EXPECT_EQ(zrt::defaultThreads(2, 4, 0), 1);   // more ranks than cores
  EXPECT_EQ(zrt::defaultThreads(0, 0, -1), 1);  // unknown: one thread
}
