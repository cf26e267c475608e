#ifndef DEMI_TESTS_GRADIENT_CHECKER_HPP_
#define DEMI_TESTS_GRADIENT_CHECKER_HPP_

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "demi/blob.hpp"
#include "demi/layer.hpp"
#include "demi/util/math.hpp"

namespace demi {

/// @brief Central-difference gradient check for a layer.
///
/// The objective is L = sum_i w_i * top_i over every top, with fixed random
/// weights w (for a scalar loss top, just its value times w). The analytic
/// gradient comes from Backward with top diffs = w; the numeric one from
/// (L(x + h) - L(x - h)) / 2h for every element x of every checked bottom and
/// param. They must agree within `threshold` relative to max(|a|, |n|, 1).
/// Elements within `kink_range` of `kink` (ReLU's 0, max pooling ties) are
/// skipped because the objective is not differentiable there. The layer's
/// random stream is reseeded before each Forward, so layers like Dropout see
/// the same mask in every evaluation.
class GradientChecker {
 public:
  GradientChecker(float stepsize, float threshold, uint32_t seed = 1701, float kink = 0.0f,
                  float kink_range = -1.0f)
      : stepsize_(stepsize),
        threshold_(threshold),
        seed_(seed),
        kink_(kink),
        kink_range_(kink_range) {}

  /// Checks every bottom (or only `check_bottom` when >= 0) and every param.
  void CheckGradient(Layer* layer, const std::vector<Blob*>& bottom, const std::vector<Blob*>& top,
                     int check_bottom = -1) {
    layer->SetUp(bottom, top);
    CheckGradientSetUp(layer, bottom, top, check_bottom, true);
  }

  /// Same, but checks the bottoms only (params are left out).
  void CheckGradientBottomsOnly(Layer* layer, const std::vector<Blob*>& bottom,
                                const std::vector<Blob*>& top, int check_bottom = -1) {
    layer->SetUp(bottom, top);
    CheckGradientSetUp(layer, bottom, top, check_bottom, false);
  }

 private:
  void CheckGradientSetUp(Layer* layer, const std::vector<Blob*>& bottom,
                          const std::vector<Blob*>& top, int check_bottom, bool check_params) {
    std::vector<Blob*> checked;
    std::vector<bool> propagate_down(bottom.size(), check_bottom < 0);
    for (size_t i = 0; i < bottom.size(); ++i) {
      if (check_bottom < 0 || static_cast<int>(i) == check_bottom) {
        checked.push_back(bottom[i]);
        propagate_down[i] = true;
      }
    }
    if (check_params) {
      for (auto& param : layer->blobs()) checked.push_back(param.get());
    }
    ASSERT_FALSE(checked.empty()) << "nothing to check";

    // Analytic gradients.
    Forward(layer, bottom, top);
    InitTopWeights(top);
    for (auto& param : layer->blobs()) Set(param->count(), 0.0f, param->mutable_cpu_diff());
    for (Blob* blob : checked) Set(blob->count(), 0.0f, blob->mutable_cpu_diff());
    SetTopDiffs(top);
    layer->Backward(top, propagate_down, bottom);
    std::vector<std::vector<float>> analytic;
    for (Blob* blob : checked) {
      analytic.emplace_back(blob->cpu_diff(), blob->cpu_diff() + blob->count());
    }

    // Numeric gradients, element by element.
    for (size_t b = 0; b < checked.size(); ++b) {
      Blob* blob = checked[b];
      for (int64_t i = 0; i < blob->count(); ++i) {
        const float original = blob->cpu_data()[i];
        if (kink_range_ >= 0 && std::fabs(original - kink_) < kink_range_) continue;
        blob->mutable_cpu_data()[i] = original + stepsize_;
        const double plus = Objective(layer, bottom, top);
        blob->mutable_cpu_data()[i] = original - stepsize_;
        const double minus = Objective(layer, bottom, top);
        blob->mutable_cpu_data()[i] = original;
        const double numeric = (plus - minus) / (2.0 * stepsize_);
        const double computed = analytic[b][i];
        const double scale = std::max({std::fabs(computed), std::fabs(numeric), 1.0});
        EXPECT_NEAR(computed, numeric, threshold_ * scale)
            << layer->type() << " layer: checked blob " << b << " element " << i << " (analytic "
            << computed << ", numeric " << numeric << ")";
      }
    }
  }

  void Forward(Layer* layer, const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
    layer->SeedRng(seed_);
    layer->Forward(bottom, top);
  }

  void InitTopWeights(const std::vector<Blob*>& top) {
    RandomEngine engine(seed_ + 1);
    weights_.clear();
    for (Blob* blob : top) {
      std::vector<float> w(static_cast<size_t>(blob->count()));
      if (blob->count() == 1) {
        w[0] = 1.0f;
      } else {
        RngUniform(blob->count(), -1.0f, 1.0f, w.data(), &engine);
      }
      weights_.push_back(std::move(w));
    }
  }

  void SetTopDiffs(const std::vector<Blob*>& top) {
    for (size_t t = 0; t < top.size(); ++t) {
      Copy(top[t]->count(), weights_[t].data(), top[t]->mutable_cpu_diff());
    }
  }

  double Objective(Layer* layer, const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
    Forward(layer, bottom, top);
    double objective = 0;
    for (size_t t = 0; t < top.size(); ++t) {
      const float* data = top[t]->cpu_data();
      for (int64_t i = 0; i < top[t]->count(); ++i) objective += double(weights_[t][i]) * data[i];
    }
    return objective;
  }

  float stepsize_;
  float threshold_;
  uint32_t seed_;
  float kink_;
  float kink_range_;
  std::vector<std::vector<float>> weights_;
};

}  // namespace demi

#endif  // DEMI_TESTS_GRADIENT_CHECKER_HPP_
