//===- sample.cpp - Sampling and --dump-batches ---------------------------===//
//
// After training, the driver samples --sample-tokens tokens from a prompt
// of the data (every rank runs last_logits; rank 0's token is broadcast)
// and rank 0 prints them and appends them to --sample-out; during training,
// --dump-batches records every global micro-batch (driver.h).
//
//===----------------------------------------------------------------------===//

#include "driver/driver.h"

#include "comm/host_comm.h"
#include "common/rng_math.h"
#include "driver/strformat.h"
#include "zrt/zrt.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace zrt::train {

using zrt::format;

namespace {

constexpr uint64_t kSampleStream = 0x53414d504c45ULL; // "SAMPLE"

/// Bytes as terminal-safe text: valid UTF-8 sequences, newlines, tabs and
/// printable ASCII as they are; any other byte as \xNN.
std::string printableText(const std::string &bytes) {
  std::string text;
  const size_t n = bytes.size();
  for (size_t i = 0; i < n;) {
    const unsigned char c = static_cast<unsigned char>(bytes[i]);
    size_t len = c < 0x80                          ? 1
                 : (c & 0xE0) == 0xC0 && c >= 0xC2 ? 2
                 : (c & 0xF0) == 0xE0              ? 3
                 : (c & 0xF8) == 0xF0 && c <= 0xF4 ? 4
                                                   : 0;
    bool ok = len > 0 && i + len <= n;
    for (size_t k = 1; ok && k < len; ++k)
      ok = (static_cast<unsigned char>(bytes[i + k]) & 0xC0) == 0x80;
    if (ok && len == 1)
      ok = c == '\n' || c == '\t' || (c >= 0x20 && c != 0x7f);
    if (ok) {
      text.append(bytes, i, len);
      i += len;
    } else {
      text += format("\\x%02x", c);
      ++i;
    }
  }
  return text;
}

} // namespace

std::string Driver::openDump() {
  if (o_.steps > INT32_MAX || globalBatch_ * m_->seq > INT32_MAX ||
      (arrayModel() && arrays_.samples(0) + arrays_.samples(1) > INT32_MAX))
    return "--dump-batches: the step, micro-batch and batch fields are "
           "int32, and this run does not fit them";
  if (rank_ != 0)
    return "";
  dump_ = std::fopen(o_.dumpBatches.c_str(), "wb");
  if (!dump_)
    return format("cannot write --dump-batches file '%s': %s",
                  o_.dumpBatches.c_str(), std::strerror(errno));
  return "";
}

void Driver::dumpBatch(int64_t step, int64_t micro) {
  if (arrayModel())
    return dumpRows(step, micro);
  // The driver's batch slicing gives rank r rows [r*B, (r+1)*B) of the
  // global batch, so a gather in rank order rebuilds it.
  const int64_t n = m_->batch * m_->seq, global = n * world_;
  if (rank_ == 0) {
    dumpRecord_.resize(static_cast<size_t>(4 + 2 * global));
    dumpRecord_[0] = static_cast<int32_t>(step);
    dumpRecord_[1] = static_cast<int32_t>(micro);
    dumpRecord_[2] = static_cast<int32_t>(globalBatch_);
    dumpRecord_[3] = static_cast<int32_t>(m_->seq);
  }
  int32_t *rec = rank_ == 0 ? dumpRecord_.data() : nullptr;
  const int64_t bytes = static_cast<int64_t>(n) * 4;
  if (!zrt::host::gatherBytes(ids_.data(), bytes, rec ? rec + 4 : nullptr) ||
      !zrt::host::gatherBytes(targets_.data(), bytes,
                              rec ? rec + 4 + global : nullptr))
    internalFailure("the gather of a batch for --dump-batches failed");
  writeDumpRecord();
}

void Driver::writeDumpRecord() {
  if (rank_ != 0 || !dumpErr_.empty())
    return;
  // Little-endian int32 (the host order of every target we build for).
  if (std::fwrite(dumpRecord_.data(), sizeof(int32_t), dumpRecord_.size(),
                  dump_) != dumpRecord_.size())
    dumpErr_ = format("cannot write --dump-batches file '%s': %s",
                      o_.dumpBatches.c_str(), std::strerror(errno));
}

void Driver::dumpRows(int64_t step, int64_t micro) {
  // An array model's record: step, micro, G, 0, then the G sample rows
  // (indices into the arrays) of the global batch in rank order.
  const int64_t B = m_->batch, global = B * world_;
  std::vector<int32_t> mine(static_cast<size_t>(B));
  for (int64_t j = 0; j < B; ++j)
    mine[static_cast<size_t>(j)] =
        static_cast<int32_t>(arrays_.rows()[static_cast<size_t>(j)]);
  if (rank_ == 0) {
    dumpRecord_.resize(static_cast<size_t>(4 + global));
    dumpRecord_[0] = static_cast<int32_t>(step);
    dumpRecord_[1] = static_cast<int32_t>(micro);
    dumpRecord_[2] = static_cast<int32_t>(globalBatch_);
    dumpRecord_[3] = 0;
  }
  int32_t *rec = rank_ == 0 ? dumpRecord_.data() : nullptr;
  if (!zrt::host::gatherBytes(mine.data(), B * 4, rec ? rec + 4 : nullptr))
    internalFailure("the gather of a batch for --dump-batches failed");
  writeDumpRecord();
}

std::string Driver::closeDump() {
  if (dump_) {
    if (std::fclose(dump_) != 0 && dumpErr_.empty())
      dumpErr_ = format("cannot write --dump-batches file '%s': %s",
                        o_.dumpBatches.c_str(), std::strerror(errno));
    dump_ = nullptr;
  }
  return dumpErr_;
}

std::string Driver::sample() {
  const int64_t B = m_->batch, T = m_->seq, Vp = m_->padded_vocab;
  // Byte-level data: only the 256 byte tokens are meaningful.
  const int64_t V = byteLevel_ ? std::min<int64_t>(m_->vocab, 256) : m_->vocab;
  // Prompt: the first T tokens of the validation split (train if too short).
  const int split = zrt_dataset_num_tokens(ds_, ZRT_SPLIT_VAL) >= T + 1
                        ? ZRT_SPLIT_VAL
                        : ZRT_SPLIT_TRAIN;
  std::vector<int32_t> ctx(static_cast<size_t>(T)), unused(ctx.size());
  zrt_clear_error();
  if (int st = zrt_dataset_batch(ds_, split, 1, T, 0, 0, 0, 0, 1, ctx.data(),
                                 unused.data())) {
    if (st == ZRT_ERR_OUT_OF_RANGE)
      return dataError("sampling");
    internalFailure("zrt_dataset_batch: " + describe(st));
  }
  const std::vector<int32_t> prompt = ctx;
  std::vector<int32_t> ids(static_cast<size_t>(B * T));
  std::vector<float> logits(static_cast<size_t>(B * Vp));
  std::vector<double> p(static_cast<size_t>(V));
  std::vector<int32_t> out;
  for (int64_t i = 0; i < o_.sampleTokens; ++i) {
    for (int64_t b = 0; b < B; ++b) // every row holds the same context
      std::copy(ctx.begin(), ctx.end(), ids.begin() + b * T);
    // Every rank calls last_logits (it may run collectives).
    zrt_clear_error();
    if (int st = m_->last_logits(ids.data(), logits.data()))
      internalFailure("last_logits: " + describe(st));
    int32_t tok = 0;
    if (o_.temperature == 0.0) {
      for (int64_t j = 1; j < V; ++j)
        if (logits[j] > logits[tok])
          tok = static_cast<int32_t>(j);
    } else {
      double mx = -INFINITY;
      for (int64_t j = 0; j < V; ++j)
        mx = std::max(mx, static_cast<double>(logits[j]));
      double total = 0.0;
      for (int64_t j = 0; j < V; ++j) {
        p[j] = std::exp((logits[j] - mx) / o_.temperature);
        total += p[j];
      }
      // Element i of the uniform stream (zrt_init_uniform's values,
      // computed on the host: zrt_init_uniform writes arena memory).
      const float u = zrt::uniformElement(o_.seed ^ kSampleStream,
                                          static_cast<uint64_t>(i), 0.0f, 1.0f);
      double target = static_cast<double>(u) * total, acc = 0.0;
      tok = static_cast<int32_t>(V - 1);
      for (int64_t j = 0; j < V; ++j) {
        acc += p[j];
        if (acc > target) {
          tok = static_cast<int32_t>(j);
          break;
        }
      }
    }
    // Rank 0's choice (identical anyway) keeps the contexts bit-identical.
    if (!zrt::host::broadcastBytes(&tok, sizeof tok, 0))
      internalFailure("the broadcast of a sampled token failed");
    out.push_back(tok);
    std::rotate(ctx.begin(), ctx.begin() + 1, ctx.end());
    ctx.back() = tok;
  }
  if (rank_ != 0)
    return "";
  std::string text;
  if (byteLevel_) {
    std::string bytes(out.begin(), out.end());
    text = printableText(bytes);
  } else {
    for (size_t i = 0; i < out.size(); ++i)
      text += format(i ? " %d" : "%d", out[i]);
  }
  say(format("sample (%lld tokens, temperature %g, prompt: first %lld tokens "
             "of the %s split):",
             (long long)o_.sampleTokens, o_.temperature, (long long)T,
             split == ZRT_SPLIT_VAL ? "validation" : "training"));
  say(text);
  say("--- end of sample ---");
  if (sampleOut_)
    sampleErr_ = writeSample(prompt, out, split);
  return "";
}

std::string Driver::writeSample(const std::vector<int32_t> &prompt,
                                const std::vector<int32_t> &ids, int split) {
  auto array = [](Json &j, const std::vector<int32_t> &v) {
    j.open('[');
    for (int32_t t : v)
      j.integer(t);
    j.close(']');
  };
  Json j;
  j.key("type").str("sample").key("step").integer(o_.steps);
  j.key("tokens").integer(static_cast<int64_t>(ids.size()));
  j.key("temperature").num(o_.temperature);
  j.key("data").str(byteLevel_ ? "bytes" : "tokens");
  j.key("prompt_split").str(split == ZRT_SPLIT_VAL ? "val" : "train");
  j.key("prompt");
  array(j, prompt);
  j.key("ids");
  array(j, ids);
  if (std::fputs(j.line().c_str(), sampleOut_) < 0 ||
      std::fflush(sampleOut_) != 0)
    return format("cannot write --sample-out file '%s': %s",
                  o_.sampleOut.c_str(), std::strerror(errno));
  return "";
}

} // namespace zrt::train
