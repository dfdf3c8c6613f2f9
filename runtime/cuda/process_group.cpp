//===- process_group.cpp - CUDA backend: process group and rank mesh ------===//
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
//===----------------------------------------------------------------------===//

#include "comm_state.h"
#if ZRT_HAVE_MPI
#include "../src/common/mpi_start.h"
#endif

#if ZRT_HAVE_MPI
namespace zrt_cuda::comm_detail {

int mpiFail(const char *fn, const char *what, int code) {
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(code, msg, &len);
  return zrt_cuda::fail(ZRT_ERR_MPI, "%s: %s: MPI error: %.*s", fn, what, len,
                        msg);
}

} // namespace zrt_cuda::comm_detail
#endif

namespace {

using namespace zrt_cuda::comm_detail;


/// Rank, size and the rank on this node, from MPI when built with it.
int startProcessGroup(int *argc, char ***argv, int *localRank) {
  const char *fn = "zrt_init";
#if ZRT_HAVE_MPI
  if (int rc = zrt::startMpi(argc, argv, &state.ownsMpi); rc != MPI_SUCCESS)
    return zrt_cuda::fail(ZRT_ERR_MPI, "%s: MPI_Init_thread failed (%d)", fn,
                          rc);
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

using namespace comm_detail;

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

} // namespace zrt_cuda
