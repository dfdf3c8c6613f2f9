//===- fake_model_s3.cpp - A stage-3, bf16-mixed fake model ---------------===//
//
// The bigram model of fake_model.cpp with a bias, laid out like a ZeRO
// stage-3 program with bf16 mixed precision (zrt/model.h), for the driver's
// --export / --import tests:
//   * parameters "table" [V, V] and "bias" [V] (bf16), members of one flat
//     group "flat" at offsets 0 and V*V, zero-padded to a multiple of the
//     world size (at least one padding element);
//   * states: this rank's slices of the bf16 parameters ("flat.param"), of
//     the f32 master weights ("flat.master"), of the f32 gradient and of the
//     moments; no whole parameter anywhere;
//   * forward: all-gather the parameter shards, widen to f32, logits =
//     table[ids] + bias, mean cross-entropy;
//   * forward_backward: + the flat gradient, reduce-scattered (ZRT_AVG)
//     into the gradient shard;
//   * optimizer_step: global norm (all-reduce of the shard sums of
//     squares), clipping at 1.0, AdamW on the master shard writing the bf16
//     parameter shard.
// It describes its parameters with zrt_model_desc::param_infos (shapes).
//
// Compile definitions: ZRT_FAKE_WORLD_SIZE (default 1), ZRT_FAKE_BATCH
// (per-rank micro-batch, default 4), ZRT_FAKE_SEQ (default 16).
//
//===----------------------------------------------------------------------===//

#include "zrt/model.h"
#include "zrt/zrt.h"

#include <cmath>

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
constexpr int64_t kV = 256, kVp = 256;
constexpr int64_t kTable = kV * kV, kBias = kV;
constexpr int64_t kP = kTable + kBias;                   // parameters
constexpr int64_t kPadded = (kP / kWorld + 1) * kWorld; // >= 1 padding
constexpr int64_t kS = kPadded / kWorld;                 // shard
constexpr int64_t kRows = kB * kT;

zrt_arena arena = nullptr;
zrt_bf16 *paramShard, *fullBf16;
float *master, *gradShard, *expAvg, *expAvgSq, *full, *logits, *dlogits,
    *micro, *scattered;

zrt_state_desc states[5] = {
    {"flat.param", ZRT_STATE_PARAM, ZRT_BF16, kS, 1, 0, nullptr},
    {"flat.master", ZRT_STATE_MASTER, ZRT_F32, kS, 1, 0, nullptr},
    {"flat.grad", ZRT_STATE_GRAD, ZRT_F32, kS, 1, 0, nullptr},
    {"flat.exp_avg", ZRT_STATE_EXP_AVG, ZRT_F32, kS, 1, 0, nullptr},
    {"flat.exp_avg_sq", ZRT_STATE_EXP_AVG_SQ, ZRT_F32, kS, 1, 0, nullptr},
};
const char *const kMembers[] = {"table", "bias"};
const int64_t kOffsets[] = {0, kTable};
const int64_t kNumels[] = {kTable, kBias};
const uint8_t kDecay[] = {1, 0};
const zrt_group_desc groups[1] = {
    {"flat", 2, kMembers, kOffsets, kNumels, kDecay, kPadded, kS}};
const int64_t kTableShape[] = {kV, kV};
const int64_t kBiasShape[] = {kV};
const zrt_param_info params[2] = {{"table", ZRT_BF16, 2, kTableShape},
                                  {"bias", ZRT_BF16, 1, kBiasShape}};

void destroy() {
  zrt_arena_destroy(arena);
  arena = nullptr;
}

int init(uint64_t seed) {
  // One arena: bf16 shard and full copy, then the f32 buffers.
  const int64_t bf16Elems = kS + kPadded;
  const int64_t f32Elems =
      5 * kS + kPadded + 2 * kRows * kVp + kPadded + kS + 2;
  if (int st = zrt_arena_create(bf16Elems * 2 + f32Elems * 4 + 64,
                                ZRT_MEM_PARAMETERS, &arena))
    return st;
  char *base = static_cast<char *>(zrt_arena_base(arena));
  paramShard = reinterpret_cast<zrt_bf16 *>(base);
  fullBf16 = paramShard + kS;
  float *f = reinterpret_cast<float *>(base + ((bf16Elems * 2 + 63) / 64) * 64);
  master = f;
  gradShard = master + kS;
  expAvg = gradShard + kS;
  expAvgSq = expAvg + kS;
  scattered = expAvgSq + kS;
  full = scattered + kS;
  logits = full + kPadded;
  dlogits = logits + kRows * kVp;
  micro = dlogits + kRows * kVp;
  states[0].data = paramShard;
  states[1].data = master;
  states[2].data = gradShard;
  states[3].data = expAvg;
  states[4].data = expAvgSq;
  // Shard-invariant init: element e of the flat buffer is table element e
  // (normal, 0.02) or bias element e - kTable (0.1 + normal 0.01); padding 0.
  const int64_t own = static_cast<int64_t>(zrt_rank()) * kS;
  for (int64_t i = 0; i < kS; ++i) {
    const int64_t e = own + i;
    float x = 0.0f;
    if (e < kTable)
      zrt_init_normal(&x, 1, 0.0f, 0.02f, seed, e);
    else if (e < kP)
      zrt_init_normal(&x, 1, 0.1f, 0.01f, seed ^ 0xB1A5, e - kTable);
    master[i] = x;
  }
  return zrt_cast_f32_to_bf16(master, paramShard, kS);
}

// full (f32) = the whole flat parameter.
int gather() {
  if (int st = zrt_all_gather(paramShard, fullBf16, kS, ZRT_BF16))
    return st;
  return zrt_cast_bf16_to_f32(fullBf16, full, kPadded);
}

int logitsOf(const int32_t *ids, int64_t rows) {
  if (int st = zrt_embedding(full, ids, logits, rows, kV, kV))
    return st;
  for (int64_t r = 0; r < rows; ++r)
    if (int st = zrt_axpy(1.0f, full + kTable, logits + r * kV, kV))
      return st;
  return ZRT_OK;
}

int forward(const int32_t *ids, const int32_t *targets, float *loss) {
  if (int st = gather())
    return st;
  if (int st = logitsOf(ids, kRows))
    return st;
  return zrt_cross_entropy(logits, targets, loss, kRows, kV,
                           ZRT_IGNORE_INDEX_DEFAULT);
}

int forwardBackward(const int32_t *ids, const int32_t *targets, float *loss) {
  if (int st = forward(ids, targets, loss))
    return st;
  if (int st = zrt_cross_entropy_backward(logits, targets, 1.0f, dlogits, kRows,
                                          kV, ZRT_IGNORE_INDEX_DEFAULT))
    return st;
  if (int st = zrt_embedding_backward(dlogits, ids, micro, kRows, kV, kV))
    return st;
  if (int st = zrt_bias_backward(dlogits, micro + kTable, kRows, kV))
    return st;
  if (int st = zrt_fill(micro + kP, 0.0f, kPadded - kP))
    return st;
  if (int st = zrt_reduce_scatter(micro, scattered, kS, ZRT_F32, ZRT_AVG))
    return st;
  return zrt_axpy(1.0f, scattered, gradShard, kS);
}

int optimizerStep(float lr, int64_t step, float gradScale, float *gradNorm) {
  float sumSq = 0.0f;
  if (int st = zrt_sum_squares(gradShard, kS, &sumSq))
    return st;
  if (int st = zrt_all_reduce(&sumSq, &sumSq, 1, ZRT_F32, ZRT_SUM))
    return st;
  const float norm = std::sqrt(sumSq) * gradScale;
  const float clip = zrt_clip_coef(norm, 1.0f);
  if (int st = zrt_adamw_step(master, expAvg, expAvgSq, gradShard, nullptr,
                              paramShard, kS, lr, 0.9, 0.95, 1e-8, 0.0,
                              gradScale * clip, step))
    return st;
  *gradNorm = norm;
  return zrt_fill(gradShard, 0.0f, kS);
}

int lastLogits(const int32_t *ids, float *out) {
  if (int st = gather())
    return st;
  for (int64_t b = 0; b < kB; ++b) {
    const int32_t id = ids[b * kT + kT - 1];
    if (id < 0 || id >= kV)
      return ZRT_ERR_OUT_OF_RANGE;
    if (int st = zrt_add(full + id * kV, full + kTable, out + b * kVp, kV))
      return st;
  }
  return ZRT_OK;
}

zrt_model_desc makeDesc() {
  zrt_model_desc d = {};
  d.abi_version = ZRT_MODEL_ABI_VERSION;
  d.name = "fake-bigram-s3";
  d.world_size = kWorld;
  d.stage = 3;
  d.batch = kB;
  d.seq = kT;
  d.vocab = kV;
  d.padded_vocab = kVp;
  d.num_params = kP;
  d.num_states = 5;
  d.states = states;
  d.num_groups = 1;
  d.groups = groups;
  d.plan.state_bytes[ZRT_STATE_PARAM] = kS * 2;
  d.plan.state_bytes[ZRT_STATE_MASTER] = kS * 4;
  d.plan.state_bytes[ZRT_STATE_GRAD] = kS * 4;
  d.plan.state_bytes[ZRT_STATE_EXP_AVG] = kS * 4;
  d.plan.state_bytes[ZRT_STATE_EXP_AVG_SQ] = kS * 4;
  d.init = init;
  d.forward = forward;
  d.forward_backward = forwardBackward;
  d.optimizer_step = optimizerStep;
  d.last_logits = lastLogits;
  d.destroy = destroy;
  d.num_param_infos = 2;
  d.param_infos = params;
  return d;
}

const zrt_model_desc kDesc = makeDesc();

} // namespace

extern "C" const zrt_model_desc *zrt_model_get(void) { return &kDesc; }

int main(int argc, char **argv) {
  return zrt_train_main(argc, argv, zrt_model_get());
}
