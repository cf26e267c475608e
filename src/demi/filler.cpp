#include "demi/filler.hpp"

#include <cmath>

#include "demi/util/math.hpp"

namespace demi {

namespace {

class ConstantFiller : public Filler {
 public:
  using Filler::Filler;
  void Fill(Blob* blob, RandomEngine*) override {
    Set(blob->count(), param_.value(), blob->mutable_cpu_data());
  }
};

class UniformFiller : public Filler {
 public:
  using Filler::Filler;
  void Fill(Blob* blob, RandomEngine* engine) override {
    // Also false for a NaN bound; RngUniform would abort on it.
    DEMI_CHECK(param_.min() <= param_.max(), "uniform filler needs min <= max, got min ",
               param_.min(), " and max ", param_.max());
    RngUniform(blob->count(), param_.min(), param_.max(), blob->mutable_cpu_data(), engine);
  }
};

/// Gaussian; with sparse = s, each output keeps a weight with probability
/// s / fan_in (so about s non-zero inputs per output), as in Caffe.
class GaussianFiller : public Filler {
 public:
  using Filler::Filler;
  void Fill(Blob* blob, RandomEngine* engine) override {
    DEMI_CHECK(param_.std() > 0, "gaussian filler needs std > 0, got ", param_.std());
    float* data = blob->mutable_cpu_data();
    RngGaussian(blob->count(), param_.mean(), param_.std(), data, engine);
    if (param_.sparse() < 0 || blob->count() == 0) return;
    DEMI_CHECK(blob->num_axes() >= 1, "sparse gaussian filler needs a blob with axes");
    const int64_t num_outputs = blob->shape(0);
    const float keep = static_cast<float>(param_.sparse()) * num_outputs / blob->count();
    std::vector<uint32_t> mask(static_cast<size_t>(blob->count()));
    RngBernoulli(blob->count(), std::min(keep, 1.0f), mask.data(), engine);
    for (int64_t i = 0; i < blob->count(); ++i) data[i] *= static_cast<float>(mask[i]);
  }
};

/// Uniform in [0, 1), then each row (first-axis slice) normalized to sum 1.
class PositiveUnitballFiller : public Filler {
 public:
  using Filler::Filler;
  void Fill(Blob* blob, RandomEngine* engine) override {
    if (blob->count() == 0) return;
    DEMI_CHECK(blob->num_axes() >= 1, "positive_unitball filler needs a blob with axes");
    float* data = blob->mutable_cpu_data();
    RngUniform(blob->count(), 0.0f, 1.0f, data, engine);
    const int64_t num = blob->shape(0);
    const int64_t dim = blob->count() / num;
    for (int64_t i = 0; i < num; ++i) {
      double sum = 0;
      for (int64_t j = 0; j < dim; ++j) sum += data[i * dim + j];
      for (int64_t j = 0; j < dim; ++j) data[i * dim + j] /= static_cast<float>(sum);
    }
  }
};

double FanNorm(const Blob& blob, FillerParameter::VarianceNorm norm) {
  DEMI_CHECK(blob.num_axes() >= 2 && blob.count() > 0,
             "xavier and msra fillers need a blob of at least 2 axes, got ", blob.shape_string());
  const double fan_in = static_cast<double>(blob.count()) / blob.shape(0);
  const double fan_out = static_cast<double>(blob.count()) / blob.shape(1);
  switch (norm) {
    case FillerParameter::FAN_OUT:
      return fan_out;
    case FillerParameter::AVERAGE:
      return (fan_in + fan_out) / 2;
    default:
      return fan_in;
  }
}

/// Uniform in [-a, a] with a = sqrt(3 / n).
class XavierFiller : public Filler {
 public:
  using Filler::Filler;
  void Fill(Blob* blob, RandomEngine* engine) override {
    const float scale = static_cast<float>(std::sqrt(3.0 / FanNorm(*blob, param_.variance_norm())));
    RngUniform(blob->count(), -scale, scale, blob->mutable_cpu_data(), engine);
  }
};

/// Gaussian with std = sqrt(2 / n) (He et al.).
class MSRAFiller : public Filler {
 public:
  using Filler::Filler;
  void Fill(Blob* blob, RandomEngine* engine) override {
    const float stddev =
        static_cast<float>(std::sqrt(2.0 / FanNorm(*blob, param_.variance_norm())));
    RngGaussian(blob->count(), 0.0f, stddev, blob->mutable_cpu_data(), engine);
  }
};

/// Bilinear upsampling kernel for deconvolution weights (square kernels).
class BilinearFiller : public Filler {
 public:
  using Filler::Filler;
  void Fill(Blob* blob, RandomEngine*) override {
    DEMI_CHECK(blob->num_axes() == 4, "bilinear filler needs a 4-D blob, got ",
               blob->shape_string());
    DEMI_CHECK(blob->width() == blob->height(), "bilinear filler needs a square kernel, got ",
               blob->shape_string());
    // Weights of a bilinear interpolation with upsampling factor f = ceil(k/2),
    // centred at c (in units of f), identical for every (output, input) pair.
    float* data = blob->mutable_cpu_data();
    const int64_t k = blob->width();
    const int64_t f = (k + 1) / 2;
    const double c = (2.0 * f - 1 - f % 2) / (2.0 * f);
    for (int64_t i = 0; i < blob->count(); ++i) {
      const double x = static_cast<double>(i % k);
      const double y = static_cast<double>((i / k) % k);
      data[i] = static_cast<float>((1 - std::fabs(x / f - c)) * (1 - std::fabs(y / f - c)));
    }
  }
};

}  // namespace

std::unique_ptr<Filler> GetFiller(const FillerParameter& param) {
  const std::string& type = param.type();
  if (type == "constant") return std::make_unique<ConstantFiller>(param);
  if (type == "uniform") return std::make_unique<UniformFiller>(param);
  if (type == "gaussian") return std::make_unique<GaussianFiller>(param);
  if (type == "positive_unitball") return std::make_unique<PositiveUnitballFiller>(param);
  if (type == "xavier") return std::make_unique<XavierFiller>(param);
  if (type == "msra") return std::make_unique<MSRAFiller>(param);
  if (type == "bilinear") return std::make_unique<BilinearFiller>(param);
  ThrowError(StrCat("unknown filler type '", type,
                    "'; known: constant, uniform, gaussian, positive_unitball, xavier, msra, "
                    "bilinear"));
}

}  // namespace demi
