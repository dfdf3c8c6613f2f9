# OpenBLAS's OpenMP build, preferred by the CPU runtime and the programs
# zero-compile links (Debian: libopenblas-openmp-dev, installed beside the
# default pthread build under <libdir>/openblas-openmp). Its GEMMs run on
# the kernels' OpenMP threads — one pool: a GEMM called inside a parallel
# region runs on its calling thread, one outside uses the same team —
# where the pthread build keeps a second pool whose threads fight the
# OpenMP team for the cores (runtime/src/blas.h, zrt::blasSharesOmpPool).
#
# Sets, when found (and ZRT_OPENBLAS_OPENMP is ON):
#   ZRT_OPENBLAS_OPENMP_LIBRARY      the full path of libopenblas.so
#   ZRT_OPENBLAS_OPENMP_INCLUDE_DIR  the folder of its cblas.h
#   ZRT_OPENBLAS_OPENMP_LINK_ARGS    the library and an rpath to its folder
#                                    (its soname, libopenblas.so.0, is the
#                                    system default's too: the rpath makes
#                                    the loader pick this one)
option(ZRT_OPENBLAS_OPENMP "Link OpenBLAS's OpenMP build when it is installed" ON)
set(ZRT_OPENBLAS_OPENMP_LINK_ARGS "")
if(ZRT_OPENBLAS_OPENMP AND NOT ZRT_OPENBLAS_OPENMP_LIBRARY)
  find_library(ZRT_OPENBLAS_OPENMP_LIBRARY NAMES openblas
    PATHS /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/openblas-openmp
          /usr/lib64/openblas-openmp /usr/lib/openblas-openmp
    NO_DEFAULT_PATH)
  find_path(ZRT_OPENBLAS_OPENMP_INCLUDE_DIR cblas.h
    PATHS /usr/include/${CMAKE_LIBRARY_ARCHITECTURE}/openblas-openmp
          /usr/include/openblas-openmp
    NO_DEFAULT_PATH)
endif()
if(ZRT_OPENBLAS_OPENMP AND ZRT_OPENBLAS_OPENMP_LIBRARY AND
   ZRT_OPENBLAS_OPENMP_INCLUDE_DIR)
  get_filename_component(_zrt_openblas_omp_dir
    "${ZRT_OPENBLAS_OPENMP_LIBRARY}" DIRECTORY)
  set(ZRT_OPENBLAS_OPENMP_LINK_ARGS
    "${ZRT_OPENBLAS_OPENMP_LIBRARY}" "-Wl,-rpath,${_zrt_openblas_omp_dir}")
endif()
