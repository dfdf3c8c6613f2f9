// Emulator stand-in for cub::DeviceRadixSort::SortPairs (loss.cu's
// embedding backward): a stable sort of the pairs by bits [begin, end) of
// the key, on the host, queued on the stream (emu::enqueue) like the real
// sort's kernels.
#pragma once
#include "../../cuda_runtime.h"
#include <numeric>
namespace cub {
struct DeviceRadixSort {
  template <class K, class V>
  static cudaError_t SortPairs(void *temp, size_t &tempBytes, const K *keysIn,
                               K *keysOut, const V *valsIn, V *valsOut, int n,
                               int begin, int end,
                               cudaStream_t stream = nullptr) {
    if (!temp) {
      tempBytes = 256;
      return cudaSuccess;
    }
    emu::checkDevice(temp, tempBytes, "SortPairs temporary storage");
    emu::enqueue(stream, [=] {
      const K mask = (end - begin >= (int)(8 * sizeof(K)))
                         ? ~K(0)
                         : ((K(1) << (end - begin)) - 1) << begin;
      std::vector<int> idx(n);
      std::iota(idx.begin(), idx.end(), 0);
      std::stable_sort(idx.begin(), idx.end(), [&](int a, int b) {
        return (keysIn[a] & mask) < (keysIn[b] & mask);
      });
      std::vector<K> k(n);
      std::vector<V> v(n);
      for (int i = 0; i < n; ++i) {
        k[i] = keysIn[idx[i]];
        v[i] = valsIn[idx[i]];
      }
      std::copy(k.begin(), k.end(), keysOut);
      std::copy(v.begin(), v.end(), valsOut);
    });
    return cudaSuccess;
  }
};
} // namespace cub
