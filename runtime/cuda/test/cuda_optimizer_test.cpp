// cuda_optimizer_test.cpp: CUDA backend tests (in progress).
#include <gtest/gtest.h>
