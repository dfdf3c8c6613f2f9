//===- data.cpp - Token datasets and the deterministic batch sampler -------===//

#include "internal.h"

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <new>
#include <string>
#include <vector>

struct zrt_dataset_s {
  std::vector<int32_t> tokens; // all tokens; train = [0, nTrain), val = rest
  int64_t nTrain = 0;
  int64_t vocab = 0;
};

namespace {

constexpr uint32_t kBatchStream = 0x42415443u; // "BATC"

/// Start of the shuffled window of row `b` of batch `index` (the Philox
/// draw of zrt_dataset_batch with shuffle != 0).
int64_t shuffledStart(uint64_t seed, int split, int64_t index, int64_t b,
                      int64_t L, int64_t T) {
  const uint64_t s = static_cast<uint64_t>(index);
  zrt::Philox4x32 r = zrt::philox4x32(
      static_cast<uint32_t>(s), static_cast<uint32_t>(s >> 32),
      static_cast<uint32_t>(b), kBatchStream ^ static_cast<uint32_t>(split),
      seed);
  const uint64_t bits = (static_cast<uint64_t>(r.v[0]) << 32) | r.v[1];
  return static_cast<int64_t>(bits % static_cast<uint64_t>(L - T));
}

/// The tokens of `split` (*tok, *L of them), or ZRT_ERR_OUT_OF_RANGE when
/// they hold no window of T + 1 tokens.
int splitTokens(const char *fn, zrt_dataset ds, int split, int64_t T,
                const int32_t **tok, int64_t *L) {
  *L = zrt_dataset_num_tokens(ds, split);
  if (T + 1 > *L)
    return zrt::fail(ZRT_ERR_OUT_OF_RANGE,
                     "%s: sequence length T + 1 = %lld exceeds the %lld tokens "
                     "of the %s split",
                     fn, (long long)(T + 1), (long long)*L,
                     split == ZRT_SPLIT_TRAIN ? "train" : "validation");
  *tok = ds->tokens.data() + (split == ZRT_SPLIT_TRAIN ? 0 : ds->nTrain);
  return ZRT_OK;
}

struct File {
  std::FILE *f = nullptr;
  ~File() {
    if (f)
      std::fclose(f);
  }
};

// Opens `path` and returns its size in *size.
int openFile(const char *fn, const char *path, File &file, int64_t *size) {
  ZRT_REQUIRE(path != nullptr, "%s: path is NULL", fn);
  file.f = std::fopen(path, "rb");
  if (!file.f)
    return zrt::fail(ZRT_ERR_IO, "%s: cannot open '%s': %s", fn, path,
                     std::strerror(errno));
  if (std::fseek(file.f, 0, SEEK_END) != 0)
    return zrt::fail(ZRT_ERR_IO, "%s: cannot seek in '%s'", fn, path);
  long sz = std::ftell(file.f);
  if (sz < 0 || std::fseek(file.f, 0, SEEK_SET) != 0)
    return zrt::fail(ZRT_ERR_IO, "%s: cannot determine the size of '%s'", fn,
                     path);
  *size = sz;
  return ZRT_OK;
}

int checkFraction(const char *fn, double frac, zrt_dataset *out) {
  ZRT_REQUIRE(out != nullptr, "%s: out is NULL", fn);
  *out = nullptr;
  ZRT_REQUIRE(frac >= 0.0 && frac < 1.0,
              "%s: val_fraction = %g must be in [0, 1)", fn, frac);
  return ZRT_OK;
}

void finish(zrt_dataset ds, double frac, zrt_dataset *out) {
  const int64_t L = static_cast<int64_t>(ds->tokens.size());
  const int64_t nVal = static_cast<int64_t>(static_cast<double>(L) * frac);
  ds->nTrain = L - nVal;
  *out = ds;
}

} // namespace

extern "C" {

int zrt_dataset_open_text(const char *path, double val_fraction,
                          zrt_dataset *out) {
  const char *fn = "zrt_dataset_open_text";
  if (int st = checkFraction(fn, val_fraction, out))
    return st;
  File file;
  int64_t size = 0;
  if (int st = openFile(fn, path, file, &size))
    return st;
  if (size == 0)
    return zrt::fail(ZRT_ERR_IO, "%s: '%s' is empty", fn, path);
  std::vector<unsigned char> bytes;
  auto *ds = new (std::nothrow) zrt_dataset_s;
  try {
    if (!ds)
      throw std::bad_alloc();
    bytes.resize(static_cast<size_t>(size));
    ds->tokens.resize(static_cast<size_t>(size));
  } catch (const std::bad_alloc &) {
    delete ds;
    return zrt::fail(ZRT_ERR_OUT_OF_MEMORY, "%s: '%s' does not fit in memory",
                     fn, path);
  }
  if (std::fread(bytes.data(), 1, bytes.size(), file.f) != bytes.size()) {
    delete ds;
    return zrt::fail(ZRT_ERR_IO, "%s: short read from '%s'", fn, path);
  }
  for (size_t i = 0; i < bytes.size(); ++i)
    ds->tokens[i] = bytes[i];
  ds->vocab = 256;
  finish(ds, val_fraction, out);
  return ZRT_OK;
}

int zrt_dataset_open_bin(const char *path, double val_fraction,
                         zrt_dataset *out) {
  const char *fn = "zrt_dataset_open_bin";
  if (int st = checkFraction(fn, val_fraction, out))
    return st;
  File file;
  int64_t size = 0;
  if (int st = openFile(fn, path, file, &size))
    return st;
  if (size == 0)
    return zrt::fail(ZRT_ERR_IO, "%s: '%s' is empty", fn, path);
  constexpr int64_t kHeaderBytes = 256 * sizeof(int32_t);
  if (size < kHeaderBytes)
    return zrt::fail(ZRT_ERR_FORMAT,
                     "%s: '%s' has %lld bytes, shorter than the 1024-byte "
                     "llm.c header",
                     fn, path, (long long)size);
  int32_t header[256];
  if (std::fread(header, sizeof(int32_t), 256, file.f) != 256)
    return zrt::fail(ZRT_ERR_IO, "%s: cannot read the header of '%s'", fn,
                     path);
  if (header[0] != ZRT_LLMC_MAGIC)
    return zrt::fail(ZRT_ERR_FORMAT,
                     "%s: '%s' has bad magic %d (expected %d, an llm.c token "
                     "file)",
                     fn, path, header[0], ZRT_LLMC_MAGIC);
  if (header[1] != 1)
    return zrt::fail(ZRT_ERR_FORMAT,
                     "%s: '%s' has unsupported version %d (expected 1)", fn,
                     path, header[1]);
  const int64_t count = header[2];
  if (count <= 0)
    return zrt::fail(ZRT_ERR_FORMAT, "%s: '%s' declares %lld tokens", fn, path,
                     (long long)count);
  const int64_t available = (size - kHeaderBytes) / 2;
  if (available < count)
    return zrt::fail(ZRT_ERR_FORMAT,
                     "%s: '%s' is truncated: header declares %lld tokens but "
                     "the file holds %lld",
                     fn, path, (long long)count, (long long)available);
  std::vector<uint16_t> raw;
  auto *ds = new (std::nothrow) zrt_dataset_s;
  try {
    if (!ds)
      throw std::bad_alloc();
    raw.resize(static_cast<size_t>(count));
    ds->tokens.resize(static_cast<size_t>(count));
  } catch (const std::bad_alloc &) {
    delete ds;
    return zrt::fail(ZRT_ERR_OUT_OF_MEMORY, "%s: '%s' does not fit in memory",
                     fn, path);
  }
  if (std::fread(raw.data(), sizeof(uint16_t), raw.size(), file.f) !=
      raw.size()) {
    delete ds;
    return zrt::fail(ZRT_ERR_IO, "%s: short read from '%s'", fn, path);
  }
  int32_t mx = 0;
  for (size_t i = 0; i < raw.size(); ++i) {
    ds->tokens[i] = raw[i];
    mx = raw[i] > mx ? raw[i] : mx;
  }
  ds->vocab = static_cast<int64_t>(mx) + 1;
  finish(ds, val_fraction, out);
  return ZRT_OK;
}

int zrt_dataset_open(const char *path, double val_fraction, zrt_dataset *out) {
  ZRT_REQUIRE(path != nullptr, "zrt_dataset_open: path is NULL");
  const std::string p(path);
  if (p.size() >= 4 && p.compare(p.size() - 4, 4, ".bin") == 0)
    return zrt_dataset_open_bin(path, val_fraction, out);
  return zrt_dataset_open_text(path, val_fraction, out);
}

void zrt_dataset_close(zrt_dataset ds) { delete ds; }

int64_t zrt_dataset_num_tokens(zrt_dataset ds, int split) {
  if (!ds)
    return -1;
  if (split == ZRT_SPLIT_TRAIN)
    return ds->nTrain;
  if (split == ZRT_SPLIT_VAL)
    return static_cast<int64_t>(ds->tokens.size()) - ds->nTrain;
  return -1;
}

int64_t zrt_dataset_vocab_size(zrt_dataset ds) { return ds ? ds->vocab : -1; }

int zrt_dataset_batch(zrt_dataset ds, int split, int64_t B, int64_t T,
                      uint64_t seed, int64_t step, int shuffle, int rank,
                      int world_size, int32_t *inputs, int32_t *targets) {
  const char *fn = "zrt_dataset_batch";
  ZRT_REQUIRE(ds != nullptr, "%s: dataset is NULL", fn);
  ZRT_REQUIRE(split == ZRT_SPLIT_TRAIN || split == ZRT_SPLIT_VAL,
              "%s: unknown split %d", fn, split);
  ZRT_REQUIRE(B >= 1 && T >= 1, "%s: need B >= 1 and T >= 1 (B=%lld T=%lld)",
              fn, (long long)B, (long long)T);
  ZRT_REQUIRE(step >= 0, "%s: step = %lld < 0", fn, (long long)step);
  ZRT_REQUIRE(world_size >= 1, "%s: world_size = %d < 1", fn, world_size);
  ZRT_REQUIRE(rank >= 0 && rank < world_size, "%s: rank %d outside [0, %d)",
              fn, rank, world_size);
  ZRT_REQUIRE(B % world_size == 0,
              "%s: global batch B = %lld is not divisible by world size %d",
              fn, (long long)B, world_size);
  ZRT_REQUIRE(inputs != nullptr && targets != nullptr,
              "%s: inputs/targets is NULL", fn);
  int64_t L;
  const int32_t *tok;
  if (int st = splitTokens(fn, ds, split, T, &tok, &L))
    return st;
  const int64_t local = B / world_size;
  const int64_t windows = (L - 1) / T; // sequential mode, >= 1
  for (int64_t lb = 0; lb < local; ++lb) {
    const int64_t b = static_cast<int64_t>(rank) * local + lb;
    int64_t start;
    if (shuffle) {
      start = shuffledStart(seed, split, step, b, L, T);
    } else {
      const uint64_t w =
          (static_cast<uint64_t>(step) * static_cast<uint64_t>(B) +
           static_cast<uint64_t>(b)) %
          static_cast<uint64_t>(windows);
      start = static_cast<int64_t>(w) * T;
    }
    std::memcpy(inputs + lb * T, tok + start, static_cast<size_t>(T) * 4);
    std::memcpy(targets + lb * T, tok + start + 1, static_cast<size_t>(T) * 4);
  }
  return ZRT_OK;
}

int zrt_dataset_sequences(zrt_dataset ds, int split, int64_t T, uint64_t seed,
                          int64_t stream_batch, int64_t first, int64_t count,
                          int32_t *inputs, int32_t *targets) {
  const char *fn = "zrt_dataset_sequences";
  ZRT_REQUIRE(ds != nullptr, "%s: dataset is NULL", fn);
  ZRT_REQUIRE(split == ZRT_SPLIT_TRAIN || split == ZRT_SPLIT_VAL,
              "%s: unknown split %d", fn, split);
  ZRT_REQUIRE(T >= 1 && stream_batch >= 1 && count >= 0 && first >= 0,
              "%s: need T >= 1, stream_batch >= 1, first >= 0 and count >= 0 "
              "(T=%lld stream_batch=%lld first=%lld count=%lld)",
              fn, (long long)T, (long long)stream_batch, (long long)first,
              (long long)count);
  ZRT_REQUIRE(first <= INT64_MAX - count, "%s: first + count overflows", fn);
  ZRT_REQUIRE(count == 0 || (inputs != nullptr && targets != nullptr),
              "%s: inputs/targets is NULL", fn);
  int64_t L;
  const int32_t *tok;
  if (int st = splitTokens(fn, ds, split, T, &tok, &L))
    return st;
  for (int64_t i = 0; i < count; ++i) {
    const int64_t s = first + i;
    const int64_t start = shuffledStart(seed, split, s / stream_batch,
                                        s % stream_batch, L, T);
    std::memcpy(inputs + i * T, tok + start, static_cast<size_t>(T) * 4);
    std::memcpy(targets + i * T, tok + start + 1, static_cast<size_t>(T) * 4);
  }
  return ZRT_OK;
}

} // extern "C"
