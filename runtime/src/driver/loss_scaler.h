//===- loss_scaler.h - dynamic loss scaling of fp16-mixed training -------===//
//
// The driver's side of fp16-mixed (model.h set_loss_scale): the rule of
// torch.amp.GradScaler (PyTorch 2.x, torch/amp/grad_scaler.py) with its
// defaults:
//
//   init_scale 2^16, growth_factor 2, backoff_factor 0.5, growth_interval
//   2000.
//
// Each step back-propagates loss·S; optimizer_step gets grad_scale =
// 1/(k·S) and skips every update when the gradient norm is not finite
// (train.adamw skip_nonfinite). Then, as GradScaler.update:
//   * norm not finite: the step was skipped; S *= 0.5, the run of good
//     steps restarts at 0;
//   * norm finite: the update was applied; after `growth_interval`
//     consecutive finite steps S *= 2 (and the run restarts at 0).
// The verdict is the same on every rank: the norm is global (a reduction
// over the ranks at every stage: at stage 0 the gradients themselves are
// all-reduced before the norm, at stages 1-3 the shards' sums of squares),
// and the driver's check all-reduces the flag as well.
//
// Differences from GradScaler, on purpose: a scale that would fall below
// kMinScale stops training (GradScaler keeps halving forever: a gradient
// that overflows at S = 2^-24 is not an overflow but a non-finite model);
// AdamW's step count (its bias correction) counts applied updates only,
// as torch.optim.AdamW's state["step"], which a skipped
// GradScaler.step() does not advance.
//
//===----------------------------------------------------------------------===//

#ifndef ZRT_SRC_LOSS_SCALER_H
#define ZRT_SRC_LOSS_SCALER_H

#include <cstdint>

namespace zrt {

class LossScaler {
public:
  static constexpr double kDefaultInitScale = 65536.0; // 2^16
  static constexpr int64_t kDefaultGrowthInterval = 2000;
  static constexpr double kGrowthFactor = 2.0, kBackoffFactor = 0.5;
  /// 2^-24, the smallest f16 subnormal.
  static constexpr double kMinScale = 1.0 / 16777216.0;
  /// Growth stops at 2^100 (S stays a finite f32; GradScaler has no cap).
  static constexpr double kMaxScale = 1267650600228229401496703205376.0;

  LossScaler(double initScale, int64_t growthInterval)
      : scale_(initScale), interval_(growthInterval) {}

  double scale() const { return scale_; }
  int64_t goodSteps() const { return good_; }
  /// Restores a checkpointed state (scale, current run of finite steps).
  void restore(double scale, int64_t goodSteps) {
    scale_ = scale;
    good_ = goodSteps;
  }

  /// What update() did.
  enum class Outcome { Applied, Grew, Skipped, Underflow };

  /// GradScaler.update after one step whose global gradient norm was
  /// finite (`finite`) or not. Underflow: the halved scale would be below
  /// kMinScale (the scale is left as it was).
  Outcome update(bool finite) {
    if (!finite) {
      good_ = 0;
      if (scale_ * kBackoffFactor < kMinScale)
        return Outcome::Underflow;
      scale_ *= kBackoffFactor;
      return Outcome::Skipped;
    }
    if (++good_ < interval_)
      return Outcome::Applied;
    good_ = 0;
    if (scale_ * kGrowthFactor > kMaxScale)
      return Outcome::Applied;
    scale_ *= kGrowthFactor;
    return Outcome::Grew;
  }

private:
  double scale_;
  int64_t interval_;
  int64_t good_ = 0;
};

} // namespace zrt

#endif // ZRT_SRC_LOSS_SCALER_H
