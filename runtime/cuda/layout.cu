// layout.cu: CUDA backend (in progress).
#include "device_util.cuh"
