// The NCCL stand-in of the emulated CUDA backend (include/nccl.h), over
// MPI: a communicator is a duplicate of MPI_COMM_WORLD (ncclCommInitRank)
// or an MPI_Comm_split of its parent's (ncclCommSplit); a collective checks
// its buffers against device memory when it is called and is queued on its
// stream, where it exchanges the data with blocking MPI calls and reduces
// on the host. Every rank queues the same collectives in the same order (a
// requirement of NCCL too), so the blocking calls meet.
//
// Reductions combine the ranks' values in rank order, each partial result
// rounded to the element type (NCCL reduces bf16 in f32 and rounds after
// every hop of its ring; with two ranks this is one rounding of a + b, as
// on the GPU; with more, the order differs from NCCL's ring, so bf16 sums
// may differ in the last bit). ncclAvg multiplies every input by 1 / nranks
// before summing (NCCL's PreMulSum for floating-point types).
#include "include/nccl.h"

#include "zrt/zrt.h"

#include <mpi.h>

#include <climits>
#include <cstring>
#include <random>
#include <vector>

struct ncclComm {
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0, size = 1;
  cudaStream_t lastStream = nullptr;
};

namespace {

size_t typeBytes(ncclDataType_t t) {
  return t == ncclFloat32 ? 4 : t == ncclBfloat16 || t == ncclFloat16 ? 2 : 0;
}

float load(const unsigned char *p, ncclDataType_t t) {
  if (t == ncclFloat32) {
    float f;
    memcpy(&f, p, 4);
    return f;
  }
  zrt_bf16 h;
  memcpy(&h, p, 2);
  return t == ncclFloat16 ? zrt_f16_to_f32(h) : zrt_bf16_to_f32(h);
}

void store(unsigned char *p, float v, ncclDataType_t t) {
  if (t == ncclFloat32) {
    memcpy(p, &v, 4);
    return;
  }
  const zrt_bf16 h = t == ncclFloat16 ? zrt_f32_to_f16(v) : zrt_f32_to_bf16(v);
  memcpy(p, &h, 2);
}

/// A value rounded to the element type.
float rounded(float v, ncclDataType_t t) {
  unsigned char b[4];
  store(b, v, t);
  return load(b, t);
}

/// out[i] = op over r of in[r * stride + i] (rank order, rounding each
/// partial result), for i < count.
void reduce(const unsigned char *in, size_t strideBytes, int nranks,
            size_t count, ncclDataType_t t, ncclRedOp_t op,
            unsigned char *out) {
  const size_t es = typeBytes(t);
  const float scale = 1.0f / static_cast<float>(nranks);
  for (size_t i = 0; i < count; ++i) {
    float acc = 0.0f;
    for (int r = 0; r < nranks; ++r) {
      float x = load(in + r * strideBytes + i * es, t);
      if (op == ncclAvg)
        x = rounded(x * scale, t);
      if (r == 0)
        acc = x;
      else if (op == ncclMax)
        acc = x > acc || std::isnan(x) ? x : acc;
      else if (op == ncclMin)
        acc = x < acc || std::isnan(x) ? x : acc;
      else if (op == ncclProd)
        acc = rounded(acc * x, t);
      else
        acc = rounded(acc + x, t);
    }
    store(out + i * es, acc, t);
  }
}

int bytesAsInt(size_t bytes) {
  if (bytes > static_cast<size_t>(INT_MAX))
    emu::die("emulated NCCL: %zu bytes in one exchange (MPI int counts)",
             bytes);
  return static_cast<int>(bytes);
}

void mpiCheck(int rc, const char *what) {
  if (rc != MPI_SUCCESS)
    emu::die("emulated NCCL: %s failed (%d)", what, rc);
}

/// Checks the common arguments; ncclSuccess or the NCCL error.
ncclResult_t checkArgs(ncclComm_t comm, ncclDataType_t t, const void *send,
                       void *recv) {
  if (!comm || typeBytes(t) == 0)
    return ncclInvalidArgument;
  if (!send || !recv)
    return ncclInvalidArgument;
  return ncclSuccess;
}

/// Every rank's `bytes` at `send`, in rank order (the input copied first,
/// so a receive buffer may overlap it).
std::vector<unsigned char> gatherAll(ncclComm_t comm, const void *send,
                                     size_t bytes) {
  const auto *p = static_cast<const unsigned char *>(send);
  std::vector<unsigned char> mine(p, p + bytes), all(bytes * comm->size);
  mpiCheck(MPI_Allgather(mine.data(), bytesAsInt(bytes), MPI_BYTE, all.data(),
                         bytesAsInt(bytes), MPI_BYTE, comm->comm),
           "MPI_Allgather");
  return all;
}

/// Queues `fn` on the stream as an early operation (include/cuda_runtime.h).
void queue(ncclComm_t comm, cudaStream_t stream, std::function<void()> fn) {
  comm->lastStream = stream;
  emu::enqueue(stream, std::move(fn), /*early=*/true);
}

} // namespace

ncclResult_t ncclGetUniqueId(ncclUniqueId *id) {
  if (!id)
    return ncclInvalidArgument;
  std::random_device rd;
  for (char &c : id->internal)
    c = static_cast<char>(rd());
  return ncclSuccess;
}

ncclResult_t ncclCommInitRank(ncclComm_t *out, int nranks, ncclUniqueId id,
                              int rank) {
  if (!out)
    return ncclInvalidArgument;
  int initialized = 0, size = 0, me = 0;
  MPI_Initialized(&initialized);
  if (!initialized)
    return ncclInvalidUsage;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  if (nranks != size || rank != me || rank < 0)
    return ncclInvalidArgument;
  auto *c = new ncclComm;
  mpiCheck(MPI_Comm_dup(MPI_COMM_WORLD, &c->comm), "MPI_Comm_dup");
  c->rank = rank;
  c->size = nranks;
  // Every rank must hold rank 0's id.
  ncclUniqueId root = id;
  mpiCheck(MPI_Bcast(&root, sizeof root, MPI_BYTE, 0, c->comm), "MPI_Bcast");
  int same = memcmp(&root, &id, sizeof id) == 0, all = 0;
  mpiCheck(MPI_Allreduce(&same, &all, 1, MPI_INT, MPI_MIN, c->comm),
           "MPI_Allreduce");
  if (!all) {
    MPI_Comm_free(&c->comm);
    delete c;
    return ncclInvalidUsage;
  }
  *out = c;
  return ncclSuccess;
}

ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key,
                           ncclComm_t *newcomm, ncclConfig_t *config) {
  if (!comm || !newcomm || config || (color < 0 && color != NCCL_SPLIT_NOCOLOR))
    return ncclInvalidArgument;
  emu::drainAll();
  MPI_Comm split = MPI_COMM_NULL;
  mpiCheck(MPI_Comm_split(comm->comm,
                          color == NCCL_SPLIT_NOCOLOR ? MPI_UNDEFINED : color,
                          key, &split),
           "MPI_Comm_split");
  *newcomm = nullptr;
  if (split == MPI_COMM_NULL)
    return ncclSuccess;
  auto *c = new ncclComm;
  c->comm = split;
  MPI_Comm_rank(split, &c->rank);
  MPI_Comm_size(split, &c->size);
  *newcomm = c;
  return ncclSuccess;
}

ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  if (!comm)
    return ncclInvalidArgument;
  emu::drainAll();
  MPI_Comm_free(&comm->comm);
  delete comm;
  return ncclSuccess;
}

const char *ncclGetErrorString(ncclResult_t r) {
  switch (r) {
  case ncclSuccess: return "no error";
  case ncclInvalidArgument: return "invalid argument (emulated NCCL)";
  case ncclInvalidUsage: return "invalid usage (emulated NCCL)";
  default: return "emulated NCCL error";
  }
}

ncclResult_t ncclAllGather(const void *send, void *recv, size_t sendcount,
                           ncclDataType_t t, ncclComm_t comm,
                           cudaStream_t stream) {
  if (ncclResult_t r = checkArgs(comm, t, send, recv))
    return r;
  const size_t bytes = sendcount * typeBytes(t);
  emu::checkDevice(send, bytes, "ncclAllGather send buffer");
  emu::checkDevice(recv, bytes * comm->size, "ncclAllGather receive buffer");
  queue(comm, stream, [=] {
    std::vector<unsigned char> all = gatherAll(comm, send, bytes);
    memcpy(recv, all.data(), all.size());
  });
  return ncclSuccess;
}

ncclResult_t ncclReduceScatter(const void *send, void *recv, size_t recvcount,
                               ncclDataType_t t, ncclRedOp_t op,
                               ncclComm_t comm, cudaStream_t stream) {
  if (ncclResult_t r = checkArgs(comm, t, send, recv))
    return r;
  if (op < ncclSum || op >= ncclNumOps)
    return ncclInvalidArgument;
  const size_t bytes = recvcount * typeBytes(t);
  emu::checkDevice(send, bytes * comm->size, "ncclReduceScatter send buffer");
  emu::checkDevice(recv, bytes, "ncclReduceScatter receive buffer");
  queue(comm, stream, [=] {
    const int n = comm->size;
    // Chunk j of every rank's input goes to rank j.
    std::vector<unsigned char> in(static_cast<const unsigned char *>(send),
                                  static_cast<const unsigned char *>(send) +
                                      bytes * n),
        chunks(bytes * n);
    mpiCheck(MPI_Alltoall(in.data(), bytesAsInt(bytes), MPI_BYTE,
                          chunks.data(), bytesAsInt(bytes), MPI_BYTE,
                          comm->comm),
             "MPI_Alltoall");
    reduce(chunks.data(), bytes, n, recvcount, t, op,
           static_cast<unsigned char *>(recv));
  });
  return ncclSuccess;
}

ncclResult_t ncclAllReduce(const void *send, void *recv, size_t count,
                           ncclDataType_t t, ncclRedOp_t op, ncclComm_t comm,
                           cudaStream_t stream) {
  if (ncclResult_t r = checkArgs(comm, t, send, recv))
    return r;
  if (op < ncclSum || op >= ncclNumOps)
    return ncclInvalidArgument;
  const size_t bytes = count * typeBytes(t);
  emu::checkDevice(send, bytes, "ncclAllReduce send buffer");
  emu::checkDevice(recv, bytes, "ncclAllReduce receive buffer");
  queue(comm, stream, [=] {
    std::vector<unsigned char> all = gatherAll(comm, send, bytes);
    reduce(all.data(), bytes, comm->size, count, t, op,
           static_cast<unsigned char *>(recv));
  });
  return ncclSuccess;
}

ncclResult_t ncclBroadcast(const void *send, void *recv, size_t count,
                           ncclDataType_t t, int root, ncclComm_t comm,
                           cudaStream_t stream) {
  if (ncclResult_t r = checkArgs(comm, t, comm && comm->rank == root
                                               ? send
                                               : recv,
                                 recv))
    return r;
  if (root < 0 || root >= comm->size)
    return ncclInvalidArgument;
  const size_t bytes = count * typeBytes(t);
  if (comm->rank == root)
    emu::checkDevice(send, bytes, "ncclBroadcast send buffer");
  emu::checkDevice(recv, bytes, "ncclBroadcast receive buffer");
  queue(comm, stream, [=] {
    std::vector<unsigned char> buf(bytes);
    if (comm->rank == root)
      memcpy(buf.data(), send, bytes);
    mpiCheck(MPI_Bcast(buf.data(), bytesAsInt(bytes), MPI_BYTE, root,
                       comm->comm),
             "MPI_Bcast");
    memcpy(recv, buf.data(), bytes);
  });
  return ncclSuccess;
}
