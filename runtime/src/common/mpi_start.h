//===- mpi_start.h - MPI start-up shared by the backends ------------------===//
///
/// \file
/// How both backends' zrt_init start MPI (runtime/src/comm/comm.cpp,
/// runtime/cuda/process_group.cpp): MPI_Init_thread at
/// MPI_THREAD_FUNNELED (only the thread that called zrt_init makes MPI
/// calls) unless the program started MPI itself, in which case zrt_finalize
/// leaves it running. Header-only; include after <mpi.h>.
///
//===----------------------------------------------------------------------===//

#ifndef ZRT_COMMON_MPI_START_H
#define ZRT_COMMON_MPI_START_H

namespace zrt {

/// Starts MPI unless it runs already. Sets `*ownsMpi` when this call
/// started it (zrt_finalize must then call MPI_Finalize). Returns
/// MPI_Init_thread's error code, MPI_SUCCESS when MPI runs.
inline int startMpi(int *argc, char ***argv, bool *ownsMpi) {
  int already = 0;
  MPI_Initialized(&already);
  if (already)
    return MPI_SUCCESS;
  int provided = 0;
  int rc = MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
  if (rc == MPI_SUCCESS)
    *ownsMpi = true;
  return rc;
}

} // namespace zrt

#endif // ZRT_COMMON_MPI_START_H
