# oneDNN, the CPU runtime's GEMM library where it measured faster than
# OpenBLAS (docs/benchmarks.md, "GEMMs against the peak"; Debian:
# libdnnl-dev, in scripts/setup-deps). Used only when its CPU threading is
# OpenMP, the runtime's one thread pool (Debian's build links libgomp); a
# TBB or threadpool build would start a second pool beside the OpenMP team.
#
# Found by library and header, not by oneDNN's dnnl-config.cmake: Debian's
# is built with the OpenCL GPU runtime, and its config demands the OpenCL
# development files, which the CPU GEMMs do not use.
#
# Sets, when found (and ZRT_ONEDNN is ON):
#   ZRT_ONEDNN_FOUND    ON; the imported target zrt_onednn links it
#   ZRT_ONEDNN_LIBRARY  the full path of libdnnl.so
# The runtime then compiles with ZRT_HAVE_ONEDNN=1 (runtime/src/cpu/gemm.h).
option(ZRT_ONEDNN "Use oneDNN's GEMMs in the CPU runtime when installed" ON)
set(ZRT_ONEDNN_FOUND OFF)
if(ZRT_ONEDNN)
  find_library(ZRT_ONEDNN_LIBRARY NAMES dnnl)
  find_path(ZRT_ONEDNN_INCLUDE_DIR oneapi/dnnl/dnnl.hpp)
endif()
if(ZRT_ONEDNN AND ZRT_ONEDNN_LIBRARY AND ZRT_ONEDNN_INCLUDE_DIR)
  file(STRINGS "${ZRT_ONEDNN_INCLUDE_DIR}/oneapi/dnnl/dnnl_config.h"
       _zrt_dnnl_threading REGEX "^#define DNNL_CPU_THREADING_RUNTIME ")
  file(STRINGS "${ZRT_ONEDNN_INCLUDE_DIR}/oneapi/dnnl/dnnl_version.h"
       _zrt_dnnl_major REGEX "^#define DNNL_VERSION_MAJOR ")
  string(REGEX REPLACE ".* " "" _zrt_dnnl_major "${_zrt_dnnl_major}")
  if(NOT _zrt_dnnl_threading MATCHES "DNNL_RUNTIME_OMP$")
    message(STATUS "oneDNN ${ZRT_ONEDNN_LIBRARY}: CPU threading is not "
                   "OpenMP (${_zrt_dnnl_threading}): not used")
  elseif(_zrt_dnnl_major LESS 2 OR _zrt_dnnl_major GREATER 2)
    message(STATUS "oneDNN ${ZRT_ONEDNN_LIBRARY}: version ${_zrt_dnnl_major}"
                   ".x, the runtime is written against 2.x: not used")
  else()
    set(ZRT_ONEDNN_FOUND ON)
    if(NOT TARGET zrt_onednn)
      add_library(zrt_onednn INTERFACE)
      target_link_libraries(zrt_onednn INTERFACE ${ZRT_ONEDNN_LIBRARY})
      target_include_directories(zrt_onednn INTERFACE ${ZRT_ONEDNN_INCLUDE_DIR})
    endif()
  endif()
endif()
