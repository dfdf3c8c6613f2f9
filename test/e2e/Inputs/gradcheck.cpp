//===- gradcheck.cpp - checks a compiled step's gradients numerically -----===//
//
// Linked into a program built by `zero-compile --extra-source`, this file
// defines zrt_train_main, so the runtime's training driver is not linked
// and main() runs this check instead (world size 1, stage 0 or 1: whole
// parameters and gradients):
//
//  1. @forward and @forward_backward return the same loss, bit for bit;
//  2. for every parameter p with gradient state p.grad, the directional
//     derivative of @forward's loss along a random ±1 direction d matches
//     <p.grad, d> from @forward_backward (central differences in f32, the
//     better of two step sizes, within 5e-4 + 1% of the estimate);
//  3. @optimizer_step returns the global gradient norm sqrt(sum g^2) and
//     zeroes the gradients;
//  4. last_logits (when present) returns finite logits for every row.
//
// Prints one line per parameter and "gradcheck: N/N parameters ok"; exits
// 1 on any mismatch.
//
//===----------------------------------------------------------------------===//

#include "zrt/model.h"
#include "zrt/zrt.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

uint64_t lcg(uint64_t &state) {
  state = state * 6364136223846793005ull + 1442695040888963407ull;
  return state >> 33;
}

const zrt_state_desc *findState(const zrt_model_desc *m,
                                const std::string &name) {
  for (int i = 0; i < m->num_states; ++i)
    if (name == m->states[i].name)
      return &m->states[i];
  return nullptr;
}

} // namespace

extern "C" int zrt_train_main(int argc, char **argv, const zrt_model_desc *m) {
  if (zrt_init(&argc, &argv) != ZRT_OK || m->init(1234) != ZRT_OK) {
    std::fprintf(stderr, "gradcheck: init failed: %s\n", zrt_last_error());
    return 2;
  }
  const int64_t n = m->batch * m->seq;
  std::vector<int32_t> ids(n), targets(n);
  uint64_t rng = 42;
  for (int64_t i = 0; i < n; ++i) {
    ids[i] = static_cast<int32_t>(lcg(rng) % m->vocab);
    targets[i] = static_cast<int32_t>(lcg(rng) % m->vocab);
  }
  auto loss = [&]() {
    float l = 0;
    if (m->forward(ids.data(), targets.data(), &l) != ZRT_OK) {
      std::fprintf(stderr, "gradcheck: forward failed: %s\n", zrt_last_error());
      std::exit(2);
    }
    return static_cast<double>(l);
  };

  int failures = 0, checked = 0, paramFailures = 0;
  float l0 = static_cast<float>(loss()), lfb = 0;
  if (m->forward_backward(ids.data(), targets.data(), &lfb) != ZRT_OK) {
    std::fprintf(stderr, "gradcheck: forward_backward failed: %s\n",
                 zrt_last_error());
    return 2;
  }
  std::printf("loss forward %.9g forward_backward %.9g %s\n", l0, lfb,
              l0 == lfb ? "same" : "DIFFERENT");
  failures += l0 != lfb;

  double sumSquares = 0;
  for (int i = 0; i < m->num_states; ++i) {
    const zrt_state_desc &p = m->states[i];
    if (p.kind != ZRT_STATE_PARAM || p.dtype != ZRT_F32 || p.sharded)
      continue;
    const zrt_state_desc *g = findState(m, std::string(p.name) + ".grad");
    if (!g)
      continue;
    float *w = static_cast<float *>(p.data);
    const float *grad = static_cast<const float *>(g->data);
    std::vector<float> saved(w, w + p.numel), d(p.numel);
    double analytic = 0;
    for (int64_t k = 0; k < p.numel; ++k) {
      d[k] = (lcg(rng) & 1) ? 1.0f : -1.0f;
      analytic += static_cast<double>(grad[k]) * d[k];
      sumSquares += static_cast<double>(grad[k]) * grad[k];
    }
    // Central differences at two step sizes: the larger one is exact up to
    // curvature (big for parameters feeding the small residual stream), the
    // smaller one up to the f32 rounding of the loss; the closer one counts.
    double numeric = 0, best = INFINITY;
    for (float h : {1e-2f, 1e-3f}) {
      for (int64_t k = 0; k < p.numel; ++k)
        w[k] = saved[k] + h * d[k];
      double lp = loss();
      for (int64_t k = 0; k < p.numel; ++k)
        w[k] = saved[k] - h * d[k];
      double lm = loss();
      std::memcpy(w, saved.data(), p.numel * sizeof(float));
      double estimate = (lp - lm) / (2.0 * h);
      if (std::fabs(estimate - analytic) < best) {
        best = std::fabs(estimate - analytic);
        numeric = estimate;
      }
    }
    bool ok = best <= 5e-4 + 1e-2 * std::fabs(numeric);
    std::printf("%-28s analytic %+.6e numeric %+.6e %s\n", p.name, analytic,
                numeric, ok ? "ok" : "MISMATCH");
    ++checked;
    failures += !ok;
    paramFailures += !ok;
  }

  float norm = 0;
  if (m->optimizer_step(1e-3f, 1, 1.0f, &norm) != ZRT_OK) {
    std::fprintf(stderr, "gradcheck: optimizer_step failed: %s\n",
                 zrt_last_error());
    return 2;
  }
  double expected = std::sqrt(sumSquares);
  bool normOk = std::fabs(norm - expected) <= 1e-4 * expected + 1e-7;
  std::printf("grad norm %.6e expected %.6e %s\n", norm, expected,
              normOk ? "ok" : "MISMATCH");
  failures += !normOk;
  bool zeroed = true;
  for (int i = 0; i < m->num_states; ++i)
    if (m->states[i].kind == ZRT_STATE_GRAD && m->states[i].dtype == ZRT_F32)
      for (int64_t k = 0; k < m->states[i].numel; ++k)
        zeroed &= static_cast<const float *>(m->states[i].data)[k] == 0.0f;
  std::printf("gradients zeroed %s\n", zeroed ? "ok" : "MISMATCH");
  failures += !zeroed;

  if (m->last_logits) {
    std::vector<float> logits(m->batch * m->padded_vocab, NAN);
    bool finite = m->last_logits(ids.data(), logits.data()) == ZRT_OK;
    for (float v : logits)
      finite &= std::isfinite(v);
    std::printf("last_logits %s\n", finite ? "ok" : "MISMATCH");
    failures += !finite;
  }

  std::printf("gradcheck: %d/%d parameters ok\n", checked - paramFailures,
              checked);
  m->destroy();
  zrt_finalize();
  return failures ? 1 : 0;
}
