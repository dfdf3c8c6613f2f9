//===- data.cpp - Memory-mapped token datasets and the batch sampler ------===//
//
// A dataset is one stream of tokens: the concatenation of its shards (files
// mapped read-only with mmap, never read whole). The train split is the
// stream's first tokens, the validation split its last ones (or, with
// separate validation shards, those shards). A window of T + 1 tokens is
// converted to int32 (and its ids checked against the vocabulary limit) only
// when it is drawn, so memory and start-up do not grow with the data.
//
//===----------------------------------------------------------------------===//

#include "common/internal.h"

#include <sys/mman.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <new>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

/// One mapped file of the stream.
struct Shard {
  std::string path;
  const unsigned char *map = nullptr; ///< The whole file, PROT_READ.
  size_t mapBytes = 0;
  int64_t headerBytes = 0; ///< 0 (text) or 1024 (llm.c header).
  int64_t tokens = 0;      ///< Tokens of this shard.
  int64_t start = 0;       ///< Position of its first token in the stream.
  bool dirty = false;      ///< Read since the last releasePages.
};

/// Mapped bytes the sampler lets accumulate before it drops them from the
/// process (madvise MADV_DONTNEED; the kernel's page cache keeps them), so
/// that a rank's resident set stays bounded however much data it reads.
constexpr int64_t kReleaseBytes = int64_t(64) << 20;

/// What one read may map: the kernel maps a page-cache folio of up to 2 MiB
/// (naturally aligned in the file) whole on one fault (measured on Linux
/// 6.18: about 1.6 MB per random 2-byte read of a file just written), so a
/// window costs 2 MiB per 2 MiB-aligned block of the file it touches.
constexpr int64_t kFolioBytes = int64_t(2) << 20;

constexpr int64_t kHeaderBytes = 256 * sizeof(int32_t);

} // namespace

struct zrt_dataset_s {
  std::vector<Shard> shards; // train shards, then validation shards
  bool text = false;
  int64_t total = 0;   // tokens of the whole stream
  int64_t nTrain = 0;  // train = [0, nTrain)
  int64_t valBegin = 0, nVal = 0; // val = [valBegin, valBegin + nVal)
  int64_t limit = 0;   // ids must be < limit (0: no check)
  int64_t mapped = 0;  // bytes mapped (bound) since the last release
  std::vector<size_t> dirty; // shards read since the last release
  ~zrt_dataset_s() {
    for (Shard &s : shards)
      if (s.map)
        ::munmap(const_cast<unsigned char *>(s.map), s.mapBytes);
  }
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

/// The first stream position of `split` (*base) and its length (*L), or
/// ZRT_ERR_OUT_OF_RANGE when it holds no window of T + 1 tokens.
int splitRange(const char *fn, zrt_dataset ds, int split, int64_t T,
               int64_t *base, int64_t *L) {
  *L = zrt_dataset_num_tokens(ds, split);
  if (T + 1 > *L)
    return zrt::fail(ZRT_ERR_OUT_OF_RANGE,
                     "%s: sequence length T + 1 = %lld exceeds the %lld tokens "
                     "of the %s split",
                     fn, (long long)(T + 1), (long long)*L,
                     split == ZRT_SPLIT_TRAIN ? "train" : "validation");
  *base = split == ZRT_SPLIT_TRAIN ? 0 : ds->valBegin;
  return ZRT_OK;
}

/// Tokens [pos, pos + n) of the stream as int32 into `dst` (they may span
/// shards). A token id >= ds->limit fails with ZRT_ERR_OUT_OF_RANGE naming
/// the file and the byte offset; dst is then partly written.
/// The 2 MiB blocks of the files they touch count in ds->mapped.
int readTokens(zrt_dataset ds, int64_t pos, int64_t n, int32_t *dst) {
  auto it = std::upper_bound(
      ds->shards.begin(), ds->shards.end(), pos,
      [](int64_t p, const Shard &s) { return p < s.start; });
  size_t i = static_cast<size_t>(it - ds->shards.begin()) - 1;
  const int64_t elem = ds->text ? 1 : 2;
  while (n > 0) {
    Shard &s = ds->shards[i];
    const int64_t local = pos - s.start;
    const int64_t take = std::min(n, s.tokens - local);
    const int64_t first = s.headerBytes + local * elem;
    const int64_t last = first + take * elem - 1;
    ds->mapped += (last / kFolioBytes - first / kFolioBytes + 1) * kFolioBytes;
    if (!s.dirty) {
      s.dirty = true;
      ds->dirty.push_back(i);
    }
    const unsigned char *p = s.map + first;
    if (ds->text) {
      for (int64_t k = 0; k < take; ++k)
        dst[k] = p[k];
    } else {
      const uint16_t *q = reinterpret_cast<const uint16_t *>(p);
      for (int64_t k = 0; k < take; ++k)
        dst[k] = q[k];
    }
    if (ds->limit > 0)
      for (int64_t k = 0; k < take; ++k)
        if (dst[k] >= ds->limit)
          return zrt::fail(
              ZRT_ERR_OUT_OF_RANGE,
              "'%s': token id %d at token %lld of the file (byte offset "
              "%lld) is outside the vocabulary of %lld",
              s.path.c_str(), dst[k], (long long)(local + k),
              (long long)(s.headerBytes + (local + k) * elem),
              (long long)ds->limit);
    dst += take;
    pos += take;
    n -= take;
    ++i;
  }
  return ZRT_OK;
}

/// Drops the mapped pages read so far from the process once kReleaseBytes
/// may be mapped (they stay in the page cache): only the shards read since
/// the last release.
void releasePages(zrt_dataset ds) {
  if (ds->mapped < kReleaseBytes)
    return;
  for (size_t i : ds->dirty) {
    Shard &s = ds->shards[i];
    ::madvise(const_cast<unsigned char *>(s.map), s.mapBytes, MADV_DONTNEED);
    s.dirty = false;
  }
  ds->dirty.clear();
  ds->mapped = 0;
}

/// Row `b`'s window starting at stream position `start`: inputs = tokens
/// [start, start + T), targets = [start + 1, start + T].
int readWindow(zrt_dataset ds, int64_t start, int64_t T, int32_t *inputs,
               int32_t *targets) {
  if (int st = readTokens(ds, start, T, inputs))
    return st;
  std::memcpy(targets, inputs + 1, static_cast<size_t>(T - 1) * 4);
  // (Its block is counted again: a release comes early, never late.)
  int st = readTokens(ds, start + T, 1, targets + T - 1);
  releasePages(ds);
  return st;
}

bool isBinPath(const char *path) {
  const size_t n = std::strlen(path);
  return n >= 4 && std::strcmp(path + n - 4, ".bin") == 0;
}

/// Maps `path` read-only and checks its format (its header for .bin) into
/// *s. Reads the 1024-byte header of a .bin file, nothing of its tokens.
int mapShard(const char *fn, const char *path, bool bin, Shard *s) {
  ZRT_REQUIRE(path != nullptr, "%s: path is NULL", fn);
  s->path = path;
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return zrt::fail(ZRT_ERR_IO, "%s: cannot open '%s': %s", fn, path,
                     std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return zrt::fail(ZRT_ERR_IO, "%s: '%s' is not a regular file", fn, path);
  }
  const int64_t size = st.st_size;
  if (size == 0) {
    ::close(fd);
    return zrt::fail(ZRT_ERR_IO, "%s: '%s' is empty", fn, path);
  }
  if (bin && size < kHeaderBytes) {
    ::close(fd);
    return zrt::fail(ZRT_ERR_FORMAT,
                     "%s: '%s' has %lld bytes, shorter than the 1024-byte "
                     "llm.c header",
                     fn, path, (long long)size);
  }
  void *m = ::mmap(nullptr, static_cast<size_t>(size), PROT_READ, MAP_SHARED,
                   fd, 0);
  const int mapErr = errno;
  ::close(fd);
  if (m == MAP_FAILED)
    return zrt::fail(ZRT_ERR_IO, "%s: cannot map '%s': %s", fn, path,
                     std::strerror(mapErr));
  // Training draws windows at random: no read-ahead around them.
  ::madvise(m, static_cast<size_t>(size), MADV_RANDOM);
  s->map = static_cast<const unsigned char *>(m);
  s->mapBytes = static_cast<size_t>(size);
  if (!bin) {
    s->tokens = size;
    return ZRT_OK;
  }
  int32_t header[256];
  std::memcpy(header, s->map, sizeof header);
  s->headerBytes = kHeaderBytes;
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
  s->tokens = count;
  return ZRT_OK;
}

/// Appends the shards of `paths` to ds. forced < 0: a file's kind is its
/// name's (.bin or text) and must be ds->text's; else every file is read
/// as text (0) or .bin (1).
int addShards(const char *fn, zrt_dataset ds, const char *const *paths,
              int num_paths, int forced) {
  for (int i = 0; i < num_paths; ++i) {
    ZRT_REQUIRE(paths[i] != nullptr, "%s: path %d is NULL", fn, i);
    const bool bin = forced < 0 ? isBinPath(paths[i]) : forced == 1;
    if (bin == ds->text)
      return zrt::fail(
          ZRT_ERR_FORMAT,
          "%s: '%s' is %s but '%s' is %s: the files of one dataset must all "
          "be llm.c .bin token files or all text",
          fn, paths[i], bin ? "an llm.c .bin token file" : "text",
          ds->shards.front().path.c_str(),
          ds->text ? "text" : "an llm.c .bin token file");
    ds->shards.emplace_back();
    Shard &s = ds->shards.back();
    if (int st = mapShard(fn, paths[i], bin, &s))
      return st;
    s.start = ds->total;
    ds->total += s.tokens;
  }
  return ZRT_OK;
}

/// zrt_dataset_open_shards with the kind of every file forced (text 0,
/// .bin 1) or taken from the names (forced < 0).
int openDataset(const char *fn, const char *const *paths, int num_paths,
                const char *const *val_paths, int num_val_paths,
                double val_fraction, int forced, zrt_dataset *out) {
  ZRT_REQUIRE(out != nullptr, "%s: out is NULL", fn);
  *out = nullptr;
  ZRT_REQUIRE(paths != nullptr && num_paths >= 1,
              "%s: need at least one path", fn);
  ZRT_REQUIRE(num_val_paths >= 0 && (num_val_paths == 0 || val_paths),
              "%s: val_paths is NULL", fn);
  ZRT_REQUIRE(val_fraction >= 0.0 && val_fraction < 1.0,
              "%s: val_fraction = %g must be in [0, 1)", fn, val_fraction);
  ZRT_REQUIRE(num_val_paths == 0 || val_fraction == 0.0,
              "%s: val_fraction = %g with validation files (must be 0)", fn,
              val_fraction);
  ZRT_REQUIRE(paths[0] != nullptr, "%s: path 0 is NULL", fn);
  auto *ds = new (std::nothrow) zrt_dataset_s;
  if (!ds)
    return zrt::fail(ZRT_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
  ds->text = forced < 0 ? !isBinPath(paths[0]) : forced == 0;
  try {
    int st = addShards(fn, ds, paths, num_paths, forced);
    if (st == ZRT_OK) {
      ds->nTrain = ds->total;
      st = addShards(fn, ds, val_paths, num_val_paths, forced);
    }
    if (st != ZRT_OK) {
      delete ds;
      return st;
    }
  } catch (const std::bad_alloc &) {
    delete ds;
    return zrt::fail(ZRT_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
  }
  try {
    ds->dirty.reserve(ds->shards.size()); // no allocation while sampling
  } catch (const std::bad_alloc &) {
    delete ds;
    return zrt::fail(ZRT_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
  }
  if (num_val_paths > 0) {
    ds->valBegin = ds->nTrain;
    ds->nVal = ds->total - ds->nTrain;
  } else {
    ds->nVal = static_cast<int64_t>(static_cast<double>(ds->total) *
                                    val_fraction);
    ds->nTrain = ds->total - ds->nVal;
    ds->valBegin = ds->nTrain;
  }
  *out = ds;
  return ZRT_OK;
}

} // namespace

extern "C" {

int zrt_dataset_open_shards(const char *const *paths, int num_paths,
                            const char *const *val_paths, int num_val_paths,
                            double val_fraction, zrt_dataset *out) {
  return openDataset("zrt_dataset_open_shards", paths, num_paths, val_paths,
                     num_val_paths, val_fraction, -1, out);
}

int zrt_dataset_open_text(const char *path, double val_fraction,
                          zrt_dataset *out) {
  return openDataset("zrt_dataset_open_text", &path, 1, nullptr, 0,
                     val_fraction, 0, out);
}

int zrt_dataset_open_bin(const char *path, double val_fraction,
                         zrt_dataset *out) {
  return openDataset("zrt_dataset_open_bin", &path, 1, nullptr, 0,
                     val_fraction, 1, out);
}

int zrt_dataset_open(const char *path, double val_fraction, zrt_dataset *out) {
  return openDataset("zrt_dataset_open", &path, 1, nullptr, 0, val_fraction,
                     -1, out);
}

void zrt_dataset_close(zrt_dataset ds) { delete ds; }

int64_t zrt_dataset_num_tokens(zrt_dataset ds, int split) {
  if (!ds)
    return -1;
  if (split == ZRT_SPLIT_TRAIN)
    return ds->nTrain;
  if (split == ZRT_SPLIT_VAL)
    return ds->nVal;
  return -1;
}

int64_t zrt_dataset_vocab_size(zrt_dataset ds) {
  return ds ? (ds->text ? 256 : 65536) : -1;
}

int zrt_dataset_is_text(zrt_dataset ds) { return ds ? ds->text : -1; }

int64_t zrt_dataset_num_files(zrt_dataset ds) {
  return ds ? static_cast<int64_t>(ds->shards.size()) : -1;
}

int zrt_dataset_set_vocab_limit(zrt_dataset ds, int64_t vocab) {
  ZRT_REQUIRE(ds != nullptr, "zrt_dataset_set_vocab_limit: dataset is NULL");
  ZRT_REQUIRE(vocab >= 0,
              "zrt_dataset_set_vocab_limit: vocab = %lld < 0",
              (long long)vocab);
  ds->limit = vocab;
  return ZRT_OK;
}

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
  int64_t L = 0, base = 0;
  if (int st = splitRange(fn, ds, split, T, &base, &L))
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
    if (int st = readWindow(ds, base + start, T, inputs + lb * T,
                            targets + lb * T))
      return st;
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
  int64_t L = 0, base = 0;
  if (int st = splitRange(fn, ds, split, T, &base, &L))
    return st;
  for (int64_t i = 0; i < count; ++i) {
    const int64_t s = first + i;
    const int64_t start = shuffledStart(seed, split, s / stream_batch,
                                        s % stream_batch, L, T);
    if (int st =
            readWindow(ds, base + start, T, inputs + i * T, targets + i * T))
      return st;
  }
  return ZRT_OK;
}

} // extern "C"
