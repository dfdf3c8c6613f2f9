//===- comm_state.h - CUDA backend: the communicator state ------*- C++ -*-===//
//
// What the process group (process_group.cpp: MPI, NCCL communicators, the
// rank mesh) and the collectives (comm.cpp: NCCL calls on the comm stream,
// requests, timing, traffic counters) share: one CommState and the helpers
// both use. Internal to runtime/cuda; the semantics are in comm.cpp's
// header.
//
//===----------------------------------------------------------------------===//

#ifndef ZRT_CUDA_COMM_STATE_H
#define ZRT_CUDA_COMM_STATE_H

#include "zrt_cuda.h"

#include "../src/common/arg_checks.h"

#include <cuda_runtime.h>

#if ZRT_HAVE_NCCL
#include <nccl.h>
#endif
#if ZRT_HAVE_MPI
#include <mpi.h>
#endif

#ifndef ZRT_CUDA_MIN_ARCH
#define ZRT_CUDA_MIN_ARCH 90 ///< Set by CMake from CMAKE_CUDA_ARCHITECTURES.
#endif

#include <climits>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

struct zrt_request_s {
  cudaEvent_t done = nullptr;      ///< Recorded on the comm stream after the collective.
  bool pending = false;            ///< A collective was queued (world > 1).
  zrt_request_s *nextFree = nullptr;
};


namespace zrt_cuda::comm_detail {

struct TimingPair {
  cudaEvent_t before = nullptr, after = nullptr;
};

/// One axis of the mesh: its communicator (null when the axis has one rank;
/// the world's, not owned, for the data axis of an N x 1 mesh), this rank's
/// index along it and its size.
struct Axis {
#if ZRT_HAVE_NCCL
  ncclComm_t nccl = nullptr;
#endif
  bool owned = false;
  int rank = -1;
  int size = -1;
};

struct CommState {
  bool initialized = false;
  bool finalized = false;
  bool ownsMpi = false;
  int rank = -1;
  int size = -1;
  int device = -1;
  cudaStream_t comm = nullptr; ///< The communication stream.
  cudaEvent_t ready = nullptr; ///< Compute progress the comm stream waits for.
#if ZRT_HAVE_NCCL
  ncclComm_t nccl = nullptr; ///< The world's communicator (size > 1).
#endif
  Axis axes[ZRT_NUM_AXES];
  /// Collectives started on a communicator and not yet waited for.
  int64_t inFlight = 0;
  int64_t bytes[ZRT_NUM_AXES][ZRT_COLL_NUM_KINDS] = {};
  int64_t calls[ZRT_NUM_AXES][ZRT_COLL_NUM_KINDS] = {};
  double waitSeconds = 0.0;
  zrt_request_s *freeRequests = nullptr;
  /// Timing events of waits not yet added to waitSeconds, and free ones.
  std::vector<TimingPair> pendingTimings, freeTimings;
};

/// The one communicator state of this process (comm.cpp).
extern CommState state;

/// Requests and timing pairs zrt_init puts in the pools.
constexpr int kPool = 256;

int cudaFail(const char *fn, const char *what, cudaError_t err);
#if ZRT_HAVE_NCCL
int ncclFail(const char *fn, const char *what, ncclResult_t r);
#endif
#if ZRT_HAVE_MPI
int mpiFail(const char *fn, const char *what, int code);
#endif
/// A new request (counted as a heap allocation), or null with *status set.
zrt_request_s *allocRequest(const char *fn, int *status);
/// Returns a request to the pool (and out of the in-flight count).
void releaseRequest(zrt_request_s *r);
/// A timing pair from the pool, or a new one.
int newTimingPair(const char *fn, TimingPair *out);
/// Adds the stalls of completed waits to waitSeconds (synchronizes the
/// compute stream) and returns their events to the pool.
int collectTimings(const char *fn);

} // namespace zrt_cuda::comm_detail

#endif // ZRT_CUDA_COMM_STATE_H
