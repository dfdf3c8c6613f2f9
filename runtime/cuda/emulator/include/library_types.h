// Emulator stand-in for the CUDA toolkit's <library_types.h> (README.md):
// the data type tags of the CUDA math libraries, with the values of the
// real header (CUDA 13 toolkit, library_types.h), so that numbers logged or
// stored by the backend mean the same thing on both sides.
#pragma once

/// Element type of a matrix or scalar handed to cuBLAS / cuBLASLt as
/// `const void *`. Values as in the real library_types.h.
typedef enum cudaDataType_t {
  CUDA_R_16F = 2,   ///< real, IEEE half (2 bytes)
  CUDA_C_16F = 6,   ///< complex, pair of halves
  CUDA_R_16BF = 14, ///< real, bfloat16 (2 bytes; the upper half of an f32)
  CUDA_C_16BF = 15, ///< complex, pair of bfloat16
  CUDA_R_32F = 0,   ///< real, IEEE single (4 bytes)
  CUDA_C_32F = 4,   ///< complex, pair of singles
  CUDA_R_64F = 1,   ///< real, IEEE double (8 bytes)
  CUDA_C_64F = 5,   ///< complex, pair of doubles
  CUDA_R_4I = 16,
  CUDA_C_4I = 17,
  CUDA_R_4U = 18,
  CUDA_C_4U = 19,
  CUDA_R_8I = 3,
  CUDA_C_8I = 7,
  CUDA_R_8U = 8,
  CUDA_C_8U = 9,
  CUDA_R_16I = 20,
  CUDA_C_16I = 21,
  CUDA_R_16U = 22,
  CUDA_C_16U = 23,
  CUDA_R_32I = 10,
  CUDA_C_32I = 11,
  CUDA_R_32U = 12,
  CUDA_C_32U = 13,
  CUDA_R_64I = 24,
  CUDA_C_64I = 25,
  CUDA_R_64U = 26,
  CUDA_C_64U = 27,
  CUDA_R_8F_E4M3 = 28,
  CUDA_R_8F_UE4M3 = CUDA_R_8F_E4M3,
  CUDA_R_8F_E5M2 = 29,
  CUDA_R_8F_UE8M0 = 30,
  CUDA_R_6F_E2M3 = 31,
  CUDA_R_6F_E3M2 = 32,
  CUDA_R_4F_E2M1 = 33,
} cudaDataType;

/// Which part of a library's version cublasGetProperty and friends report.
typedef enum libraryPropertyType_t {
  MAJOR_VERSION,
  MINOR_VERSION,
  PATCH_LEVEL
} libraryPropertyType;
