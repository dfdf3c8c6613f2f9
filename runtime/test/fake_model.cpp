//===- fake_model.cpp - A fake zrt_model_desc for the driver tests --------===//
//
// A bigram language model: the only parameter is a table [V, V] f32 whose row
// ids[i] are the logits of token i+1 (V = 256, byte-level). It follows the
// zrt/model.h contract like generated code would, as a small ZeRO stage-1
// program:
//   * forward_backward: logits = table[ids], mean cross-entropy over this
//     rank's B*T tokens, dlogits scattered into a [V, V] micro-gradient that
//     is all-reduced (ZRT_AVG) and added to the full gradient accumulator;
//   * optimizer_step: global gradient norm (the gradient is replicated),
//     clipping at 1.0, AdamW on this rank's shard of the flat parameter with
//     shard-sized moments, then an in-place all-gather of the parameter;
//   * last_logits: row ids[b, T-1] of the table; the padding columns
//     [V, padded_vocab) hold a large value, so a driver that samples beyond
//     `vocab` columns would be caught;
//   * param_infos: "table" [V, V] f32 (for --export / --import).
// Because the micro-gradient is averaged over ranks and every rank holds the
// same number of tokens, N ranks with per-rank batch B/N compute the same
// global-mean loss and update as one rank with batch B (up to f32 rounding).
//
// Compile definitions: ZRT_FAKE_WORLD_SIZE (default 1), ZRT_FAKE_BATCH
// (per-rank micro-batch, default 4), ZRT_FAKE_SEQ (default 16).
//
//===----------------------------------------------------------------------===//

#include "zrt/model.h"
#include "zrt/zrt.h"

#include <cmath>
#include <cstdlib>

#ifndef ZRT_FAKE_WORLD_SIZE
#define ZRT_FAKE_WORLD_SIZE 1
#endif
#ifndef ZRT_FAKE_BATCH
#define ZRT_FAKE_BATCH 4
#endif
#ifndef ZRT_FAKE_SEQ
#define ZRT_FAKE_SEQ 16
#endif

namespace {

constexpr int kWorld = ZRT_FAKE_WORLD_SIZE;
constexpr int64_t kB = ZRT_FAKE_BATCH, kT = ZRT_FAKE_SEQ;
constexpr int64_t kV = 256, kVp = 320;
constexpr int64_t kP = kV * kV;     // parameters
constexpr int64_t kS = kP / kWorld; // shard
static_assert(kP % kWorld == 0, "no shard padding in the fake model");
constexpr int64_t kRows = kB * kT;
constexpr float kPadLogit = 100.0f;

zrt_arena arenas[5] = {};
float *table, *grad, *expAvg, *expAvgSq, *logits, *dlogits, *micro;

zrt_state_desc states[4] = {
    {"table", ZRT_STATE_PARAM, ZRT_F32, kP, 0, -1, nullptr},
    {"table.grad", ZRT_STATE_GRAD, ZRT_F32, kP, 0, -1, nullptr},
    {"flat.exp_avg", ZRT_STATE_EXP_AVG, ZRT_F32, kS, 1, 0, nullptr},
    {"flat.exp_avg_sq", ZRT_STATE_EXP_AVG_SQ, ZRT_F32, kS, 1, 0, nullptr},
};
const char *const kMembers[] = {"table"};
const int64_t kOffsets[] = {0};
const int64_t kNumels[] = {kP};
const uint8_t kDecay[] = {1};
const zrt_group_desc groups[1] = {
    {"flat", 1, kMembers, kOffsets, kNumels, kDecay, kP, kS}};
const int64_t kTableShape[] = {kV, kV};
const zrt_param_info params[1] = {{"table", ZRT_F32, 2, kTableShape}};

void destroy() {
  for (zrt_arena &a : arenas) {
    zrt_arena_destroy(a);
    a = nullptr;
  }
}

int init(uint64_t seed) {
  const int64_t bytes[5] = {kP * 4, kP * 4, 2 * kS * 4, 2 * kRows * kV * 4,
                            kP * 4};
  const int kinds[5] = {ZRT_MEM_PARAMETERS, ZRT_MEM_GRADIENTS, ZRT_MEM_MOMENTS,
                        ZRT_MEM_ACTIVATIONS, ZRT_MEM_TEMPORARIES};
  for (int i = 0; i < 5; ++i)
    if (int st = zrt_arena_create(bytes[i], kinds[i], &arenas[i])) {
      destroy();
      return st;
    }
  table = static_cast<float *>(zrt_arena_base(arenas[0]));
  grad = static_cast<float *>(zrt_arena_base(arenas[1]));
  expAvg = static_cast<float *>(zrt_arena_base(arenas[2]));
  expAvgSq = expAvg + kS;
  logits = static_cast<float *>(zrt_arena_base(arenas[3]));
  dlogits = logits + kRows * kV;
  micro = static_cast<float *>(zrt_arena_base(arenas[4]));
  states[0].data = table;
  states[1].data = grad;
  states[2].data = expAvg;
  states[3].data = expAvgSq;
  // Arenas are zero-filled: gradients and moments start at 0.
  return zrt_init_normal(table, kP, 0.0f, 0.02f, seed, 0);
}

int forward(const int32_t *ids, const int32_t *targets, float *loss) {
  if (int st = zrt_embedding(table, ids, logits, kRows, kV, kV))
    return st;
  return zrt_cross_entropy(logits, targets, loss, kRows, kV,
                           ZRT_IGNORE_INDEX_DEFAULT);
}

/// Test hooks (non-finite training), each acting on the last rank only:
///   ZRT_FAKE_NAN_LOSS_CALL=n: the n-th forward_backward (from 1) reports a
///     NaN loss;
///   ZRT_FAKE_NAN_GRAD_STEP=S: optimizer_step S reports a NaN gradient norm
///     (the gradient is poisoned before the update);
///   ZRT_FAKE_POISON_STEP=S: optimizer_step S writes a NaN into the weights
///     after the update but reports a finite norm.
int64_t envStep(const char *name) {
  const char *v = std::getenv(name);
  return v && zrt_rank() == kWorld - 1 ? std::atoll(v) : -1;
}
int64_t fbCalls = 0;

int forwardBackward(const int32_t *ids, const int32_t *targets, float *loss) {
  if (int st = forward(ids, targets, loss))
    return st;
  if (++fbCalls == envStep("ZRT_FAKE_NAN_LOSS_CALL"))
    *loss = std::nanf("");
  if (int st = zrt_cross_entropy_backward(logits, targets, 1.0f, dlogits, kRows,
                                          kV, ZRT_IGNORE_INDEX_DEFAULT))
    return st;
  if (int st = zrt_embedding_backward(dlogits, ids, micro, kRows, kV, kV))
    return st;
  if (int st = zrt_all_reduce(micro, micro, kP, ZRT_F32, ZRT_AVG))
    return st;
  return zrt_axpy(1.0f, micro, grad, kP);
}

int optimizerStep(float lr, int64_t step, float gradScale, float *gradNorm) {
  // Test hook: ZRT_FAKE_FAIL_STEP=S makes the last rank fail at step S (the
  // others go on into the all-gather below).
  if (const char *fail = std::getenv("ZRT_FAKE_FAIL_STEP"))
    if (std::atoll(fail) == step && zrt_rank() == kWorld - 1)
      return ZRT_ERR_INVALID_ARGUMENT;
  if (step == envStep("ZRT_FAKE_NAN_GRAD_STEP"))
    grad[0] = std::nanf("");
  float sumSq = 0.0f;
  if (int st = zrt_sum_squares(grad, kP, &sumSq))
    return st;
  const float norm = std::sqrt(sumSq) * gradScale;
  const float clip = zrt_clip_coef(norm, 1.0f);
  const int64_t off = static_cast<int64_t>(zrt_rank()) * kS;
  if (int st = zrt_adamw_step(table + off, expAvg, expAvgSq, grad + off,
                              nullptr, nullptr, kS, lr, 0.9, 0.95, 1e-8, 0.0,
                              gradScale * clip, step))
    return st;
  if (int st = zrt_all_gather(table + off, table, kS, ZRT_F32))
    return st;
  *gradNorm = norm;
  if (step == envStep("ZRT_FAKE_POISON_STEP"))
    table[kP - 1] = std::nanf("");
  return zrt_fill(grad, 0.0f, kP);
}

int lastLogits(const int32_t *ids, float *out) {
  for (int64_t b = 0; b < kB; ++b) {
    const int32_t id = ids[b * kT + kT - 1];
    if (id < 0 || id >= kV)
      return ZRT_ERR_OUT_OF_RANGE;
    if (int st = zrt_copy(table + id * kV, out + b * kVp, kV))
      return st;
    if (int st = zrt_fill(out + b * kVp + kV, kPadLogit, kVp - kV))
      return st;
  }
  return ZRT_OK;
}

zrt_model_desc makeDesc() {
  zrt_model_desc d = {};
  d.abi_version = ZRT_MODEL_ABI_VERSION;
  d.name = "fake-bigram";
  d.world_size = kWorld;
  d.stage = 1;
  d.batch = kB;
  d.seq = kT;
  d.vocab = kV;
  d.padded_vocab = kVp;
  d.num_params = kP;
  d.num_states = 4;
  d.states = states;
  d.num_groups = 1;
  d.groups = groups;
  d.plan.state_bytes[ZRT_STATE_PARAM] = kP * 4;
  d.plan.state_bytes[ZRT_STATE_GRAD] = kP * 4;
  d.plan.state_bytes[ZRT_STATE_EXP_AVG] = kS * 4;
  d.plan.state_bytes[ZRT_STATE_EXP_AVG_SQ] = kS * 4;
  d.plan.padding_bytes = 0;
  d.plan.comm_bytes_micro[ZRT_COLL_ALL_REDUCE] =
      2 * kP * 4 * (kWorld - 1) / kWorld;
  d.plan.comm_bytes_step[ZRT_COLL_ALL_GATHER] = kS * (kWorld - 1) * 4;
  // Test hook: ZRT_FAKE_PLAN_BYTES=B claims B bytes of planned activations
  // (the driver checks the plan against the free memory before init).
  if (const char *b = std::getenv("ZRT_FAKE_PLAN_BYTES"))
    d.plan.arena_bytes[ZRT_MEM_ACTIVATIONS] = std::atoll(b);
  d.init = init;
  d.forward = forward;
  d.forward_backward = forwardBackward;
  d.optimizer_step = optimizerStep;
  d.last_logits = lastLogits;
  d.destroy = destroy;
  d.num_param_infos = 1;
  d.param_infos = params;
  return d;
}

const zrt_model_desc kDesc = makeDesc();

} // namespace

extern "C" const zrt_model_desc *zrt_model_get(void) { return &kDesc; }

int main(int argc, char **argv) {
  return zrt_train_main(argc, argv, zrt_model_get());
}
