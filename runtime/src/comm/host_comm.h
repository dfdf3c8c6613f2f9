//===- host_comm.h - the driver's host-side coordination ----------*- C++ -*-===//
///
/// \file
/// What the training driver and the checkpoint writer need from the other
/// processes, on HOST memory: agreeing on errors, averaging logged values,
/// gathering tensors and checksums to rank 0, broadcasting a sampled token.
/// Kept apart from the zrt_* collectives so that the runtime's traffic
/// counters hold exactly the model's traffic (and so that a device backend's
/// collectives, which work on device memory, are never asked to move host
/// values).
///
/// Two implementations, one linked per runtime library:
///  * host_comm_mpi.cpp: MPI on MPI_COMM_WORLD (MPI is started by zrt_init);
///  * host_comm_single.cpp: one process (world size 1), no MPI at all: the
///    CUDA backend built where MPI is missing.
/// Every function must be called by all ranks in the same order (they are
/// collective), after zrt_init succeeded; each returns false if the
/// underlying call failed.
///
//===----------------------------------------------------------------------===//
#ifndef ZRT_SRC_HOST_COMM_H
#define ZRT_SRC_HOST_COMM_H

#include <cstdint>

namespace zrt::host {

/// *out = minimum of `value` over all ranks.
bool allReduceMinInt(int value, int *out);

/// *out = sum of `value` over all ranks (in double).
bool allReduceSumDouble(double value, double *out);

/// Rank 0 receives every rank's `bytes` bytes from `send`, in rank order,
/// into `recv` (world size x bytes; only read on rank 0, may be NULL
/// elsewhere). Any size (chunked internally).
bool gatherBytes(const void *send, int64_t bytes, void *recv);

/// `bytes` bytes of `buf` from rank `root` to every rank.
bool broadcastBytes(void *buf, int64_t bytes, int root);

/// Processes of this job on this node (1 without MPI, and for a world of 1:
/// an Open MPI 4 singleton polls slowly after MPI_Comm_split_type).
int localRanks(int world);

/// Ends every process of the job with `code` (MPI_Abort). Returns only when
/// there is no other process to stop (single process); the caller then exits.
void abortAll(int code);

} // namespace zrt::host

#endif // ZRT_SRC_HOST_COMM_H
