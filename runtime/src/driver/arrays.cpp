//===- arrays.cpp - Array datasets of the training driver -----------------===//
//
// See arrays.h. Formats: safetensors (safetensors.h) and NumPy .npy
// (https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html):
// "\x93NUMPY", major, minor, a little-endian header length (2 bytes in
// version 1, 4 in 2 and 3), a Python dict literal
//   {'descr': '<f4', 'fortran_order': False, 'shape': (100, 8), }
// padded with spaces and '\n', then the C-order data.
//
//===----------------------------------------------------------------------===//

#include "driver/arrays.h"
#include "driver/strformat.h"

#include "common/internal.h"
#include "driver/safetensors.h"
#include "driver/state_io.h"
#include "zrt/zrt.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <algorithm>
#include <map>

namespace zrt {
namespace {

/// Stream constant of the array sampler ("ARRY"); the token sampler's is
/// "BATC" (data.cpp).
constexpr uint32_t kArrayStream = 0x41525259u;

/// One array of the file(s): dtype, shape and its bytes in a mapping.
struct FileArray {
  int dtype = 0;
  std::vector<int64_t> shape;
  const uint8_t *data = nullptr;
  std::string where; // "array 'x' in data.safetensors" (messages)
};

/// Maps `path` read-only; "" or why not.
std::string mapFile(const std::string &path, void **addr, size_t *bytes) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return format("cannot open data file '%s': %s", path.c_str(),
                  std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0) {
    ::close(fd);
    return format("data file '%s' is not a non-empty regular file",
                  path.c_str());
  }
  void *p = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ,
                   MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (p == MAP_FAILED)
    return format("cannot map data file '%s': %s", path.c_str(),
                  std::strerror(errno));
  *addr = p;
  *bytes = static_cast<size_t>(st.st_size);
  return "";
}

/// Whether the mapped bytes look like a safetensors file: an 8-byte header
/// length within the file, then '{'.
bool looksLikeSafetensors(const uint8_t *p, size_t bytes) {
  if (bytes < 10)
    return false;
  uint64_t n = 0;
  std::memcpy(&n, p, 8);
  return n >= 2 && n <= bytes - 8 && p[8] == '{';
}

/// The arrays of a mapped safetensors file.
std::string readSafetensors(const std::string &path, const uint8_t *p,
                            size_t bytes,
                            std::map<std::string, FileArray> *out) {
  uint64_t n = 0;
  std::memcpy(&n, p, 8);
  const std::string header(reinterpret_cast<const char *>(p) + 8,
                           static_cast<size_t>(n));
  const int64_t dataStart = 8 + static_cast<int64_t>(n);
  std::map<std::string, SafetensorsEntry> entries;
  if (std::string err = parseSafetensorsHeader(
          header, static_cast<int64_t>(bytes) - dataStart,
          format("data file '%s'", path.c_str()), &entries,
          /*integers=*/true);
      !err.empty())
    return err;
  for (auto &[name, e] : entries)
    (*out)[name] = FileArray{e.dtype, e.shape, p + dataStart + e.begin,
                             format("array '%s' in '%s'", name.c_str(),
                                    path.c_str())};
  return "";
}

/// The array of a mapped .npy file.
std::string readNpy(const std::string &path, const uint8_t *p, size_t bytes,
                    FileArray *out) {
  const std::string bad = format("'%s' is not a .npy file", path.c_str());
  if (bytes < 10 || std::memcmp(p, "\x93NUMPY", 6) != 0)
    return bad + " (no \\x93NUMPY magic)";
  const int major = p[6];
  size_t len = 0, at = 0;
  if (major == 1) {
    len = static_cast<size_t>(p[8]) | static_cast<size_t>(p[9]) << 8;
    at = 10;
  } else if (major == 2 || major == 3) {
    if (bytes < 12)
      return bad;
    len = static_cast<size_t>(p[8]) | static_cast<size_t>(p[9]) << 8 |
          static_cast<size_t>(p[10]) << 16 | static_cast<size_t>(p[11]) << 24;
    at = 12;
  } else {
    return bad + format(" (format version %d)", major);
  }
  if (len > bytes - at)
    return bad + " (its header is cut short)";
  const std::string h(reinterpret_cast<const char *>(p) + at, len);
  auto value = [&](const char *key) -> std::string {
    size_t k = h.find(std::string("'") + key + "'");
    if (k == std::string::npos)
      return "";
    k = h.find(':', k);
    if (k == std::string::npos)
      return "";
    size_t b = h.find_first_not_of(' ', k + 1);
    if (b == std::string::npos)
      return "";
    char close = h[b] == '(' ? ')' : h[b] == '\'' ? '\'' : ',';
    size_t e = h.find(close, b + 1);
    if (e == std::string::npos)
      return "";
    return h.substr(b, e - b + (close == ',' ? 0 : 1));
  };
  const std::string descr = value("descr"), order = value("fortran_order"),
                    shape = value("shape");
  int dtype;
  if (descr == "'<f4'")
    dtype = ZRT_F32;
  else if (descr == "'<f2'")
    dtype = ZRT_F16;
  else if (descr == "'<i4'")
    dtype = ZRT_I32;
  else if (descr == "'<i8'")
    dtype = ZRT_I64;
  else
    return format("'%s' has dtype %s (only float32, float16, int32 and "
                  "int64, little-endian, are supported)",
                  path.c_str(), descr.empty() ? "?" : descr.c_str());
  if (order != "False")
    return format("'%s' is in Fortran order (save it C-contiguous: "
                  "np.ascontiguousarray)",
                  path.c_str());
  if (shape.size() < 2 || shape.front() != '(')
    return bad + " (no shape)";
  std::vector<int64_t> dims;
  int64_t numel = 1;
  for (size_t i = 1; i + 1 < shape.size();) {
    while (i + 1 < shape.size() && (shape[i] == ' ' || shape[i] == ','))
      ++i;
    if (i + 1 >= shape.size())
      break;
    char *end = nullptr;
    long long d = std::strtoll(shape.c_str() + i, &end, 10);
    if (end == shape.c_str() + i || d < 0 ||
        (d > 0 && numel > (int64_t(1) << 60) / d))
      return bad + " (a malformed shape)";
    dims.push_back(d);
    numel *= d;
    i = static_cast<size_t>(end - shape.c_str());
  }
  const size_t dataAt = at + len;
  if (static_cast<uint64_t>(numel) * elementBytes(dtype) > bytes - dataAt)
    return format("'%s' is shorter than its shape %s says", path.c_str(),
                  shapeText(dims).c_str());
  *out = FileArray{dtype, dims, p + dataAt,
                   format("array '%s'", path.c_str())};
  return "";
}

} // namespace

void ArrayData::close() {
  for (Mapping &m : maps_)
    ::munmap(m.addr, m.bytes);
  maps_.clear();
  arrays_.clear();
  pointers_.clear();
}

std::string ArrayData::open(const std::string &path,
                            const zrt_model_desc *model, double valFraction,
                            bool validation) {
  close();
  m_ = model;
  std::string names;
  for (int i = 0; i < model->num_inputs; ++i)
    names += format(i ? ", %s" : "%s", model->inputs[i].name);
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    return format("cannot open data file '%s': %s", path.c_str(),
                  std::strerror(errno));

  // The file's arrays by name.
  std::map<std::string, FileArray> found;
  std::string source;
  if (S_ISDIR(st.st_mode)) {
    source = format("directory '%s'", path.c_str());
    for (int i = 0; i < model->num_inputs; ++i) {
      const std::string file = path + "/" + model->inputs[i].name + ".npy";
      struct stat fs;
      if (::stat(file.c_str(), &fs) != 0)
        continue; // reported as missing below
      Mapping m;
      if (std::string err = mapFile(file, &m.addr, &m.bytes); !err.empty())
        return err;
      maps_.push_back(m);
      FileArray a;
      if (std::string err = readNpy(file, static_cast<const uint8_t *>(m.addr),
                                    m.bytes, &a);
          !err.empty())
        return err;
      found[model->inputs[i].name] = a;
    }
  } else {
    source = format("'%s'", path.c_str());
    Mapping m;
    if (std::string err = mapFile(path, &m.addr, &m.bytes); !err.empty())
      return err;
    maps_.push_back(m);
    const auto *p = static_cast<const uint8_t *>(m.addr);
    if (!looksLikeSafetensors(p, m.bytes))
      return format("the model takes named arrays (%s), so --data must be a "
                    "safetensors file or a directory of .npy files with "
                    "those names; '%s' is neither (a text or token file "
                    "trains token models only)",
                    names.c_str(), path.c_str());
    if (std::string err = readSafetensors(path, p, m.bytes, &found);
        !err.empty())
      return err;
  }

  // Each input's array: present, the input's dtype, [N, sample shape...].
  int64_t samples = -1;
  std::string firstName;
  summary_.clear();
  const int64_t B = model->batch;
  for (int i = 0; i < model->num_inputs; ++i) {
    const zrt_input_desc &in = model->inputs[i];
    auto it = found.find(in.name);
    if (it == found.end())
      return format("%s has no array '%s' (the model's inputs: %s%s)",
                    source.c_str(), in.name, names.c_str(),
                    S_ISDIR(st.st_mode)
                        ? format("; expected the file %s/%s.npy", path.c_str(),
                                 in.name)
                              .c_str()
                        : "");
    const FileArray &a = it->second;
    std::vector<int64_t> want(in.shape, in.shape + in.rank);
    want[0] = -1;
    std::string wantText = "[N";
    for (int d = 1; d < in.rank; ++d)
      wantText += format(", %lld", (long long)in.shape[d]);
    wantText += "]";
    const bool narrow = a.dtype == ZRT_I64 && in.dtype == ZRT_I32;
    // f32 data for a bf16 / f16 input is rounded to nearest even, as the
    // mixed-precision parameters are.
    const bool round =
        a.dtype == ZRT_F32 && (in.dtype == ZRT_BF16 || in.dtype == ZRT_F16);
    if (a.dtype != in.dtype && !narrow && !round)
      return format("%s is %s, but the model's input '%s' is %s %s",
                    a.where.c_str(), dtypeText(a.dtype), in.name,
                    dtypeText(in.dtype), wantText.c_str());
    bool shapeOk = static_cast<int>(a.shape.size()) == in.rank;
    for (int d = 1; shapeOk && d < in.rank; ++d)
      shapeOk = a.shape[static_cast<size_t>(d)] == in.shape[d];
    if (!shapeOk)
      return format("%s has shape %s, but the model's input '%s' takes %s "
                    "(N samples of %s; its micro-batch is %s)",
                    a.where.c_str(), shapeText(a.shape).c_str(), in.name,
                    wantText.c_str(),
                    in.rank == 1 ? "scalars" : "the input's trailing shape",
                    shapeText(std::vector<int64_t>(in.shape, in.shape + in.rank))
                        .c_str());
    if (samples >= 0 && a.shape[0] != samples)
      return format("the arrays have different sample counts: '%s' has %lld, "
                    "'%s' %lld (the first dimension counts samples)",
                    firstName.c_str(), (long long)samples, in.name,
                    (long long)a.shape[0]);
    if (samples < 0) {
      samples = a.shape[0];
      firstName = in.name;
    }
    Array arr;
    arr.data = a.data;
    arr.fileDtype = a.dtype;
    arr.narrow = narrow;
    arr.roundTo = round ? in.dtype : -1;
    arr.rowBytes = static_cast<int64_t>(elementBytes(a.dtype));
    for (int d = 1; d < in.rank; ++d)
      arr.rowBytes *= in.shape[d];
    if (narrow) {
      // Every value must fit the input's int32.
      const int64_t n = samples * (arr.rowBytes / 8);
      for (int64_t e = 0; e < n; ++e) {
        int64_t v;
        std::memcpy(&v, a.data + e * 8, 8);
        if (v < INT32_MIN || v > INT32_MAX)
          return format("%s is i64 with the value %lld at element %lld, "
                        "which the model's i32 input '%s' cannot hold",
                        a.where.c_str(), (long long)v, (long long)e, in.name);
      }
    }
    const int64_t inRow =
        arr.rowBytes / static_cast<int64_t>(elementBytes(a.dtype)) *
        static_cast<int64_t>(elementBytes(in.dtype));
    arr.batch.assign(static_cast<size_t>(B * inRow), 0);
    arrays_.push_back(std::move(arr));
    summary_ += format("%s%s %s %s", i ? ", " : "", in.name,
                       dtypeText(a.dtype), shapeText(a.shape).c_str());
  }
  nVal_ = static_cast<int64_t>(static_cast<double>(samples) * valFraction);
  nTrain_ = samples - nVal_;
  if (nTrain_ < 1)
    return format("%s has %lld samples and none is left for training "
                  "(--val-fraction %g)",
                  source.c_str(), (long long)samples, valFraction);
  if (validation && nVal_ < 1)
    return format("the validation split of %s is empty (%lld samples, "
                  "--val-fraction %g); use a larger --val-fraction, more "
                  "samples, or --val-every 0",
                  source.c_str(), (long long)samples, valFraction);
  for (Array &a : arrays_)
    pointers_.push_back(a.batch.data());
  rows_.assign(static_cast<size_t>(B), 0);
  return "";
}

std::string ArrayData::describe() const { return summary_; }

void ArrayData::copyRow(int64_t row, int64_t j) {
  rows_[static_cast<size_t>(j)] = row;
  for (Array &a : arrays_) {
    const uint8_t *src = a.data + row * a.rowBytes;
    if (a.roundTo >= 0) {
      const int64_t n = a.rowBytes / 4;
      float row[256];
      for (int64_t e = 0; e < n; e += 256) {
        const int64_t k = std::min<int64_t>(256, n - e);
        std::memcpy(row, src + e * 4, static_cast<size_t>(k) * 4);
        hostFromF32(row, a.batch.data() + (j * n + e) * 2, a.roundTo, k);
      }
      continue;
    }
    if (a.narrow) {
      // I64 file values into the i32 input (checked to fit at open).
      const int64_t n = a.rowBytes / 8;
      auto *dst = reinterpret_cast<int32_t *>(a.batch.data()) + j * n;
      for (int64_t e = 0; e < n; ++e) {
        int64_t v;
        std::memcpy(&v, src + e * 8, 8);
        dst[e] = static_cast<int32_t>(v);
      }
      continue;
    }
    std::memcpy(a.batch.data() + j * a.rowBytes, src,
                static_cast<size_t>(a.rowBytes));
  }
}

void ArrayData::fetchTrain(uint64_t seed, int64_t streamBatch, int64_t first) {
  for (size_t j = 0; j < rows_.size(); ++j) {
    const uint64_t s = static_cast<uint64_t>(first) + j;
    const uint64_t index = s / static_cast<uint64_t>(streamBatch),
                   b = s % static_cast<uint64_t>(streamBatch);
    Philox4x32 r = philox4x32(
        static_cast<uint32_t>(index), static_cast<uint32_t>(index >> 32),
        static_cast<uint32_t>(b), kArrayStream, seed);
    const uint64_t bits = (static_cast<uint64_t>(r.v[0]) << 32) | r.v[1];
    copyRow(static_cast<int64_t>(bits % static_cast<uint64_t>(nTrain_)),
            static_cast<int64_t>(j));
  }
}

void ArrayData::fetchVal(int64_t index, int64_t globalBatch, int rank) {
  const int64_t B = static_cast<int64_t>(rows_.size());
  for (int64_t j = 0; j < B; ++j) {
    const int64_t g = index * globalBatch + rank * B + j;
    copyRow(nTrain_ + g % nVal_, j);
  }
}

} // namespace zrt
