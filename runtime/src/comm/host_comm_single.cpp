//===- host_comm_single.cpp - host coordination of one process -------------===//
//
// zrt::host (host_comm.h) for a runtime built without MPI: the job is this
// one process (world size 1), so every collective is a local copy.
//
//===----------------------------------------------------------------------===//

#include "comm/host_comm.h"

#include <cstring>

namespace zrt::host {

bool allReduceMinInt(int value, int *out) {
  *out = value;
  return true;
}

bool allReduceSumDouble(double value, double *out) {
  *out = value;
  return true;
}

bool gatherBytes(const void *send, int64_t bytes, void *recv) {
  if (bytes > 0 && recv != send)
    std::memmove(recv, send, static_cast<size_t>(bytes));
  return true;
}

bool broadcastBytes(void *, int64_t, int root) { return root == 0; }

int localRanks(int) { return 1; }

void abortAll(int) {}

} // namespace zrt::host
