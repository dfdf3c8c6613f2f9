//===- comm.cpp - Process group and collectives over MPI -------------------===//
//
// All collectives are MPI-3 nonblocking collectives on a duplicate of
// MPI_COMM_WORLD with MPI_ERRORS_RETURN; the blocking forms are start + wait.
// The mesh data x tensor (zrt_mesh_init) has one communicator per axis,
// split from that duplicate; the collectives without an axis run on the
// data axis, whose communicator is the duplicate itself until a mesh with
// M > 1 is made.
// bf16 reductions widen to f32 staging buffers owned by the request, reduce
// in f32 and round back to bf16 once in zrt_wait.
//
// Requests come from a pool that zrt_init fills (kRequestPool of them) and
// zrt_wait refills, so a step allocates none; the pool grows (a counted
// heap allocation) only when more requests are outstanding at once. A
// request keeps its grow-only staging buffers when it returns to the pool.
//
//===----------------------------------------------------------------------===//

#include "common/arg_checks.h"
#include "common/internal.h"

#include <mpi.h>

#include "common/mpi_start.h"

#include <chrono>
#include <new>

struct zrt_request_s {
  MPI_Request mpi = MPI_REQUEST_NULL;
  // Epilogue applied in zrt_wait.
  float *scaleOut = nullptr; // f32 result to multiply by `scale` (ZRT_AVG)
  float scale = 1.0f;
  int64_t count = 0;
  zrt_bf16 *bf16Out = nullptr; // 16-bit destination of the f32 staging result
  bool f16Out = false;         // bf16Out holds f16 (ZRT_F16), not bf16
  zrt::FloatBuffer stageIn, stageOut;
  zrt_request_s *nextFree = nullptr; // in the pool
  // In the list of started, not yet waited requests (zrt_comm_progress).
  zrt_request_s *prevActive = nullptr, *nextActive = nullptr;
};

namespace {

struct CommState {
  bool initialized = false;
  bool finalized = false;
  bool ownsMpi = false;
  MPI_Comm comm = MPI_COMM_NULL; // the whole world
  int rank = -1;
  int size = -1;
  /// Per axis: its communicator (axisComm[ZRT_AXIS_DATA] == comm while the
  /// mesh is N x 1; otherwise owned, like the tensor axis's), this rank's
  /// index and the axis size.
  MPI_Comm axisComm[ZRT_NUM_AXES] = {MPI_COMM_NULL, MPI_COMM_NULL};
  int axisRank[ZRT_NUM_AXES] = {-1, -1};
  int axisSize[ZRT_NUM_AXES] = {-1, -1};
  int64_t bytes[ZRT_NUM_AXES][ZRT_COLL_NUM_KINDS] = {};
  int64_t calls[ZRT_NUM_AXES][ZRT_COLL_NUM_KINDS] = {};
  double waitSeconds = 0.0;
  zrt_request_s *freeRequests = nullptr;
  zrt_request_s *active = nullptr; // started, not yet waited
};

CommState state;

/// Requests zrt_init puts in the pool.
constexpr int kRequestPool = 128;

zrt_request_s *allocRequest() {
  void *mem = zrt::allocate(sizeof(zrt_request_s));
  return mem ? new (mem) zrt_request_s : nullptr;
}

/// Links a started request into the active list.
void activate(zrt_request r) {
  r->prevActive = nullptr;
  r->nextActive = state.active;
  if (state.active)
    state.active->prevActive = r;
  state.active = r;
}

void deactivate(zrt_request r) {
  if (r->prevActive)
    r->prevActive->nextActive = r->nextActive;
  else if (state.active == r)
    state.active = r->nextActive;
  if (r->nextActive)
    r->nextActive->prevActive = r->prevActive;
  r->prevActive = r->nextActive = nullptr;
}

/// Returns a request to the pool (keeping its staging buffers).
void releaseRequest(zrt_request r) {
  deactivate(r);
  r->mpi = MPI_REQUEST_NULL;
  r->scaleOut = nullptr;
  r->scale = 1.0f;
  r->count = 0;
  r->bf16Out = nullptr;
  r->f16Out = false;
  r->nextFree = state.freeRequests;
  state.freeRequests = r;
}

int mpiFail(const char *fn, int code) {
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(code, msg, &len);
  return zrt::fail(ZRT_ERR_MPI, "%s: MPI error: %.*s", fn, len, msg);
}

/// The shared checks of every *_start collective (arg_checks.h), with MPI's
/// int counts.
int checkCommon(const char *fn, int64_t n, int dtype, zrt_request *req) {
  return zrt::checkCollectiveArgs(fn, state.initialized, n, dtype, req,
                                  /*mpiCounts=*/true, zrt::fail);
}

MPI_Op mpiOp(int op) { return op == ZRT_MAX ? MPI_MAX : MPI_SUM; }

void countTraffic(int axis, int kind, int64_t bytes) {
  state.bytes[axis][kind] += bytes;
  state.calls[axis][kind] += 1;
}

int checkAxis(const char *fn, int axis) {
  ZRT_REQUIRE(axis >= 0 && axis < ZRT_NUM_AXES,
              "%s: axis %d is not ZRT_AXIS_DATA (0) or ZRT_AXIS_TENSOR (1)",
              fn, axis);
  return ZRT_OK;
}

/// Frees the axis communicators this runtime split (never the world's).
void freeAxisComms() {
  for (int a = 0; a < ZRT_NUM_AXES; ++a) {
    if (state.axisComm[a] != MPI_COMM_NULL && state.axisComm[a] != state.comm)
      MPI_Comm_free(&state.axisComm[a]);
    state.axisComm[a] = MPI_COMM_NULL;
    state.axisRank[a] = state.axisSize[a] = -1;
  }
}

/// Sets axis `a` to `c` (already error-returning) and reads its rank/size.
void setAxis(int a, MPI_Comm c) {
  state.axisComm[a] = c;
  MPI_Comm_rank(c, &state.axisRank[a]);
  MPI_Comm_size(c, &state.axisSize[a]);
}

zrt_request newRequest(const char *fn, int *status) {
  zrt_request r = state.freeRequests;
  if (r) {
    state.freeRequests = r->nextFree;
    r->nextFree = nullptr;
    return r;
  }
  r = allocRequest();
  if (!r)
    *status = zrt::fail(ZRT_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
  return r;
}

// Allocates the f32 staging buffers of a bf16 or f16 reduction and widens
// the input into them.
int stageBf16(const char *fn, zrt_request r, const void *send, int64_t nIn,
              int64_t nOut, int dtype) {
  if (!r->stageIn.reserve(nIn) || !r->stageOut.reserve(nOut))
    return zrt::fail(ZRT_ERR_OUT_OF_MEMORY,
                     "%s: cannot allocate f32 staging buffers", fn);
  if (dtype == ZRT_F16)
    zrt_cast_f16_to_f32(static_cast<const zrt_f16 *>(send), r->stageIn.data,
                        nIn);
  else
    zrt_cast_bf16_to_f32(static_cast<const zrt_bf16 *>(send),
                         r->stageIn.data, nIn);
  return ZRT_OK;
}

// Starts a reduction (reduce-scatter if scatter, else all-reduce).
int startReduction(const char *fn, int axis, bool scatter, const void *send,
                   void *recv, int64_t n, int dtype, int op, zrt_request *req) {
  if (int st = checkCommon(fn, n, dtype, req))
    return st;
  if (int st = checkAxis(fn, axis))
    return st;
  if (int st = zrt::checkReduceOp(fn, op, zrt::fail))
    return st;
  const int64_t N = state.axisSize[axis];
  MPI_Comm comm = state.axisComm[axis];
  ZRT_REQUIRE(!scatter || n * N <= INT_MAX, "%s: n * N exceeds the MPI count "
              "limit", fn);
  const int64_t nIn = scatter ? n * N : n;
  if (int st = zrt::checkCollectiveBuffers(fn, send, recv, n, zrt::fail))
    return st;
  int status = ZRT_OK;
  zrt_request r = newRequest(fn, &status);
  if (!r)
    return status;
  const void *in = send;
  void *out = recv;
  if (dtype == ZRT_BF16 || dtype == ZRT_F16) {
    if (int st = stageBf16(fn, r, send, nIn, n, dtype)) {
      releaseRequest(r);
      return st;
    }
    in = r->stageIn.data;
    out = r->stageOut.data;
    r->bf16Out = static_cast<zrt_bf16 *>(recv);
    r->f16Out = dtype == ZRT_F16;
  } else {
    r->scaleOut = static_cast<float *>(recv);
  }
  r->count = n;
  if (op == ZRT_AVG)
    r->scale = 1.0f / static_cast<float>(N);
  const int cnt = static_cast<int>(n);
  int rc;
  if (scatter) {
    rc = MPI_Ireduce_scatter_block(in, out, cnt, MPI_FLOAT, mpiOp(op), comm,
                                   &r->mpi);
  } else {
    if (dtype == ZRT_F32 && in == out)
      in = MPI_IN_PLACE;
    rc = MPI_Iallreduce(in, out, cnt, MPI_FLOAT, mpiOp(op), comm, &r->mpi);
  }
  if (rc != MPI_SUCCESS) {
    releaseRequest(r);
    return mpiFail(fn, rc);
  }
  const int64_t elemBytes = zrt::dtypeBytes(dtype);
  if (scatter)
    countTraffic(axis, ZRT_COLL_REDUCE_SCATTER, n * (N - 1) * elemBytes);
  else
    countTraffic(axis, ZRT_COLL_ALL_REDUCE, 2 * n * elemBytes * (N - 1) / N);
  activate(r);
  *req = r;
  return ZRT_OK;
}


} // namespace

extern "C" {

int zrt_init(int *argc, char ***argv) {
  if (state.initialized)
    return ZRT_OK;
  if (state.finalized)
    return zrt::fail(ZRT_ERR_NOT_INITIALIZED,
                     "zrt_init: called after zrt_finalize; MPI cannot be "
                     "re-initialized");
  if (int rc = zrt::startMpi(argc, argv, &state.ownsMpi); rc != MPI_SUCCESS)
    return zrt::fail(ZRT_ERR_MPI, "zrt_init: MPI_Init_thread failed (%d)", rc);
  int rc = MPI_Comm_dup(MPI_COMM_WORLD, &state.comm);
  if (rc != MPI_SUCCESS)
    return mpiFail("zrt_init", rc);
  MPI_Comm_set_errhandler(state.comm, MPI_ERRORS_RETURN);
  MPI_Comm_rank(state.comm, &state.rank);
  MPI_Comm_size(state.comm, &state.size);
  // The N x 1 mesh: the data axis is the world, the tensor axis each rank.
  setAxis(ZRT_AXIS_DATA, state.comm);
  MPI_Comm self = MPI_COMM_NULL;
  rc = MPI_Comm_dup(MPI_COMM_SELF, &self);
  if (rc != MPI_SUCCESS)
    return mpiFail("zrt_init", rc);
  MPI_Comm_set_errhandler(self, MPI_ERRORS_RETURN);
  setAxis(ZRT_AXIS_TENSOR, self);
  for (int i = 0; i < kRequestPool; ++i) {
    zrt_request r = allocRequest();
    if (!r)
      return zrt::fail(ZRT_ERR_OUT_OF_MEMORY, "zrt_init: out of memory");
    releaseRequest(r);
  }
  state.initialized = true;
  return ZRT_OK;
}

int zrt_finalize(void) {
  if (!state.initialized)
    return ZRT_OK;
  while (zrt_request r = state.freeRequests) {
    state.freeRequests = r->nextFree;
    r->~zrt_request_s();
    zrt::release(r);
  }
  freeAxisComms();
  MPI_Comm_free(&state.comm);
  state.comm = MPI_COMM_NULL;
  state.initialized = false;
  state.finalized = true;
  state.rank = state.size = -1;
  if (state.ownsMpi) {
    int rc = MPI_Finalize();
    if (rc != MPI_SUCCESS)
      return zrt::fail(ZRT_ERR_MPI, "zrt_finalize: MPI_Finalize failed (%d)",
                       rc);
  }
  return ZRT_OK;
}

int zrt_rank(void) { return state.initialized ? state.rank : -1; }

int zrt_world_size(void) { return state.initialized ? state.size : -1; }

int zrt_barrier(void) {
  if (int st =
          zrt::checkInitialized("zrt_barrier", state.initialized, zrt::fail))
    return st;
  int rc = MPI_Barrier(state.comm);
  return rc == MPI_SUCCESS ? ZRT_OK : mpiFail("zrt_barrier", rc);
}

int zrt_all_gather_axis_start(int axis, const void *send, void *recv,
                              int64_t n, int dtype, zrt_request *req) {
  const char *fn = "zrt_all_gather_axis_start";
  if (int st = checkCommon(fn, n, dtype, req))
    return st;
  if (int st = checkAxis(fn, axis))
    return st;
  const int64_t N = state.axisSize[axis];
  ZRT_REQUIRE(n * N <= INT_MAX, "%s: n * N exceeds the MPI count limit", fn);
  if (int st = zrt::checkCollectiveBuffers(fn, send, recv, n, zrt::fail))
    return st;
  int status = ZRT_OK;
  zrt_request r = newRequest(fn, &status);
  if (!r)
    return status;
  const size_t es = static_cast<size_t>(zrt::dtypeBytes(dtype));
  const MPI_Datatype type = dtype == ZRT_F32 ? MPI_FLOAT : MPI_UINT16_T;
  const char *mine = static_cast<const char *>(recv) +
                     static_cast<size_t>(state.axisRank[axis]) * n * es;
  const void *in = (n > 0 && send == mine) ? MPI_IN_PLACE : send;
  const int cnt = static_cast<int>(n);
  int rc = MPI_Iallgather(in, cnt, type, recv, cnt, type, state.axisComm[axis],
                          &r->mpi);
  if (rc != MPI_SUCCESS) {
    releaseRequest(r);
    return mpiFail(fn, rc);
  }
  countTraffic(axis, ZRT_COLL_ALL_GATHER,
               n * (N - 1) * static_cast<int64_t>(es));
  activate(r);
  *req = r;
  return ZRT_OK;
}

int zrt_all_gather_start(const void *send, void *recv, int64_t n, int dtype,
                         zrt_request *req) {
  return zrt_all_gather_axis_start(ZRT_AXIS_DATA, send, recv, n, dtype, req);
}

int zrt_reduce_scatter_axis_start(int axis, const void *send, void *recv,
                                  int64_t n, int dtype, int op,
                                  zrt_request *req) {
  return startReduction("zrt_reduce_scatter_axis_start", axis, true, send,
                        recv, n, dtype, op, req);
}

int zrt_all_reduce_axis_start(int axis, const void *send, void *recv,
                              int64_t n, int dtype, int op, zrt_request *req) {
  return startReduction("zrt_all_reduce_axis_start", axis, false, send, recv,
                        n, dtype, op, req);
}

int zrt_reduce_scatter_start(const void *send, void *recv, int64_t n,
                             int dtype, int op, zrt_request *req) {
  return startReduction("zrt_reduce_scatter_start", ZRT_AXIS_DATA, true, send,
                        recv, n, dtype, op, req);
}

int zrt_all_reduce_start(const void *send, void *recv, int64_t n, int dtype,
                         int op, zrt_request *req) {
  return startReduction("zrt_all_reduce_start", ZRT_AXIS_DATA, false, send,
                        recv, n, dtype, op, req);
}

int zrt_broadcast_start(void *buf, int64_t n, int dtype, int root,
                        zrt_request *req) {
  const char *fn = "zrt_broadcast_start";
  if (int st = checkCommon(fn, n, dtype, req))
    return st;
  if (int st = zrt::checkBroadcastArgs(fn, buf, n, root, state.size, zrt::fail))
    return st;
  int status = ZRT_OK;
  zrt_request r = newRequest(fn, &status);
  if (!r)
    return status;
  const MPI_Datatype type = dtype == ZRT_F32 ? MPI_FLOAT : MPI_UINT16_T;
  int rc = MPI_Ibcast(buf, static_cast<int>(n), type, root, state.comm,
                      &r->mpi);
  if (rc != MPI_SUCCESS) {
    releaseRequest(r);
    return mpiFail(fn, rc);
  }
  countTraffic(ZRT_AXIS_DATA, ZRT_COLL_BROADCAST,
               state.size > 1 ? n * zrt::dtypeBytes(dtype) : 0);
  activate(r);
  *req = r;
  return ZRT_OK;
}

int zrt_wait(zrt_request req) {
  if (!req)
    return ZRT_OK;
  const auto t0 = std::chrono::steady_clock::now();
  int rc = MPI_Wait(&req->mpi, MPI_STATUS_IGNORE);
  state.waitSeconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  if (rc != MPI_SUCCESS) {
    releaseRequest(req);
    return mpiFail("zrt_wait", rc);
  }
  const int64_t n = req->count;
  if (req->bf16Out) {
    float *src = req->stageOut.data;
    const float s = req->scale;
    zrt_bf16 *dst = req->bf16Out;
    if (req->f16Out) {
#pragma omp parallel for schedule(static) if (n > zrt::kParallelGrain)
      for (int64_t i = 0; i < n; ++i)
        dst[i] = zrt::f32ToF16(src[i] * s);
    } else {
#pragma omp parallel for schedule(static) if (n > zrt::kParallelGrain)
      for (int64_t i = 0; i < n; ++i)
        dst[i] = zrt::f32ToBf16(src[i] * s);
    }
  } else if (req->scaleOut && req->scale != 1.0f) {
    zrt_scale(req->scaleOut, req->scale, req->scaleOut, n);
  }
  releaseRequest(req);
  return ZRT_OK;
}

int zrt_all_gather(const void *send, void *recv, int64_t n, int dtype) {
  zrt_request r = nullptr;
  if (int st = zrt_all_gather_start(send, recv, n, dtype, &r))
    return st;
  return zrt_wait(r);
}

int zrt_reduce_scatter(const void *send, void *recv, int64_t n, int dtype,
                       int op) {
  zrt_request r = nullptr;
  if (int st = zrt_reduce_scatter_start(send, recv, n, dtype, op, &r))
    return st;
  return zrt_wait(r);
}

int zrt_all_reduce(const void *send, void *recv, int64_t n, int dtype,
                   int op) {
  zrt_request r = nullptr;
  if (int st = zrt_all_reduce_start(send, recv, n, dtype, op, &r))
    return st;
  return zrt_wait(r);
}

int zrt_all_gather_axis(int axis, const void *send, void *recv, int64_t n,
                        int dtype) {
  zrt_request r = nullptr;
  if (int st = zrt_all_gather_axis_start(axis, send, recv, n, dtype, &r))
    return st;
  return zrt_wait(r);
}

int zrt_reduce_scatter_axis(int axis, const void *send, void *recv, int64_t n,
                            int dtype, int op) {
  zrt_request r = nullptr;
  if (int st = zrt_reduce_scatter_axis_start(axis, send, recv, n, dtype, op, &r))
    return st;
  return zrt_wait(r);
}

int zrt_all_reduce_axis(int axis, const void *send, void *recv, int64_t n,
                        int dtype, int op) {
  zrt_request r = nullptr;
  if (int st = zrt_all_reduce_axis_start(axis, send, recv, n, dtype, op, &r))
    return st;
  return zrt_wait(r);
}

int zrt_broadcast(void *buf, int64_t n, int dtype, int root) {
  zrt_request r = nullptr;
  if (int st = zrt_broadcast_start(buf, n, dtype, root, &r))
    return st;
  return zrt_wait(r);
}

int64_t zrt_comm_bytes(int kind) {
  if (kind < 0 || kind >= ZRT_COLL_NUM_KINDS)
    return -1;
  return state.bytes[ZRT_AXIS_DATA][kind] + state.bytes[ZRT_AXIS_TENSOR][kind];
}

int64_t zrt_comm_calls(int kind) {
  if (kind < 0 || kind >= ZRT_COLL_NUM_KINDS)
    return -1;
  return state.calls[ZRT_AXIS_DATA][kind] + state.calls[ZRT_AXIS_TENSOR][kind];
}

int64_t zrt_comm_axis_bytes(int axis, int kind) {
  if (axis < 0 || axis >= ZRT_NUM_AXES || kind < 0 ||
      kind >= ZRT_COLL_NUM_KINDS)
    return -1;
  return state.bytes[axis][kind];
}

int64_t zrt_comm_axis_calls(int axis, int kind) {
  if (axis < 0 || axis >= ZRT_NUM_AXES || kind < 0 ||
      kind >= ZRT_COLL_NUM_KINDS)
    return -1;
  return state.calls[axis][kind];
}

int zrt_mesh_init(int tensorSize) {
  const char *fn = "zrt_mesh_init";
  if (int st = zrt::checkInitialized(fn, state.initialized, zrt::fail))
    return st;
  ZRT_REQUIRE(tensorSize >= 1, "%s: tensor size %d must be at least 1", fn,
              tensorSize);
  ZRT_REQUIRE(state.size % tensorSize == 0,
              "%s: tensor size %d does not divide the world size %d", fn,
              tensorSize, state.size);
  ZRT_REQUIRE(state.active == nullptr,
              "%s: called with a collective in flight", fn);
  freeAxisComms();
  if (tensorSize == 1) {
    setAxis(ZRT_AXIS_DATA, state.comm);
  } else {
    // Data axis: the ranks with the same t = r mod M, ordered by d.
    MPI_Comm data = MPI_COMM_NULL;
    int rc = MPI_Comm_split(state.comm, state.rank % tensorSize,
                            state.rank / tensorSize, &data);
    if (rc != MPI_SUCCESS)
      return mpiFail(fn, rc);
    MPI_Comm_set_errhandler(data, MPI_ERRORS_RETURN);
    setAxis(ZRT_AXIS_DATA, data);
  }
  // Tensor axis: the ranks with the same d = r div M, ordered by t (each
  // rank alone for M = 1).
  MPI_Comm tensor = MPI_COMM_NULL;
  int rc = MPI_Comm_split(state.comm, state.rank / tensorSize,
                          state.rank % tensorSize, &tensor);
  if (rc != MPI_SUCCESS)
    return mpiFail(fn, rc);
  MPI_Comm_set_errhandler(tensor, MPI_ERRORS_RETURN);
  setAxis(ZRT_AXIS_TENSOR, tensor);
  return ZRT_OK;
}

int zrt_axis_rank(int axis) {
  if (!state.initialized || axis < 0 || axis >= ZRT_NUM_AXES)
    return -1;
  return state.axisRank[axis];
}

int zrt_axis_size(int axis) {
  if (!state.initialized || axis < 0 || axis >= ZRT_NUM_AXES)
    return -1;
  return state.axisSize[axis];
}

double zrt_comm_wait_seconds(void) { return state.waitSeconds; }

int zrt_comm_progress(void) {
  if (!state.initialized)
    return ZRT_OK;
  for (zrt_request r = state.active; r; r = r->nextActive) {
    if (r->mpi == MPI_REQUEST_NULL)
      continue;
    int done = 0;
    int rc = MPI_Test(&r->mpi, &done, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS)
      return mpiFail("zrt_comm_progress", rc);
  }
  return ZRT_OK;
}

void zrt_comm_reset(void) {
  for (int a = 0; a < ZRT_NUM_AXES; ++a)
    for (int k = 0; k < ZRT_COLL_NUM_KINDS; ++k)
      state.bytes[a][k] = state.calls[a][k] = 0;
  state.waitSeconds = 0.0;
}

} // extern "C"
