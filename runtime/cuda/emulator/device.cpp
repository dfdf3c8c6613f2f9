// The emulated CUDA backend library (README.md, "The whole backend"): the
// real host files of runtime/cuda on the stand-in headers of include/, so
// device memory is checked strictly (emu::checkDevice, copies, cudaFree).
#include "include/cuda_runtime.h"

namespace {
const bool strict = (emu::strictDevice = true);
} // namespace
