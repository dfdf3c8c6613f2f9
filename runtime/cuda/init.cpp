// init.cpp: CUDA backend (in progress).
#include "zrt_cuda.h"
