/*===- mkl_vendor_shim.c - MKL's AVX-512 kernels for the peers on AMD -----===//
 *
 * PyTorch's PyPI wheels do their f32 GEMMs in Intel MKL (2024.2 in torch
 * 2.15), which dispatches on the CPU vendor: on an AMD CPU with AVX-512 it
 * runs its AVX2 kernels (one-thread sgemm 1024 x 3072 x 768: 97 GFLOP/s on
 * the Zen 5 VM; 245 with this shim). MKL asks mkl_serv_intel_cpu_true()
 * whether the CPU is Intel's; preloaded (LD_PRELOAD), this definition
 * answers yes, and MKL picks the kernels the CPU supports. bench/cpu-peers
 * preloads it into the PyTorch peers on a non-Intel CPU so that Zero is
 * measured against the peers at their best, not against a vendor check
 * (BENCH_MKL_SHIM=0 measures them as shipped).
 *
 *===----------------------------------------------------------------------===*/
int mkl_serv_intel_cpu_true(void) { return 1; }
