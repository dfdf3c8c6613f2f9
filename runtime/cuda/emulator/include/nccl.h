// Emulator stand-in for <nccl.h> (README.md, "The whole backend"): the
// subset of the NCCL 2 API the CUDA backend calls (comm.cpp), with the real
// header's types and values, implemented over MPI by ../nccl.cpp. Every
// collective is queued on its CUDA stream (emu::enqueue, as an `early`
// operation) and, when the stream runs it, computes with MPI what NCCL
// defines: https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/
// (usage/collectives.html; api/colls.html).
#pragma once
#include "cuda_runtime.h"

#include <cstddef>

/// The NCCL version whose API this stand-in provides (ncclCommSplit: 2.18).
#define NCCL_MAJOR 2
#define NCCL_MINOR 18
#define NCCL_PATCH 3
#define NCCL_VERSION(X, Y, Z)                                                  \
  (((X) <= 2 && (Y) <= 8) ? (X) * 1000 + (Y) * 100 + (Z)                      \
                          : (X) * 10000 + (Y) * 100 + (Z))
#define NCCL_VERSION_CODE NCCL_VERSION(NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH)

#define NCCL_UNIQUE_ID_BYTES 128
/// Identifies a communicator across processes: rank 0 makes it, every rank
/// passes the same bytes to ncclCommInitRank.
typedef struct {
  char internal[NCCL_UNIQUE_ID_BYTES];
} ncclUniqueId;
typedef enum {
  ncclSuccess = 0,
  ncclUnhandledCudaError = 1,
  ncclSystemError = 2,
  ncclInternalError = 3,
  ncclInvalidArgument = 4,
  ncclInvalidUsage = 5,
  ncclRemoteError = 6,
  ncclInProgress = 7,
  ncclNumResults = 8
} ncclResult_t;
typedef enum {
  ncclSum = 0,
  ncclProd = 1,
  ncclMax = 2,
  ncclMin = 3,
  ncclAvg = 4,
  ncclNumOps = 5
} ncclRedOp_t;
typedef enum {
  ncclInt8 = 0,
  ncclUint8 = 1,
  ncclInt32 = 2,
  ncclUint32 = 3,
  ncclInt64 = 4,
  ncclUint64 = 5,
  ncclFloat16 = 6,
  ncclFloat32 = 7,
  ncclFloat = 7,
  ncclFloat64 = 8,
  ncclBfloat16 = 9,
  ncclNumTypes = 12
} ncclDataType_t;
typedef struct ncclComm *ncclComm_t;

/// Random bytes (rank 0 calls it and broadcasts them).
ncclResult_t ncclGetUniqueId(ncclUniqueId *uniqueId);
/// Collective over all `nranks` processes: the emulated communicator spans
/// MPI_COMM_WORLD, so nranks and rank must be MPI's, and every rank must
/// pass rank 0's id (ncclInvalidUsage otherwise: a missing or wrong id
/// broadcast in the caller).
ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id,
                              int rank);
/// ncclCommSplit's `color` of a rank that joins no new communicator.
#define NCCL_SPLIT_NOCOLOR -1
/// Communicator options (the leading fields of NCCL's ncclConfig_t); the
/// emulation takes none, so pass NULL.
typedef struct ncclConfig_v21700 {
  size_t size;
  unsigned int magic;
  unsigned int version;
  int blocking;
  int cgaClusterSize;
  int minCTAs;
  int maxCTAs;
  const char *netName;
  int splitShare;
} ncclConfig_t;
/// Collective over all ranks of `comm`: the ranks with the same `color`
/// form one new communicator, ranked by `key` (ties by their rank in
/// `comm`); a rank with NCCL_SPLIT_NOCOLOR gets *newcomm = NULL. Completes
/// every stream's queued work first (the split is an MPI_Comm_split of
/// the parent's communicator, which must not overtake queued collectives).
/// `config` must be NULL (ncclInvalidArgument otherwise).
ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key,
                           ncclComm_t *newcomm, ncclConfig_t *config);
/// Completes the communicator's queued work, then frees it.
ncclResult_t ncclCommDestroy(ncclComm_t comm);
const char *ncclGetErrorString(ncclResult_t result);

/// recvbuff[r * sendcount + i] = sendbuff of rank r [i]; in place when
/// sendbuff == recvbuff + rank * sendcount. f32 and bf16 only.
ncclResult_t ncclAllGather(const void *sendbuff, void *recvbuff,
                           size_t sendcount, ncclDataType_t datatype,
                           ncclComm_t comm, cudaStream_t stream);
/// recvbuff[i] = op over ranks of sendbuff[rank * recvcount + i] (sendbuff
/// holds nranks * recvcount elements); in place when recvbuff == sendbuff
/// + rank * recvcount.
ncclResult_t ncclReduceScatter(const void *sendbuff, void *recvbuff,
                               size_t recvcount, ncclDataType_t datatype,
                               ncclRedOp_t op, ncclComm_t comm,
                               cudaStream_t stream);
/// recvbuff[i] = op over ranks of sendbuff[i]; in place allowed.
ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count,
                           ncclDataType_t datatype, ncclRedOp_t op,
                           ncclComm_t comm, cudaStream_t stream);
/// recvbuff = root's sendbuff, on every rank; in place allowed.
ncclResult_t ncclBroadcast(const void *sendbuff, void *recvbuff, size_t count,
                           ncclDataType_t datatype, int root, ncclComm_t comm,
                           cudaStream_t stream);
