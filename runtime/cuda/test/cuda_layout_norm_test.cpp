// cuda_layout_norm_test.cpp: CUDA backend tests (in progress).
#include <gtest/gtest.h>
