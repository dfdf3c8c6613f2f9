//===- ReferenceEval.cpp - f64 reference evaluation of train ops ----------===//
///
/// \file
/// See ReferenceEval.h. Each case is the op's ODS definition written as
/// plain loops in f64.
///
//===----------------------------------------------------------------------===//

#include "ReferenceEval.h"

#include "Train/TrainOps.h"

#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::train;

namespace zero::test {
namespace {

int64_t numel(Value v) {
  return cast<RankedTensorType>(v.getType()).getNumElements();
}

ArrayRef<int64_t> shape(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

/// r = 1/√(mean(x²) + eps) of each row of C.
Array rowRsqrt(const Array &x, int64_t C, double eps) {
  Array r(x.size() / C);
  for (size_t n = 0; n < r.size(); ++n) {
    double ss = 0;
    for (int64_t c = 0; c < C; ++c)
      ss += x[n * C + c] * x[n * C + c];
    r[n] = 1.0 / std::sqrt(ss / C + eps);
  }
  return r;
}

Array rmsNorm(const Array &x, const Array &w, double eps) {
  int64_t C = w.size();
  Array r = rowRsqrt(x, C, eps), y(x.size());
  for (size_t i = 0; i < x.size(); ++i)
    y[i] = w[i % C] * x[i] * r[i / C];
  return y;
}

/// The f32 frequencies of train.rope_table (with llama3 scaling when set).
Array ropeFrequencies(RopeTableOp op, int64_t half) {
  Array f(half);
  double theta = op.getTheta().convertToDouble();
  for (int64_t i = 0; i < half; ++i) {
    double inv = 1.0 / std::pow(theta, (2.0 * i) / (2.0 * half));
    if (op.hasLlama3Scaling()) {
      double factor = op.getFactor()->convertToDouble();
      double low = op.getLowFreqFactor()->convertToDouble();
      double high = op.getHighFreqFactor()->convertToDouble();
      double original = static_cast<double>(*op.getOriginalMaxPositions());
      double wavelength = 2.0 * 3.14159265358979323846 / inv;
      if (wavelength > original / low) {
        inv = inv / factor;
      } else if (!(wavelength < original / high)) {
        double s = (original / wavelength - low) / (high - low);
        inv = (1.0 - s) * inv / factor + s * inv;
      }
    }
    f[i] = inv;
  }
  return f;
}

/// Index of element a and b of pair i in a head of D (see train.rope).
std::pair<int64_t, int64_t> ropePair(RopeLayout layout, int64_t i, int64_t D) {
  if (layout == RopeLayout::rotate_half)
    return {i, i + D / 2};
  return {2 * i, 2 * i + 1};
}

struct Attention {
  int64_t B, H, Hkv, T, D;
  int64_t q(int64_t b, int64_t h, int64_t t) const {
    return ((b * H + h) * T + t) * D;
  }
  int64_t kv(int64_t b, int64_t h, int64_t t) const {
    return ((b * Hkv + h / (H / Hkv)) * T + t) * D;
  }
};

Attention attentionDims(Value q, Value k) {
  ArrayRef<int64_t> s = shape(q);
  return {s[0], s[1], shape(k)[1], s[2], s[3]};
}

double dot(const double *a, const double *b, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i)
    s += a[i] * b[i];
  return s;
}

/// Rows counted by cross_entropy (target != ignore_index) and the classes.
struct CrossEntropyRows {
  int64_t N, V, classes;
  std::optional<int64_t> ignore;
  bool counted(double target) const {
    return !ignore || static_cast<int64_t>(target) != *ignore;
  }
};

CrossEntropyRows crossEntropyRows(Value logits, std::optional<uint64_t> nc,
                                  IntegerAttr ignore) {
  ArrayRef<int64_t> s = shape(logits);
  CrossEntropyRows r{s[0], s[1], nc ? static_cast<int64_t>(*nc) : s[1], {}};
  if (ignore)
    r.ignore = ignore.getValue().getSExtValue();
  return r;
}

/// log Σ exp over the first `classes` entries of row `n`.
double logSumExp(const Array &l, const CrossEntropyRows &r, int64_t n) {
  double m = -INFINITY, s = 0;
  for (int64_t v = 0; v < r.classes; ++v)
    m = std::max(m, l[n * r.V + v]);
  for (int64_t v = 0; v < r.classes; ++v)
    s += std::exp(l[n * r.V + v] - m);
  return m + std::log(s);
}

} // namespace

std::string evaluate(func::FuncOp fn, Env &env) {
  for (Operation &op : fn.getBody().front().without_terminator()) {
    bool ok =
        llvm::TypeSwitch<Operation *, bool>(&op)
            .Case([&](AddOp o) {
              const Array &a = env[o.getLhs()], &b = env[o.getRhs()];
              Array r(a.size());
              for (size_t i = 0; i < a.size(); ++i)
                r[i] = a[i] + b[i];
              env[o.getResult()] = r;
              return true;
            })
            .Case([&](RmsNormOp o) {
              env[o.getResult()] =
                  rmsNorm(env[o.getInput()], env[o.getWeight()],
                          o.getEps().convertToDouble());
              return true;
            })
            .Case([&](AddRmsNormOp o) {
              const Array &a = env[o.getLhs()], &b = env[o.getRhs()];
              Array sum(a.size());
              for (size_t i = 0; i < a.size(); ++i)
                sum[i] = a[i] + b[i];
              env[o.getResult()] = rmsNorm(sum, env[o.getWeight()],
                                           o.getEps().convertToDouble());
              env[o.getSum()] = sum;
              return true;
            })
            .Case([&](RmsNormGradOp o) {
              const Array &x = env[o.getInput()], &w = env[o.getWeight()],
                          &dy = env[o.getGrad()];
              int64_t C = w.size(), rows = x.size() / C;
              Array r = rowRsqrt(x, C, o.getEps().convertToDouble());
              Array dx(x.size()), dw(C, 0.0);
              for (int64_t n = 0; n < rows; ++n) {
                double m = 0;
                for (int64_t c = 0; c < C; ++c)
                  m += dy[n * C + c] * w[c] * x[n * C + c] * r[n];
                m /= C;
                for (int64_t c = 0; c < C; ++c) {
                  double xh = x[n * C + c] * r[n];
                  dx[n * C + c] = r[n] * (dy[n * C + c] * w[c] - xh * m);
                  dw[c] += dy[n * C + c] * xh;
                }
              }
              if (o.getAddend())
                for (size_t i = 0; i < dx.size(); ++i)
                  dx[i] += env[o.getAddend()][i];
              env[o.getInputGrad()] = dx;
              env[o.getWeightGrad()] = dw;
              return true;
            })
            .Case([&](SiluOp o) {
              const Array &x = env[o.getInput()];
              Array y(x.size());
              for (size_t i = 0; i < x.size(); ++i)
                y[i] = x[i] * sigmoid(x[i]);
              env[o.getResult()] = y;
              return true;
            })
            .Case([&](SiluGradOp o) {
              const Array &x = env[o.getInput()], &dy = env[o.getGrad()];
              Array dx(x.size());
              for (size_t i = 0; i < x.size(); ++i) {
                double s = sigmoid(x[i]);
                dx[i] = dy[i] * s * (1.0 + x[i] * (1.0 - s));
              }
              env[o.getResult()] = dx;
              return true;
            })
            .Case([&](SwigluOp o) {
              const Array &g = env[o.getGate()], &u = env[o.getUp()];
              Array y(g.size());
              for (size_t i = 0; i < g.size(); ++i)
                y[i] = g[i] * sigmoid(g[i]) * u[i];
              env[o.getResult()] = y;
              return true;
            })
            .Case([&](SwigluGradOp o) {
              const Array &g = env[o.getGate()], &u = env[o.getUp()],
                          &dy = env[o.getGrad()];
              Array dg(g.size()), du(g.size());
              for (size_t i = 0; i < g.size(); ++i) {
                double s = sigmoid(g[i]);
                dg[i] = dy[i] * u[i] * s * (1.0 + g[i] * (1.0 - s));
                du[i] = dy[i] * g[i] * s;
              }
              env[o.getGateGrad()] = dg;
              env[o.getUpGrad()] = du;
              return true;
            })
            .Case([&](RopeTableOp o) {
              ArrayRef<int64_t> s = shape(o.getResult());
              Array f = ropeFrequencies(o, s[1]), table(numel(o.getResult()));
              for (int64_t t = 0; t < s[0]; ++t)
                for (int64_t i = 0; i < s[1]; ++i) {
                  table[(t * s[1] + i) * 2] = std::cos(t * f[i]);
                  table[(t * s[1] + i) * 2 + 1] = std::sin(t * f[i]);
                }
              env[o.getResult()] = table;
              return true;
            })
            .Case([&](RopeOp o) {
              const Array &x = env[o.getInput()], &table = env[o.getTable()];
              ArrayRef<int64_t> s = shape(o.getInput());
              int64_t T = s[1], H = s[2], D = s[3];
              double sign = o.getInverse() ? -1.0 : 1.0;
              Array y(x.size());
              for (int64_t row = 0; row < s[0] * T * H; ++row) {
                int64_t t = (row / H) % T;
                for (int64_t i = 0; i < D / 2; ++i) {
                  auto [ia, ib] = ropePair(o.getLayout(), i, D);
                  double c = table[(t * (D / 2) + i) * 2];
                  double sn = sign * table[(t * (D / 2) + i) * 2 + 1];
                  double a = x[row * D + ia], b = x[row * D + ib];
                  y[row * D + ia] = a * c - b * sn;
                  y[row * D + ib] = b * c + a * sn;
                }
              }
              env[o.getResult()] = y;
              return true;
            })
            .Case([&](CausalAttentionOp o) {
              const Array &q = env[o.getQuery()], &k = env[o.getKey()],
                          &v = env[o.getValue()];
              Attention a = attentionDims(o.getQuery(), o.getKey());
              double scale = 1.0 / std::sqrt(static_cast<double>(a.D));
              Array out(q.size(), 0.0), lse(a.B * a.H * a.T);
              for (int64_t b = 0; b < a.B; ++b)
                for (int64_t h = 0; h < a.H; ++h)
                  for (int64_t i = 0; i < a.T; ++i) {
                    Array s(i + 1);
                    double m = -INFINITY, z = 0;
                    for (int64_t j = 0; j <= i; ++j) {
                      s[j] =
                          scale * dot(&q[a.q(b, h, i)], &k[a.kv(b, h, j)], a.D);
                      m = std::max(m, s[j]);
                    }
                    for (int64_t j = 0; j <= i; ++j)
                      z += std::exp(s[j] - m);
                    for (int64_t j = 0; j <= i; ++j)
                      for (int64_t d = 0; d < a.D; ++d)
                        out[a.q(b, h, i) + d] +=
                            std::exp(s[j] - m) / z * v[a.kv(b, h, j) + d];
                    lse[(b * a.H + h) * a.T + i] = m + std::log(z);
                  }
              env[o.getResult()] = out;
              env[o.getLse()] = lse;
              return true;
            })
            .Case([&](AttentionGradOp o) {
              const Array &q = env[o.getQuery()], &k = env[o.getKey()],
                          &v = env[o.getValue()], &out = env[o.getOutput()],
                          &lse = env[o.getLse()], &dout = env[o.getGrad()];
              Attention a = attentionDims(o.getQuery(), o.getKey());
              double scale = 1.0 / std::sqrt(static_cast<double>(a.D));
              Array dq(q.size(), 0.0), dk(k.size(), 0.0), dv(v.size(), 0.0);
              for (int64_t b = 0; b < a.B; ++b)
                for (int64_t h = 0; h < a.H; ++h)
                  for (int64_t i = 0; i < a.T; ++i) {
                    const double *qi = &q[a.q(b, h, i)],
                                 *doi = &dout[a.q(b, h, i)];
                    double rowTerm = dot(doi, &out[a.q(b, h, i)], a.D);
                    for (int64_t j = 0; j <= i; ++j) {
                      const double *kj = &k[a.kv(b, h, j)],
                                   *vj = &v[a.kv(b, h, j)];
                      double p = std::exp(scale * dot(qi, kj, a.D) -
                                          lse[(b * a.H + h) * a.T + i]);
                      double ds = p * (dot(doi, vj, a.D) - rowTerm);
                      for (int64_t d = 0; d < a.D; ++d) {
                        dv[a.kv(b, h, j) + d] += p * doi[d];
                        dq[a.q(b, h, i) + d] += ds * scale * kj[d];
                        dk[a.kv(b, h, j) + d] += ds * scale * qi[d];
                      }
                    }
                  }
              env[o.getQueryGrad()] = dq;
              env[o.getKeyGrad()] = dk;
              env[o.getValueGrad()] = dv;
              return true;
            })
            .Case([&](CrossEntropyOp o) {
              const Array &l = env[o.getLogits()], &t = env[o.getTargets()];
              CrossEntropyRows r = crossEntropyRows(
                  o.getLogits(), o.getNumClasses(), o.getIgnoreIndexAttr());
              double sum = 0;
              int64_t counted = 0;
              for (int64_t n = 0; n < r.N; ++n) {
                if (!r.counted(t[n]))
                  continue;
                ++counted;
                sum += logSumExp(l, r, n) -
                       l[n * r.V + static_cast<int64_t>(t[n])];
              }
              env[o.getResult()] = {sum / static_cast<double>(counted)};
              return true;
            })
            .Case([&](CrossEntropyGradOp o) {
              const Array &l = env[o.getLogits()], &t = env[o.getTargets()];
              double g = env[o.getGrad()][0];
              CrossEntropyRows r = crossEntropyRows(
                  o.getLogits(), o.getNumClasses(), o.getIgnoreIndexAttr());
              int64_t counted = 0;
              for (int64_t n = 0; n < r.N; ++n)
                counted += r.counted(t[n]);
              Array dl(l.size(), 0.0);
              for (int64_t n = 0; n < r.N; ++n) {
                if (!r.counted(t[n]))
                  continue;
                double lse = logSumExp(l, r, n);
                for (int64_t v = 0; v < r.classes; ++v)
                  dl[n * r.V + v] =
                      g *
                      (std::exp(l[n * r.V + v] - lse) -
                       (v == static_cast<int64_t>(t[n]) ? 1.0 : 0.0)) /
                      static_cast<double>(counted);
              }
              env[o.getResult()] = dl;
              return true;
            })
            .Default([](Operation *) { return false; });
    if (!ok)
      return op.getName().getStringRef().str();
  }
  return "";
}

} // namespace zero::test
