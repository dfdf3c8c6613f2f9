// cuda_loss_attention_test.cpp: CUDA backend tests (in progress).
#include <gtest/gtest.h>
