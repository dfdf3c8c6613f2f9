//===- driver_test_util.h - Helpers of the driver tests -*- C++ -*-===//
//
// The fake training programs as subprocesses (launch), a minimal JSON reader
// for the metrics file, and the DriverTest fixture (a temporary directory
// with a deterministic text file). Paths come from compile definitions:
//   ZRT_FAKE_TRAIN, ZRT_FAKE_TRAIN_NP2, ZRT_FAKE_TRAIN_S3(_NP2): the
//   executables; ZRT_MPIEXEC: launcher with its flags, ending in the
//   process-count flag (e.g. "mpiexec --allow-run-as-root --oversubscribe -n").
//
//===----------------------------------------------------------------------===//
#ifndef ZRT_TEST_DRIVER_TEST_UTIL_H
#define ZRT_TEST_DRIVER_TEST_UTIL_H
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace {

//===----------------------------------------------------------------------===//
// A minimal JSON reader (objects, arrays, strings, numbers, literals).
//===----------------------------------------------------------------------===//

struct JValue {
  enum Kind { Null, Bool, Num, Str, Arr, Obj } kind = Null;
  double num = 0.0;
  bool b = false;
  std::string str;
  std::vector<JValue> arr;
  std::map<std::string, JValue> obj;

  bool has(const std::string &k) const { return kind == Obj && obj.count(k); }
  const JValue &operator[](const std::string &k) const {
    static const JValue null;
    auto it = obj.find(k);
    return it == obj.end() ? null : it->second;
  }
};

class JParser {
public:
  explicit JParser(const std::string &s) : s_(s) {}
  // Parses the whole text as one value; false on any syntax error.
  bool parse(JValue *out) {
    if (!value(out))
      return false;
    ws();
    return i_ == s_.size();
  }

private:
  void ws() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_])))
      ++i_;
  }
  bool lit(const char *w) {
    size_t n = std::strlen(w);
    if (s_.compare(i_, n, w) != 0)
      return false;
    i_ += n;
    return true;
  }
  bool string(std::string *out) {
    if (i_ >= s_.size() || s_[i_] != '"')
      return false;
    ++i_;
    while (i_ < s_.size() && s_[i_] != '"') {
      char c = s_[i_++];
      if (static_cast<unsigned char>(c) < 0x20)
        return false;
      if (c == '\\') {
        if (i_ >= s_.size())
          return false;
        char e = s_[i_++];
        if (e == 'u') {
          if (i_ + 4 > s_.size())
            return false;
          c = static_cast<char>(std::stoi(s_.substr(i_, 4), nullptr, 16));
          i_ += 4;
        } else if (e == 'n') {
          c = '\n';
        } else if (e == 't') {
          c = '\t';
        } else if (e == '"' || e == '\\' || e == '/') {
          c = e;
        } else {
          return false;
        }
      }
      out->push_back(c);
    }
    if (i_ >= s_.size())
      return false;
    ++i_;
    return true;
  }
  bool value(JValue *v) {
    ws();
    if (i_ >= s_.size())
      return false;
    char c = s_[i_];
    if (c == '{') {
      v->kind = JValue::Obj;
      ++i_;
      ws();
      if (i_ < s_.size() && s_[i_] == '}') {
        ++i_;
        return true;
      }
      for (;;) {
        ws();
        std::string k;
        if (!string(&k))
          return false;
        ws();
        if (i_ >= s_.size() || s_[i_++] != ':')
          return false;
        if (v->obj.count(k))
          return false; // duplicate key
        if (!value(&v->obj[k]))
          return false;
        ws();
        if (i_ >= s_.size())
          return false;
        if (s_[i_] == ',') {
          ++i_;
          continue;
        }
        if (s_[i_] == '}') {
          ++i_;
          return true;
        }
        return false;
      }
    }
    if (c == '[') {
      v->kind = JValue::Arr;
      ++i_;
      ws();
      if (i_ < s_.size() && s_[i_] == ']') {
        ++i_;
        return true;
      }
      for (;;) {
        v->arr.emplace_back();
        if (!value(&v->arr.back()))
          return false;
        ws();
        if (i_ >= s_.size())
          return false;
        if (s_[i_] == ',') {
          ++i_;
          continue;
        }
        if (s_[i_] == ']') {
          ++i_;
          return true;
        }
        return false;
      }
    }
    if (c == '"') {
      v->kind = JValue::Str;
      return string(&v->str);
    }
    if (lit("null"))
      return v->kind = JValue::Null, true;
    if (lit("true"))
      return v->kind = JValue::Bool, v->b = true, true;
    if (lit("false"))
      return v->kind = JValue::Bool, v->b = false, true;
    const char *begin = s_.c_str() + i_;
    char *end = nullptr;
    v->num = std::strtod(begin, &end);
    if (end == begin)
      return false;
    v->kind = JValue::Num;
    i_ += static_cast<size_t>(end - begin);
    return true;
  }

  const std::string &s_;
  size_t i_ = 0;
};

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

struct Proc {
  int status = -1; // exit status, -1 if killed by a signal
  std::string out; // stdout and stderr together
};

Proc launch(const std::string &cmd) {
  Proc r;
  // `timeout` turns a hang into a failure instead of a stuck test.
  std::string full = "timeout 120 " + cmd + " 2>&1";
  FILE *p = popen(full.c_str(), "r");
  if (!p)
    return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0)
    r.out.append(buf, n);
  int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

size_t count(const std::string &hay, const std::string &needle) {
  size_t c = 0;
  for (size_t pos = hay.find(needle); pos != std::string::npos;
       pos = hay.find(needle, pos + needle.size()))
    ++c;
  return c;
}

std::vector<JValue> readMetrics(const std::string &path) {
  std::vector<JValue> lines;
  std::ifstream in(path);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    JValue v;
    EXPECT_TRUE(JParser(line).parse(&v)) << path << ":" << n << ": " << line;
    EXPECT_EQ(v.kind, JValue::Obj) << path << ":" << n;
    lines.push_back(v);
  }
  return lines;
}

std::vector<JValue> ofType(const std::vector<JValue> &lines,
                           const std::string &type) {
  std::vector<JValue> out;
  for (const JValue &v : lines)
    if (v["type"].str == type)
      out.push_back(v);
  return out;
}

// Deterministic text with a strong bigram structure.
std::string makeText(size_t bytes) {
  static const char *const kWords[] = {"the ", "cat ",  "sat ", "on ",
                                       "a ",   "mat. ", "dog ", "ran\n"};
  std::string s;
  uint32_t x = 12345;
  while (s.size() < bytes) {
    x = x * 1664525u + 1013904223u;
    s += kWords[(x >> 16) % 8];
  }
  s.resize(bytes);
  return s;
}

const std::string kFake = ZRT_FAKE_TRAIN;
const std::string kFakeNp2 = ZRT_FAKE_TRAIN_NP2;
const std::string kFakeB8 = ZRT_FAKE_TRAIN_B8;
const std::string kFakeS3 = ZRT_FAKE_TRAIN_S3;
const std::string kFakeS3Np2 = ZRT_FAKE_TRAIN_S3_NP2;
const std::string kMpi = ZRT_MPIEXEC;

class DriverTest : public ::testing::Test {
protected:
  void SetUp() override {
    char tmpl[] = "/tmp/zrt-driver-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    text_ = write("data.txt", makeText(20000));
  }
  void TearDown() override {
    if (!dir_.empty() && !HasFailure())
      std::system(("rm -rf '" + dir_ + "'").c_str());
    else if (!dir_.empty())
      std::fprintf(stderr, "kept %s\n", dir_.c_str());
  }
  std::string write(const std::string &name, const std::string &content) {
    std::string path = dir_ + "/" + name;
    std::ofstream(path, std::ios::binary) << content;
    return path;
  }
  std::string path(const std::string &name) const { return dir_ + "/" + name; }
  // Writes an llm.c token file with the given tokens.
  std::string writeBin(const std::string &name,
                       const std::vector<uint16_t> &tokens, int magic) {
    std::vector<int32_t> header(256, 0);
    header[0] = magic;
    header[1] = 1;
    header[2] = static_cast<int32_t>(tokens.size());
    std::string bytes(reinterpret_cast<const char *>(header.data()), 1024);
    bytes.append(reinterpret_cast<const char *>(tokens.data()),
                 tokens.size() * 2);
    return write(name, bytes);
  }
  // Expects exit status 1 and `message` exactly once.
  void expectUserError(const std::string &cmd, const std::string &message) {
    Proc r = launch(cmd);
    EXPECT_EQ(r.status, 1) << cmd << "\n" << r.out;
    EXPECT_EQ(count(r.out, message), 1u)
        << cmd << "\nexpected once: " << message << "\ngot:\n"
        << r.out;
    EXPECT_EQ(r.out.find("step 1/"), std::string::npos) << r.out;
  }

  std::string dir_, text_;
};

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const char *const kQuietRun = " --sample-tokens 0 --val-every 0 --quiet";

} // namespace

#endif // ZRT_TEST_DRIVER_TEST_UTIL_H
