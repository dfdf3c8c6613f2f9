//===- comm.cpp - CUDA backend: collectives (NCCL) -------------------------===//
//
// The process group (MPI, the NCCL communicators, the rank mesh) is
// process_group.cpp; what both share is comm_state.h.
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

#include "comm_state.h"

namespace zrt_cuda::comm_detail {

CommState state;

int cudaFail(const char *fn, const char *what, cudaError_t err) {
  return zrt_cuda::check(err, ZRT_ERR_MPI, fn, what);
}

#if ZRT_HAVE_NCCL
int ncclFail(const char *fn, const char *what, ncclResult_t r) {
  return zrt_cuda::fail(ZRT_ERR_MPI, "%s: %s: NCCL error: %s", fn, what,
                        ncclGetErrorString(r));
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

} // namespace zrt_cuda::comm_detail

namespace {

using namespace zrt_cuda::comm_detail;

#if ZRT_HAVE_NCCL
ncclDataType_t ncclType(int dtype) {
  return dtype == ZRT_BF16   ? ncclBfloat16
         : dtype == ZRT_F16 ? ncclFloat16
                            : ncclFloat32;
}
ncclRedOp_t ncclOp(int op) {
  return op == ZRT_MAX ? ncclMax : (op == ZRT_AVG ? ncclAvg : ncclSum);
}
#endif

zrt_request_s *newRequest(const char *fn, int *status) {
  if (zrt_request_s *r = state.freeRequests) {
    state.freeRequests = r->nextFree;
    r->nextFree = nullptr;
    return r;
  }
  return allocRequest(fn, status);
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

} // namespace

namespace zrt_cuda {

using namespace comm_detail;

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
