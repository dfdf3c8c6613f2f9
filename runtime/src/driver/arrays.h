//===- arrays.h - Array datasets of the training driver --------*- C++ -*-===//
///
/// \file
/// The data of array models (zrt_model_desc::num_inputs > 0: a forward that
/// takes named tensors, not token ids): `--data` is a safetensors file or a
/// directory of NAME.npy files holding one array per input of the model,
/// named after it, whose first dimension counts samples and whose other
/// dimensions are one sample's (the input's shape without its batch
/// dimension). Files are memory-mapped read-only: a micro-batch copies its
/// rows, nothing else is read.
///
/// Splits: the last floor(N * val_fraction) samples are validation, the
/// rest training (N = the arrays' common sample count).
///
/// Sampling: sample s of the training stream (s = 0, 1, ...) is row
///   Philox(seed; s / stream_batch, s mod stream_batch, "ARRY") mod N_train
/// (with replacement, as the token windows of zrt_dataset_sequences), so
/// that every rank draws the same global batch from the seed and takes its
/// slice [rank*B, (rank+1)*B) of it, exactly as for tokens. Validation
/// batch i is samples (i*G + g) mod N_val of the validation split, g in
/// [0, G) the global row. Internal to the runtime (the driver).
///
//===----------------------------------------------------------------------===//

#ifndef ZRT_SRC_ARRAYS_H
#define ZRT_SRC_ARRAYS_H

#include "zrt/model.h"

#include <cstdint>
#include <string>
#include <vector>

namespace zrt {

class ArrayData {
public:
  ArrayData() = default;
  ArrayData(const ArrayData &) = delete;
  ArrayData &operator=(const ArrayData &) = delete;
  ~ArrayData() { close(); }

  /// Opens `path` for `model`'s inputs (model->num_inputs > 0) with
  /// micro-batch B = model->batch. "" or the one-line reason: an unreadable
  /// path, a file that is neither safetensors nor a directory of .npy
  /// files (e.g. a text file), a missing array, a dtype other than the
  /// input's (an I64 array feeds an I32 input when every value fits; an
  /// F32 array a BF16 / F16 input, rounded to nearest even), a
  /// shape that is not [N, <input shape without B>], arrays with different
  /// sample counts, fewer than one training sample, and (with `validation`)
  /// an empty validation split.
  std::string open(const std::string &path, const zrt_model_desc *model,
                   double valFraction, bool validation);
  void close();

  /// Samples of the training (split 0) or validation (1) split.
  int64_t samples(int split) const { return split == 0 ? nTrain_ : nVal_; }
  /// "x f32 [N, 8], target i32 [N]" for the banner.
  std::string describe() const;

  /// Fills the micro-batch with samples [first, first + count) of the
  /// training stream (count = B).
  void fetchTrain(uint64_t seed, int64_t streamBatch, int64_t first);
  /// Fills the micro-batch with this rank's rows of validation batch
  /// `index` of global batch `globalBatch`.
  void fetchVal(int64_t index, int64_t globalBatch, int rank);

  /// The host micro-batch of each input, in the model's input order
  /// (zrt_model_desc::forward_inputs).
  const void *const *inputs() const { return pointers_.data(); }
  /// The file rows of the last fetch (B of them).
  const std::vector<int64_t> &rows() const { return rows_; }

private:
  struct Array {
    const uint8_t *data = nullptr; ///< Row 0 of the array in the mapping.
    int fileDtype = 0;             ///< The file's zrt_dtype.
    int64_t rowBytes = 0;          ///< Bytes of one sample in the file.
    bool narrow = false;           ///< I64 file values into an i32 input.
    int roundTo = -1; ///< ZRT_BF16 / ZRT_F16: f32 file values rounded to it.
    std::vector<uint8_t> batch;    ///< B samples in the input's dtype.
  };
  struct Mapping {
    void *addr = nullptr;
    size_t bytes = 0;
  };
  void copyRow(int64_t row, int64_t j);

  const zrt_model_desc *m_ = nullptr;
  std::vector<Mapping> maps_;
  std::vector<Array> arrays_;
  std::vector<const void *> pointers_;
  std::vector<int64_t> rows_;
  std::string summary_;
  int64_t nTrain_ = 0, nVal_ = 0;
};

} // namespace zrt

#endif // ZRT_SRC_ARRAYS_H
