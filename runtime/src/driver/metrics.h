//===- metrics.h - The driver's JSON lines and comm counters ----*- C++ -*-===//
///
/// \file
/// Json builds one line of the --metrics file (and of --sample-out);
/// Snapshot reads the runtime's per-collective byte counters
/// (zrt_comm_bytes, and per mesh axis zrt_comm_axis_bytes), so that a step
/// line can report its traffic. Internal to the runtime.
///
//===----------------------------------------------------------------------===//

#ifndef ZRT_SRC_DRIVER_METRICS_H
#define ZRT_SRC_DRIVER_METRICS_H

#include "driver/strformat.h"
#include "zrt/zrt.h"

#include <cmath>
#include <cstdint>
#include <string>

namespace zrt::train {

/// The JSON keys of the collective kinds (ZRT_COLL_*), in their order.
inline const char *const kCollNames[ZRT_COLL_NUM_KINDS] = {
    "all_gather", "reduce_scatter", "all_reduce", "broadcast"};

/// Builds one JSON object (no nesting beyond what the helpers add).
class Json {
public:
  Json &key(const char *k) {
    sep();
    s_ += '"';
    s_ += k;
    s_ += "\":";
    first_ = true; // the value follows directly
    pendingValue_ = true;
    return *this;
  }
  Json &num(double v) {
    sep();
    if (std::isfinite(v))
      s_ += zrt::format("%.10g", v);
    else
      s_ += "null";
    return *this;
  }
  Json &integer(int64_t v) {
    sep();
    s_ += zrt::format("%lld", (long long)v);
    return *this;
  }
  Json &str(const std::string &v) {
    sep();
    s_ += '"';
    for (unsigned char c : v) {
      if (c == '"' || c == '\\') {
        s_ += '\\';
        s_ += static_cast<char>(c);
      } else if (c < 0x20) {
        s_ += zrt::format("\\u%04x", c);
      } else {
        s_ += static_cast<char>(c);
      }
    }
    s_ += '"';
    return *this;
  }
  Json &open(char brace) {
    sep();
    s_ += brace;
    first_ = true;
    return *this;
  }
  Json &close(char brace) {
    s_ += brace;
    first_ = false;
    return *this;
  }
  /// {"all_gather": .., "reduce_scatter": .., "all_reduce": .., "broadcast":
  /// ..}
  Json &collBytes(const int64_t *bytes) {
    open('{');
    for (int k = 0; k < ZRT_COLL_NUM_KINDS; ++k)
      key(kCollNames[k]).integer(bytes[k]);
    return close('}');
  }
  Json &intArray(const int64_t *v, int n) {
    open('[');
    for (int i = 0; i < n; ++i)
      integer(v[i]);
    return close(']');
  }
  std::string line() const { return "{" + s_ + "}\n"; }

private:
  void sep() {
    if (pendingValue_) {
      pendingValue_ = false;
      first_ = false;
      return;
    }
    if (!first_)
      s_ += ',';
    first_ = false;
  }
  std::string s_;
  bool first_ = true;
  bool pendingValue_ = false;
};

/// The runtime's bytes sent per collective kind (zrt_comm_bytes) at one
/// moment, and the same per mesh axis (zrt_comm_axis_bytes; bytes[k] is
/// the sum of axis[.][k]).
struct Snapshot {
  int64_t bytes[ZRT_COLL_NUM_KINDS];
  int64_t axis[ZRT_NUM_AXES][ZRT_COLL_NUM_KINDS];
  static Snapshot take() {
    Snapshot s;
    for (int k = 0; k < ZRT_COLL_NUM_KINDS; ++k)
      s.bytes[k] = zrt_comm_bytes(k);
    for (int a = 0; a < ZRT_NUM_AXES; ++a)
      for (int k = 0; k < ZRT_COLL_NUM_KINDS; ++k)
        s.axis[a][k] = zrt_comm_axis_bytes(a, k);
    return s;
  }
  /// Per-kind (and per-axis) bytes since `earlier`.
  Snapshot since(const Snapshot &earlier) const {
    Snapshot d;
    for (int k = 0; k < ZRT_COLL_NUM_KINDS; ++k)
      d.bytes[k] = bytes[k] - earlier.bytes[k];
    for (int a = 0; a < ZRT_NUM_AXES; ++a)
      for (int k = 0; k < ZRT_COLL_NUM_KINDS; ++k)
        d.axis[a][k] = axis[a][k] - earlier.axis[a][k];
    return d;
  }
  int64_t total() const {
    int64_t t = 0;
    for (int64_t b : bytes)
      t += b;
    return t;
  }
};

} // namespace zrt::train

#endif // ZRT_SRC_DRIVER_METRICS_H
