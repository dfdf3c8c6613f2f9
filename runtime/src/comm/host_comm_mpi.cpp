//===- host_comm_mpi.cpp - host coordination over MPI ---------------------===//
//
// zrt::host (host_comm.h) on MPI_COMM_WORLD, for the runtimes started by
// mpirun (MPI initialized by zrt_init).
//
//===----------------------------------------------------------------------===//

#include "comm/host_comm.h"

#include <mpi.h>

#include <algorithm>
#include <cstring>
#include <vector>

namespace zrt::host {

bool allReduceMinInt(int value, int *out) {
  return MPI_Allreduce(&value, out, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD) ==
         MPI_SUCCESS;
}

bool allReduceSumDouble(double value, double *out) {
  return MPI_Allreduce(&value, out, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD) ==
         MPI_SUCCESS;
}

bool gatherBytes(const void *send, int64_t bytes, void *recvPtr) {
  // MPI counts are int: gather in chunks of at most 1 GiB per rank.
  constexpr int64_t kChunk = int64_t(1) << 30;
  int rank = 0, world = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  char *recv = static_cast<char *>(recvPtr);
  if (bytes <= kChunk)
    return MPI_Gather(send, static_cast<int>(bytes), MPI_BYTE, recv,
                      static_cast<int>(bytes), MPI_BYTE, 0,
                      MPI_COMM_WORLD) == MPI_SUCCESS;
  std::vector<char> tmp(rank == 0 ? static_cast<size_t>(kChunk * world) : 0);
  for (int64_t done = 0; done < bytes; done += kChunk) {
    const int64_t c = std::min(kChunk, bytes - done);
    if (MPI_Gather(static_cast<const char *>(send) + done, static_cast<int>(c),
                   MPI_BYTE, tmp.data(), static_cast<int>(c), MPI_BYTE, 0,
                   MPI_COMM_WORLD) != MPI_SUCCESS)
      return false;
    if (rank == 0)
      for (int r = 0; r < world; ++r)
        std::memcpy(recv + r * bytes + done, tmp.data() + r * c,
                    static_cast<size_t>(c));
  }
  return true;
}

bool broadcastBytes(void *buf, int64_t bytes, int root) {
  constexpr int64_t kChunk = int64_t(1) << 30;
  for (int64_t done = 0; done < bytes; done += kChunk) {
    const int64_t c = std::min(kChunk, bytes - done);
    if (MPI_Bcast(static_cast<char *>(buf) + done, static_cast<int>(c),
                  MPI_BYTE, root, MPI_COMM_WORLD) != MPI_SUCCESS)
      return false;
  }
  return true;
}

int localRanks(int world) {
  int local = 1;
  MPI_Comm node;
  if (world > 1 &&
      MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0,
                          MPI_INFO_NULL, &node) == MPI_SUCCESS) {
    MPI_Comm_size(node, &local);
    MPI_Comm_free(&node);
  }
  return local;
}

void abortAll(int code) {
  int world = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  if (world > 1)
    MPI_Abort(MPI_COMM_WORLD, code);
}

} // namespace zrt::host
