//===- comm.cpp - CUDA backend: process group and collectives (NCCL) ------===//
//
// One process per GPU. zrt_init picks the device (the process's rank on its
// node modulo the visible devices) and, for a world of more than one rank,
// creates an NCCL communicator whose unique id rank 0 broadcasts over MPI
// (MPI is used for nothing else here). A build without MPI is a
// single-process runtime (world size 1), which needs neither MPI nor NCCL.
//
// The rank mesh data x tensor (zrt_mesh_init(M), N = N_d x M, rank
// r = d*M + t) has one NCCL communicator per axis of more than one rank,
// split from the world's (ncclCommSplit, NCCL 2.18+): the data axis is the
// ranks with the same t ordered by d, the tensor axis the ranks with the
// same d ordered by t. Until then (and for M = 1) the data axis is the
// world communicator and the tensor axis each rank alone. The collectives
// without an axis run on the data axis; bytes and calls are counted per
// axis with that axis's size, as the CPU backend does (src/comm/comm.cpp).
//
// Collectives run on a dedicated non-blocking communication stream:
//   start: event `ready` recorded on the compute stream, the comm stream
//          waits for it (the collective reads what compute wrote), the NCCL
//          call is queued, event `done` recorded on the comm stream;
//   wait:  the compute stream waits for `done` (nothing blocks the host),
//          bracketed by two timing events on the compute stream: the time
//          between them is how long compute stalled on communication, the
//          exposed communication time of zrt_comm_wait_seconds.
// So all-gathers started ahead (zero-prefetch) and reduce-scatters sunk
// behind compute overlap with the kernels between start and wait. With a
// world of one rank, every collective is a copy (or nothing) on the compute
// stream, and its request completes at once.
//
// bf16 reductions use NCCL's bf16 arithmetic (ncclBfloat16): NCCL rounds to
// bf16 after each hop of its ring, where the CPU backend reduces in f32 and
// rounds once; for two ranks the two agree, for more the results may differ
// in the last bf16 bit. ZRT_AVG is ncclAvg.
//
// Requests and timing events come from pools filled by zrt_init and grown
// (counted as heap allocations) only when more are outstanding at once.
//
//===----------------------------------------------------------------------===//

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

namespace {

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

CommState state;

/// Requests and timing pairs zrt_init puts in the pools.
constexpr int kPool = 256;

int cudaFail(const char *fn, const char *what, cudaError_t err) {
  return zrt_cuda::check(err, ZRT_ERR_MPI, fn, what);
}

#if ZRT_HAVE_NCCL
int ncclFail(const char *fn, const char *what, ncclResult_t r) {
  return zrt_cuda::fail(ZRT_ERR_MPI, "%s: %s: NCCL error: %s", fn, what,
                        ncclGetErrorString(r));
}
ncclDataType_t ncclType(int dtype) {
  return dtype == ZRT_BF16   ? ncclBfloat16
         : dtype == ZRT_F16 ? ncclFloat16
                            : ncclFloat32;
}
ncclRedOp_t ncclOp(int op) {
  return op == ZRT_MAX ? ncclMax : (op == ZRT_AVG ? ncclAvg : ncclSum);
}
#endif

zrt_request_s *allocRequest(const char *fn, int *status) {
  zrt_cuda::count_allocation();
  auto *r = new (std::nothrow) zrt_request_s;
  if (!r) {
    *status = zrt_cuda::fail(ZRT_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
    return nullptr;
  }
  cudaError_t err = cudaEventCreateWithFlags(&r->done, cudaEventDisableTiming);
  if (err != cudaSuccess) {
    delete r;
    *status = cudaFail(fn, "cudaEventCreate", err);
    return nullptr;
  }
  return r;
}

void releaseRequest(zrt_request_s *r) {
  if (r->pending)
    --state.inFlight;
  r->pending = false;
  r->nextFree = state.freeRequests;
  state.freeRequests = r;
}

zrt_request_s *newRequest(const char *fn, int *status) {
  if (zrt_request_s *r = state.freeRequests) {
    state.freeRequests = r->nextFree;
    r->nextFree = nullptr;
    return r;
  }
  return allocRequest(fn, status);
}

int newTimingPair(const char *fn, TimingPair *out) {
  if (!state.freeTimings.empty()) {
    *out = state.freeTimings.back();
    state.freeTimings.pop_back();
    return ZRT_OK;
  }
  zrt_cuda::count_allocation();
  TimingPair p;
  if (cudaError_t err = cudaEventCreate(&p.before); err != cudaSuccess)
    return cudaFail(fn, "cudaEventCreate", err);
  if (cudaError_t err = cudaEventCreate(&p.after); err != cudaSuccess) {
    cudaEventDestroy(p.before);
    return cudaFail(fn, "cudaEventCreate", err);
  }
  *out = p;
  return ZRT_OK;
}

/// Adds the stalls of completed waits to waitSeconds (synchronizes the
/// compute stream) and returns their events to the pool.
int collectTimings(const char *fn) {
  if (state.pendingTimings.empty())
    return ZRT_OK;
  if (cudaError_t err = cudaStreamSynchronize(zrt_cuda::stream());
      err != cudaSuccess)
    return cudaFail(fn, "cudaStreamSynchronize", err);
  for (const TimingPair &p : state.pendingTimings) {
    float ms = 0.0f;
    if (cudaEventElapsedTime(&ms, p.before, p.after) == cudaSuccess && ms > 0)
      state.waitSeconds += 1e-3 * ms;
    state.freeTimings.push_back(p);
  }
  state.pendingTimings.clear();
  return ZRT_OK;
}

/// The shared checks of every *_start collective (arg_checks.h); NCCL counts
/// are size_t, so no MPI count limit.
int checkCommon(const char *fn, int64_t n, int dtype, zrt_request *req) {
  return zrt::checkCollectiveArgs(fn, state.initialized, n, dtype, req,
                                  /*mpiCounts=*/false, zrt_cuda::fail);
}

void countTraffic(int axis, int kind, int64_t bytes) {
  state.bytes[axis][kind] += bytes;
  state.calls[axis][kind] += 1;
}

/// ZRT_ERR_INVALID_ARGUMENT unless `axis` is ZRT_AXIS_DATA or
/// ZRT_AXIS_TENSOR.
int checkAxis(const char *fn, int axis) {
  if (axis == ZRT_AXIS_DATA || axis == ZRT_AXIS_TENSOR)
    return ZRT_OK;
  return zrt_cuda::fail(ZRT_ERR_INVALID_ARGUMENT,
                        "%s: axis %d is not ZRT_AXIS_DATA (0) or "
                        "ZRT_AXIS_TENSOR (1)",
                        fn, axis);
}

/// Copies `bytes` from src to dst on the compute stream (world of one).
int localCopy(const char *fn, void *dst, const void *src, int64_t bytes) {
  if (bytes == 0 || dst == src)
    return ZRT_OK;
  return cudaFail(fn, "cudaMemcpyAsync",
                  cudaMemcpyAsync(dst, src, static_cast<size_t>(bytes),
                                  cudaMemcpyDeviceToDevice,
                                  zrt_cuda::stream()));
}

/// Takes a request; for a group of `ranks` > 1, makes the comm stream wait
/// for the compute stream's work so far.
int beginCollective(const char *fn, int ranks, zrt_request_s **out) {
  int status = ZRT_OK;
  zrt_request_s *r = newRequest(fn, &status);
  if (!r)
    return status;
  if (ranks > 1) {
    cudaError_t err = cudaEventRecord(state.ready, zrt_cuda::stream());
    if (err == cudaSuccess)
      err = cudaStreamWaitEvent(state.comm, state.ready, 0);
    if (err != cudaSuccess) {
      releaseRequest(r);
      return cudaFail(fn, "ordering the comm stream after compute", err);
    }
  }
  *out = r;
  return ZRT_OK;
}

/// Records `done` after the collective queued for a group of `ranks` and
/// hands the request out.
int endCollective(const char *fn, int ranks, zrt_request_s *r,
                  zrt_request *req) {
  if (ranks > 1) {
    if (cudaError_t err = cudaEventRecord(r->done, state.comm);
        err != cudaSuccess) {
      releaseRequest(r);
      return cudaFail(fn, "cudaEventRecord", err);
    }
    r->pending = true;
    ++state.inFlight;
  }
  *req = r;
  return ZRT_OK;
}

#if ZRT_HAVE_MPI
int mpiFail(const char *fn, const char *what, int code) {
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(code, msg, &len);
  return zrt_cuda::fail(ZRT_ERR_MPI, "%s: %s: MPI error: %.*s", fn, what, len,
                        msg);
}
#endif

/// Rank, size and the rank on this node, from MPI when built with it.
int startProcessGroup(int *argc, char ***argv, int *localRank) {
  const char *fn = "zrt_init";
#if ZRT_HAVE_MPI
  int already = 0;
  MPI_Initialized(&already);
  if (!already) {
    int provided = 0;
    int rc = MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
    if (rc != MPI_SUCCESS)
      return zrt_cuda::fail(ZRT_ERR_MPI, "%s: MPI_Init_thread failed (%d)",
                            fn, rc);
    state.ownsMpi = true;
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &state.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &state.size);
  *localRank = 0;
  if (state.size > 1) {
    MPI_Comm node;
    int rc = MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0,
                                 MPI_INFO_NULL, &node);
    if (rc != MPI_SUCCESS)
      return mpiFail(fn, "MPI_Comm_split_type", rc);
    MPI_Comm_rank(node, localRank);
    MPI_Comm_free(&node);
  }
  return ZRT_OK;
#else
  (void)argc;
  (void)argv;
  // Launched as several processes by a launcher this build cannot talk to?
  for (const char *var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"})
    if (const char *v = std::getenv(var); v && std::atoi(v) > 1)
      return zrt_cuda::fail(ZRT_ERR_MPI,
                            "%s: launched as %s processes (%s), but this "
                            "runtime was built without MPI and runs one "
                            "process (world size 1); rebuild it where MPI is "
                            "installed",
                            fn, v, var);
  state.rank = 0;
  state.size = 1;
  *localRank = 0;
  return ZRT_OK;
#endif
}

/// The NCCL communicator of a world of more than one rank.
int startNccl() {
  const char *fn = "zrt_init";
  if (state.size == 1)
    return ZRT_OK;
#if ZRT_HAVE_NCCL && ZRT_HAVE_MPI
  ncclUniqueId id;
  if (state.rank == 0)
    if (ncclResult_t r = ncclGetUniqueId(&id); r != ncclSuccess)
      return ncclFail(fn, "ncclGetUniqueId", r);
  int rc = MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
  if (rc != MPI_SUCCESS)
    return mpiFail(fn, "broadcasting the NCCL unique id", rc);
  if (ncclResult_t r =
          ncclCommInitRank(&state.nccl, state.size, id, state.rank);
      r != ncclSuccess)
    return ncclFail(fn, "ncclCommInitRank", r);
  return ZRT_OK;
#else
  return zrt_cuda::fail(ZRT_ERR_MPI,
                        "%s: %d ranks need NCCL, and this runtime was built "
                        "without it",
                        fn, state.size);
#endif
}

/// Destroys the axis communicators this runtime split (never the world's)
/// and marks both axes unset.
void freeAxes() {
  for (Axis &a : state.axes) {
#if ZRT_HAVE_NCCL
    if (a.owned && a.nccl)
      ncclCommDestroy(a.nccl);
    a.nccl = nullptr;
#endif
    a = Axis{};
  }
}

/// The N x 1 mesh: the data axis is the world, the tensor axis each rank.
void resetAxes() {
  freeAxes();
  Axis &data = state.axes[ZRT_AXIS_DATA];
  data.rank = state.rank;
  data.size = state.size;
#if ZRT_HAVE_NCCL
  data.nccl = state.nccl;
#endif
  Axis &tensor = state.axes[ZRT_AXIS_TENSOR];
  tensor.rank = 0;
  tensor.size = 1;
}

/// Axis `a` as the ranks of the world with the same `color`, ordered by
/// `key`, `size` of them (a collective over all ranks when size > 1).
int splitAxis(const char *fn, int a, int color, int key, int size) {
  Axis &axis = state.axes[a];
  axis.rank = key;
  axis.size = size;
  if (size == 1)
    return ZRT_OK;
#if ZRT_HAVE_NCCL
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 18, 0)
#define ZRT_HAVE_NCCL_COMM_SPLIT 1
  if (ncclResult_t r =
          ncclCommSplit(state.nccl, color, key, &axis.nccl, nullptr);
      r != ncclSuccess)
    return ncclFail(fn, "ncclCommSplit", r);
  axis.owned = true;
  return ZRT_OK;
#endif
#endif
#ifndef ZRT_HAVE_NCCL_COMM_SPLIT
  (void)color;
  return zrt_cuda::fail(ZRT_ERR_MPI,
                        "%s: a mesh axis of %d ranks needs ncclCommSplit "
                        "(NCCL 2.18 or later), and this runtime was built "
                        "without it",
                        fn, size);
#endif
}

} // namespace

namespace zrt_cuda {

int init(int *argc, char ***argv) {
  const char *fn = "zrt_init";
  if (state.initialized)
    return ZRT_OK;
  if (state.finalized)
    return fail(ZRT_ERR_NOT_INITIALIZED,
                "%s: called after zrt_finalize; the runtime cannot be "
                "re-initialized",
                fn);
  int localRank = 0;
  if (int st = startProcessGroup(argc, argv, &localRank))
    return st;
  int devices = 0;
  cudaError_t err = cudaGetDeviceCount(&devices);
  if (err == cudaErrorNoDevice || err == cudaErrorInsufficientDriver ||
      (err == cudaSuccess && devices < 1)) {
    (void)cudaGetLastError();
    return fail(ZRT_ERR_INVALID_ARGUMENT,
                "%s: no NVIDIA GPU found (no device, or no NVIDIA driver: "
                "%s); this program was built for the CUDA backend",
                fn, err == cudaSuccess ? "0 devices" : cudaGetErrorName(err));
  }
  if (err != cudaSuccess)
    return check(err, ZRT_ERR_INVALID_ARGUMENT, fn,
                 "no usable CUDA device: cudaGetDeviceCount");
  state.device = localRank % devices;
  if (cudaError_t e = cudaSetDevice(state.device); e != cudaSuccess)
    return check(e, ZRT_ERR_INVALID_ARGUMENT, fn, "cudaSetDevice");
  // The kernels are built for ZRT_CUDA_MIN_ARCH and later (machine code,
  // plus PTX the driver compiles for newer GPUs); an older GPU would fail
  // at the first kernel launch, so refuse here.
  int major = 0, minor = 0;
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor,
                         state.device);
  cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor,
                         state.device);
  if (major * 10 + minor < ZRT_CUDA_MIN_ARCH)
    return fail(ZRT_ERR_INVALID_ARGUMENT,
                "%s: GPU %d has compute capability %d.%d, but the runtime was "
                "built for %d.%d and later (CMAKE_CUDA_ARCHITECTURES); rebuild "
                "it for this GPU",
                fn, state.device, major, minor, ZRT_CUDA_MIN_ARCH / 10,
                ZRT_CUDA_MIN_ARCH % 10);
  if (cudaError_t err =
          cudaStreamCreateWithFlags(&state.comm, cudaStreamNonBlocking);
      err != cudaSuccess)
    return cudaFail(fn, "creating the comm stream", err);
  if (cudaError_t err =
          cudaEventCreateWithFlags(&state.ready, cudaEventDisableTiming);
      err != cudaSuccess)
    return cudaFail(fn, "cudaEventCreate", err);
  if (int st = startNccl())
    return st;
  resetAxes();
  for (int i = 0; i < kPool; ++i) {
    int status = ZRT_OK;
    zrt_request_s *r = allocRequest(fn, &status);
    if (!r)
      return status;
    releaseRequest(r);
    TimingPair p;
    if (int st = newTimingPair(fn, &p))
      return st;
    state.freeTimings.push_back(p);
  }
  state.pendingTimings.reserve(4 * kPool);
  state.freeTimings.reserve(4 * kPool);
  state.initialized = true;
  return ZRT_OK;
}

int finalize() {
  if (!state.initialized)
    return ZRT_OK;
  cudaStreamSynchronize(stream());
  if (state.comm)
    cudaStreamSynchronize(state.comm);
  freeAxes();
#if ZRT_HAVE_NCCL
  if (state.nccl)
    ncclCommDestroy(state.nccl);
  state.nccl = nullptr;
#endif
  state.inFlight = 0;
  while (zrt_request_s *r = state.freeRequests) {
    state.freeRequests = r->nextFree;
    cudaEventDestroy(r->done);
    delete r;
  }
  (void)collectTimings("zrt_finalize");
  for (const TimingPair &p : state.freeTimings) {
    cudaEventDestroy(p.before);
    cudaEventDestroy(p.after);
  }
  state.freeTimings.clear();
  if (state.ready)
    cudaEventDestroy(state.ready);
  state.ready = nullptr;
  if (state.comm)
    cudaStreamDestroy(state.comm);
  state.comm = nullptr;
  state.initialized = false;
  state.finalized = true;
  state.rank = state.size = -1;
#if ZRT_HAVE_MPI
  if (state.ownsMpi) {
    int rc = MPI_Finalize();
    if (rc != MPI_SUCCESS)
      return fail(ZRT_ERR_MPI, "zrt_finalize: MPI_Finalize failed (%d)", rc);
  }
#endif
  return ZRT_OK;
}

int rank() { return state.initialized ? state.rank : -1; }

int world_size() { return state.initialized ? state.size : -1; }

int barrier() {
  const char *fn = "zrt_barrier";
  if (int st = zrt::checkInitialized(fn, state.initialized, zrt_cuda::fail))
    return st;
  if (cudaError_t err = cudaStreamSynchronize(stream()); err != cudaSuccess)
    return cudaFail(fn, "cudaStreamSynchronize", err);
#if ZRT_HAVE_MPI
  if (state.size > 1) {
    int rc = MPI_Barrier(MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS)
      return mpiFail(fn, "MPI_Barrier", rc);
  }
#endif
  return ZRT_OK;
}

int mesh_init(int tensorSize) {
  const char *fn = "zrt_mesh_init";
  if (int st = zrt::checkInitialized(fn, state.initialized, zrt_cuda::fail))
    return st;
  if (tensorSize < 1)
    return fail(ZRT_ERR_INVALID_ARGUMENT,
                "%s: tensor size %d must be at least 1", fn, tensorSize);
  if (state.size % tensorSize != 0)
    return fail(ZRT_ERR_INVALID_ARGUMENT,
                "%s: tensor size %d does not divide the world size %d", fn,
                tensorSize, state.size);
  if (state.inFlight > 0)
    return fail(ZRT_ERR_INVALID_ARGUMENT,
                "%s: called with %lld collective(s) in flight (zrt_wait "
                "them first)",
                fn, static_cast<long long>(state.inFlight));
  // The communicators being replaced may still have queued work.
  if (cudaError_t err = cudaStreamSynchronize(state.comm); err != cudaSuccess)
    return cudaFail(fn, "cudaStreamSynchronize", err);
  resetAxes();
  if (tensorSize == 1)
    return ZRT_OK;
  const int M = tensorSize, d = state.rank / M, t = state.rank % M;
  int st = splitAxis(fn, ZRT_AXIS_DATA, t, d, state.size / M);
  if (!st)
    st = splitAxis(fn, ZRT_AXIS_TENSOR, d, t, M);
  if (st)
    resetAxes();
  return st;
}

int axis_rank(int axis) {
  if (!state.initialized || (axis != ZRT_AXIS_DATA && axis != ZRT_AXIS_TENSOR))
    return -1;
  return state.axes[axis].rank;
}

int axis_size(int axis) {
  if (!state.initialized || (axis != ZRT_AXIS_DATA && axis != ZRT_AXIS_TENSOR))
    return -1;
  return state.axes[axis].size;
}

int all_gather_start(int axis, const void *send, void *recv, int64_t n,
                     int dtype, zrt_request *req) {
  const char *fn = "zrt_all_gather_start";
  if (int st = checkCommon(fn, n, dtype, req))
    return st;
  if (int st = checkAxis(fn, axis))
    return st;
  if (int st = zrt::checkCollectiveBuffers(fn, send, recv, n, zrt_cuda::fail))
    return st;
  const Axis &a = state.axes[axis];
  const int64_t N = a.size;
  const int64_t es = zrt::dtypeBytes(dtype);
  zrt_request_s *r = nullptr;
  if (int st = beginCollective(fn, a.size, &r))
    return st;
  int st = ZRT_OK;
  if (N == 1) {
    st = localCopy(fn, recv, send, n * es);
  } else {
#if ZRT_HAVE_NCCL
    // In place when send is this rank's slot of recv (NCCL's convention).
    if (n > 0)
      if (ncclResult_t nr =
              ncclAllGather(send, recv, static_cast<size_t>(n),
                            ncclType(dtype), a.nccl, state.comm);
          nr != ncclSuccess)
        st = ncclFail(fn, "ncclAllGather", nr);
#endif
  }
  if (st) {
    releaseRequest(r);
    return st;
  }
  countTraffic(axis, ZRT_COLL_ALL_GATHER, n * (N - 1) * es);
  return endCollective(fn, a.size, r, req);
}

/// reduce_scatter_start / all_reduce_start on `axis`.
static int startReduction(const char *fn, int axis, bool scatter,
                          const void *send, void *recv, int64_t n, int dtype,
                          int op, zrt_request *req) {
  if (int st = checkCommon(fn, n, dtype, req))
    return st;
  if (int st = checkAxis(fn, axis))
    return st;
  if (int st = zrt::checkReduceOp(fn, op, zrt_cuda::fail))
    return st;
  if (int st = zrt::checkCollectiveBuffers(fn, send, recv, n, zrt_cuda::fail))
    return st;
  const Axis &a = state.axes[axis];
  const int64_t N = a.size;
  const int64_t es = zrt::dtypeBytes(dtype);
  zrt_request_s *r = nullptr;
  if (int st = beginCollective(fn, a.size, &r))
    return st;
  int st = ZRT_OK;
  if (N == 1) {
    // Sum, mean and maximum over one rank: the input itself.
    st = localCopy(fn, recv, send, n * es);
  } else {
#if ZRT_HAVE_NCCL
    if (n > 0) {
      ncclResult_t nr =
          scatter ? ncclReduceScatter(send, recv, static_cast<size_t>(n),
                                      ncclType(dtype), ncclOp(op), a.nccl,
                                      state.comm)
                  : ncclAllReduce(send, recv, static_cast<size_t>(n),
                                  ncclType(dtype), ncclOp(op), a.nccl,
                                  state.comm);
      if (nr != ncclSuccess)
        st = ncclFail(fn, scatter ? "ncclReduceScatter" : "ncclAllReduce", nr);
    }
#endif
  }
  if (st) {
    releaseRequest(r);
    return st;
  }
  if (scatter)
    countTraffic(axis, ZRT_COLL_REDUCE_SCATTER, n * (N - 1) * es);
  else
    countTraffic(axis, ZRT_COLL_ALL_REDUCE, 2 * n * es * (N - 1) / N);
  return endCollective(fn, a.size, r, req);
}

int reduce_scatter_start(int axis, const void *send, void *recv, int64_t n,
                         int dtype, int op, zrt_request *req) {
  return startReduction("zrt_reduce_scatter_start", axis, true, send, recv, n,
                        dtype, op, req);
}

int all_reduce_start(int axis, const void *send, void *recv, int64_t n,
                     int dtype, int op, zrt_request *req) {
  return startReduction("zrt_all_reduce_start", axis, false, send, recv, n,
                        dtype, op, req);
}

int broadcast_start(void *buf, int64_t n, int dtype, int root,
                    zrt_request *req) {
  const char *fn = "zrt_broadcast_start";
  if (int st = checkCommon(fn, n, dtype, req))
    return st;
  if (int st =
          zrt::checkBroadcastArgs(fn, buf, n, root, state.size, zrt_cuda::fail))
    return st;
  zrt_request_s *r = nullptr;
  if (int st = beginCollective(fn, state.size, &r))
    return st;
  int st = ZRT_OK;
#if ZRT_HAVE_NCCL
  // Over the world, as the CPU backend (counted on the data axis).
  if (state.size > 1 && n > 0)
    if (ncclResult_t nr =
            ncclBroadcast(buf, buf, static_cast<size_t>(n), ncclType(dtype),
                          root, state.nccl, state.comm);
        nr != ncclSuccess)
      st = ncclFail(fn, "ncclBroadcast", nr);
#endif
  if (st) {
    releaseRequest(r);
    return st;
  }
  countTraffic(ZRT_AXIS_DATA, ZRT_COLL_BROADCAST,
               state.size > 1 ? n * zrt::dtypeBytes(dtype) : 0);
  return endCollective(fn, state.size, r, req);
}

int wait(zrt_request req) {
  const char *fn = "zrt_wait";
  if (!req)
    return ZRT_OK;
  int st = ZRT_OK;
  if (req->pending) {
    cudaStream_t s = stream();
    TimingPair p;
    st = newTimingPair(fn, &p);
    if (!st) {
      cudaError_t err = cudaEventRecord(p.before, s);
      if (err == cudaSuccess)
        err = cudaStreamWaitEvent(s, req->done, 0);
      if (err == cudaSuccess)
        err = cudaEventRecord(p.after, s);
      if (err != cudaSuccess)
        st = cudaFail(fn, "ordering compute after the collective", err);
      state.pendingTimings.push_back(p);
    }
  }
  releaseRequest(req);
  return st;
}

int all_gather(int axis, const void *send, void *recv, int64_t n, int dtype) {
  zrt_request r = nullptr;
  if (int st = all_gather_start(axis, send, recv, n, dtype, &r))
    return st;
  return wait(r);
}

int reduce_scatter(int axis, const void *send, void *recv, int64_t n,
                   int dtype, int op) {
  zrt_request r = nullptr;
  if (int st = reduce_scatter_start(axis, send, recv, n, dtype, op, &r))
    return st;
  return wait(r);
}

int all_reduce(int axis, const void *send, void *recv, int64_t n, int dtype,
               int op) {
  zrt_request r = nullptr;
  if (int st = all_reduce_start(axis, send, recv, n, dtype, op, &r))
    return st;
  return wait(r);
}

int broadcast(void *buf, int64_t n, int dtype, int root) {
  zrt_request r = nullptr;
  if (int st = broadcast_start(buf, n, dtype, root, &r))
    return st;
  return wait(r);
}

int64_t comm_bytes(int kind) {
  return kind >= 0 && kind < ZRT_COLL_NUM_KINDS
             ? state.bytes[ZRT_AXIS_DATA][kind] +
                   state.bytes[ZRT_AXIS_TENSOR][kind]
             : -1;
}

int64_t comm_calls(int kind) {
  return kind >= 0 && kind < ZRT_COLL_NUM_KINDS
             ? state.calls[ZRT_AXIS_DATA][kind] +
                   state.calls[ZRT_AXIS_TENSOR][kind]
             : -1;
}

int64_t comm_axis_bytes(int axis, int kind) {
  if ((axis != ZRT_AXIS_DATA && axis != ZRT_AXIS_TENSOR) || kind < 0 ||
      kind >= ZRT_COLL_NUM_KINDS)
    return -1;
  return state.bytes[axis][kind];
}

int64_t comm_axis_calls(int axis, int kind) {
  if ((axis != ZRT_AXIS_DATA && axis != ZRT_AXIS_TENSOR) || kind < 0 ||
      kind >= ZRT_COLL_NUM_KINDS)
    return -1;
  return state.calls[axis][kind];
}

double comm_wait_seconds() {
  (void)collectTimings("zrt_comm_wait_seconds");
  return state.waitSeconds;
}

// NCCL kernels progress on the GPU by themselves.
int comm_progress() { return ZRT_OK; }

void comm_reset() {
  (void)collectTimings("zrt_comm_reset");
  for (int a = 0; a < ZRT_NUM_AXES; ++a)
    for (int k = 0; k < ZRT_COLL_NUM_KINDS; ++k)
      state.bytes[a][k] = state.calls[a][k] = 0;
  state.waitSeconds = 0.0;
}

} // namespace zrt_cuda
