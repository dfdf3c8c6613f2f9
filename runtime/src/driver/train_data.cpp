//===- train_data.cpp - The driver's data and batches ---------------------===//
//
// Opens --data / --val-data (token files, or an array model's arrays) and
// draws each rank's rows of the global training and validation batches
// (driver.h). Every rank draws the same global batch, so a bad token stops
// all ranks at the same micro-batch with the same message.
//
//===----------------------------------------------------------------------===//

#include "driver/driver.h"

#include "comm/host_comm.h"
#include "driver/data_files.h"
#include "driver/strformat.h"
#include "zrt/zrt.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace zrt::train {

using zrt::format;

std::string Driver::openData() {
  if (arrayModel()) {
    if (!o_.valData.empty())
      return "--val-data takes token files; a model with named inputs "
             "validates on the last --val-fraction of its --data arrays";
    validation_ = o_.valEvery > 0;
    return arrays_.open(o_.data, m_, o_.valFraction, validation_);
  }
  if (std::string err = zrt::expandDataFiles("--data", o_.data, &dataFiles_);
      !err.empty())
    return err;
  if (!o_.valData.empty())
    if (std::string err =
            zrt::expandDataFiles("--val-data", o_.valData, &valFiles_);
        !err.empty())
      return err;
  std::vector<const char *> train, val;
  for (const std::string &f : dataFiles_)
    train.push_back(f.c_str());
  for (const std::string &f : valFiles_)
    val.push_back(f.c_str());
  for (const std::string &f : dataFiles_) {
    auto endsWith = [&](const char *ext) {
      const size_t n = std::strlen(ext);
      return f.size() >= n && f.compare(f.size() - n, n, ext) == 0;
    };
    if (endsWith(".safetensors") || endsWith(".npy"))
      return format("data file '%s' holds arrays, which feed models with "
                    "named inputs only; this one takes token ids (a text "
                    "file or llm.c .bin tokens)",
                    f.c_str());
  }
  zrt_clear_error();
  if (zrt_dataset_open_shards(train.data(), static_cast<int>(train.size()),
                              val.data(), static_cast<int>(val.size()),
                              valFiles_.empty() ? o_.valFraction : 0.0,
                              &ds_) != ZRT_OK) {
    // The runtime's message names the file: "zrt_dataset_open_shards:
    // 'x.bin' has bad magic ...".
    std::string why = zrt_last_error();
    const std::string prefix = "zrt_dataset_open_shards: ";
    if (why.compare(0, prefix.size(), prefix) == 0)
      why = why.substr(prefix.size());
    return "data file " + why;
  }
  byteLevel_ = zrt_dataset_is_text(ds_) == 1;
  dataVocab_ = zrt_dataset_vocab_size(ds_);
  // Every window drawn checks its ids against the model's vocabulary.
  zrt_dataset_set_vocab_limit(ds_, m_->vocab);
  const std::string what =
      dataFiles_.size() == 1 ? "'" + dataFiles_[0] + "'"
                             : format("--data (%zu files)", dataFiles_.size());
  const int64_t T = m_->seq;
  const int64_t nTrain = zrt_dataset_num_tokens(ds_, ZRT_SPLIT_TRAIN);
  const int64_t nVal = zrt_dataset_num_tokens(ds_, ZRT_SPLIT_VAL);
  if (nTrain < T + 1)
    return format("the training split of %s has %lld tokens, but the model "
                  "was compiled for sequence length %lld and one sequence "
                  "needs seq + 1 = %lld tokens (more data%s)",
                  what.c_str(), (long long)nTrain, (long long)T,
                  (long long)(T + 1),
                  valFiles_.empty() ? ", or a smaller --val-fraction" : "");
  if (byteLevel_ && dataVocab_ > m_->vocab)
    return format("data file %s needs a vocabulary of %lld tokens (text is "
                  "read as bytes 0..255), but the model was compiled for "
                  "vocab %lld",
                  what.c_str(), (long long)dataVocab_, (long long)m_->vocab);
  validation_ = o_.valEvery > 0;
  if (validation_ && nVal < T + 1) {
    if (!valFiles_.empty())
      return format("--val-data has %lld tokens, fewer than seq + 1 = %lld; "
                    "use more validation data, or --val-every 0",
                    (long long)nVal, (long long)(T + 1));
    return format("the validation split of %s has %lld tokens (last %g of "
                  "the data), fewer than seq + 1 = %lld; use a larger "
                  "--val-fraction, more data, --val-data, or --val-every 0",
                  what.c_str(), (long long)nVal, o_.valFraction,
                  (long long)(T + 1));
  }
  return "";
}

std::vector<zrt::NamedPath> Driver::dataInputs() const {
  std::vector<zrt::NamedPath> in;
  if (dataFiles_.empty()) // an array model's file or directory
    in.push_back({"--data", o_.data});
  for (const std::string &f : dataFiles_)
    in.push_back({"--data", f});
  for (const std::string &f : valFiles_)
    in.push_back({"--val-data", f});
  in.push_back({"--import", o_.importPath});
  return in;
}

std::string Driver::dataError(const char *what) const {
  // zrt_last_error(): "'x.bin': token id 300 at token 7 of the file (byte
  // offset 1038) is outside the vocabulary of 256".
  return format("data file %s (the model's); %s stopped", zrt_last_error(),
                what);
}

std::string Driver::fetchBatch(int split, int64_t index, int shuffle) {
  if (arrayModel()) { // validation batches only (fetchTrainBatch trains)
    arrays_.fetchVal(index, globalBatch_, dataRank_);
    return "";
  }
  const size_t rows = static_cast<size_t>(m_->batch * m_->seq);
  globalIds_.resize(rows * static_cast<size_t>(dataWorld_));
  globalTargets_.resize(globalIds_.size());
  zrt_clear_error();
  if (int st = zrt_dataset_batch(ds_, split, globalBatch_, m_->seq, o_.seed,
                                 index, shuffle, 0, 1, globalIds_.data(),
                                 globalTargets_.data())) {
    if (st == ZRT_ERR_OUT_OF_RANGE)
      return dataError(split == ZRT_SPLIT_VAL ? "validation" : "training");
    internalFailure("zrt_dataset_batch: " + describe(st));
  }
  const size_t off = rows * static_cast<size_t>(dataRank_);
  std::copy_n(globalIds_.begin() + off, rows, ids_.begin());
  std::copy_n(globalTargets_.begin() + off, rows, targets_.begin());
  return "";
}

std::string Driver::fetchTrainBatch() {
  if (arrayModel()) {
    arrays_.fetchTrain(o_.seed, streamBatch_,
                       samplePos_ + static_cast<int64_t>(dataRank_) * m_->batch);
    samplePos_ += globalBatch_;
    return "";
  }
  const size_t rows = static_cast<size_t>(m_->batch * m_->seq);
  globalIds_.resize(rows * static_cast<size_t>(dataWorld_));
  globalTargets_.resize(globalIds_.size());
  zrt_clear_error();
  if (int st = zrt_dataset_sequences(ds_, ZRT_SPLIT_TRAIN, m_->seq, o_.seed,
                                     streamBatch_, samplePos_, globalBatch_,
                                     globalIds_.data(),
                                     globalTargets_.data())) {
    if (st == ZRT_ERR_OUT_OF_RANGE)
      return dataError("training");
    internalFailure("zrt_dataset_sequences: " + describe(st));
  }
  const size_t off = rows * static_cast<size_t>(dataRank_);
  std::copy_n(globalIds_.begin() + off, rows, ids_.begin());
  std::copy_n(globalTargets_.begin() + off, rows, targets_.begin());
  samplePos_ += globalBatch_;
  return "";
}

std::string Driver::validate(double *mean) {
  double sum = 0.0;
  for (int64_t i = 0; i < o_.valBatches; ++i) {
    if (std::string err = fetchBatch(ZRT_SPLIT_VAL, i, /*shuffle=*/0);
        !err.empty())
      return err;
    float loss = 0.0f;
    zrt_clear_error();
    if (int st = runStep(/*backward=*/false, &loss))
      internalFailure("forward (validation): " + describe(st));
    sum += loss;
  }
  *mean = allMean(sum / static_cast<double>(o_.valBatches));
  return "";
}

} // namespace zrt::train
