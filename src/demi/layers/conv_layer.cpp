#include "demi/layers/conv_layer.hpp"

#include "demi/filler.hpp"
#include "demi/layer_registry.hpp"
#include "demi/util/math.hpp"

namespace demi {

namespace {

struct SpatialPair {
  int64_t h, w;
};

// Reads one of Caffe's 2-D size settings: the repeated field `field`
// (0 values: `fallback`, 1: both dims, 2: h then w) or, when `has_hw`, the
// separate `prefix`_h and `prefix`_w. A negative fallback means the setting
// is required.
SpatialPair ReadSpatial(const std::string& layer, const char* field, const char* prefix,
                        const google::protobuf::RepeatedField<uint32_t>& values, bool has_hw,
                        uint32_t h, uint32_t w, int64_t fallback) {
  if (has_hw) {
    DEMI_CHECK(values.empty(), "Convolution layer '", layer, "' sets both ", field, " and ", prefix,
               "_h/", prefix, "_w; give one or the other");
    return {h, w};
  }
  DEMI_CHECK(values.size() <= 2, "Convolution layer '", layer, "' gives ", values.size(),
             " values of ", field, "; it takes 1 (both dims) or 2 (h, w) for 2-D images");
  if (values.empty()) {
    DEMI_CHECK(fallback >= 0, "Convolution layer '", layer, "' needs ", field, " or ", prefix,
               "_h and ", prefix, "_w");
    return {fallback, fallback};
  }
  return {values.Get(0), values.Get(values.size() == 2 ? 1 : 0)};
}

}  // namespace

void ConvolutionLayer::LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const ConvolutionParameter& param = layer_param_.convolution_param();
  const std::string& name = layer_param_.name();
  DEMI_CHECK(param.axis() == 1, "Convolution layer '", name, "' has axis ", param.axis(),
             "; only axis 1 (N x C x H x W images) is supported");
  DEMI_CHECK(bottom[0]->num_axes() == 4, "Convolution layer '", name,
             "' needs 4-D N x C x H x W bottoms, got shape ", bottom[0]->shape_string());
  const SpatialPair kernel = ReadSpatial(name, "kernel_size", "kernel", param.kernel_size(),
                                         param.has_kernel_h() || param.has_kernel_w(),
                                         param.kernel_h(), param.kernel_w(), -1);
  const SpatialPair pad =
      ReadSpatial(name, "pad", "pad", param.pad(), param.has_pad_h() || param.has_pad_w(),
                  param.pad_h(), param.pad_w(), 0);
  const SpatialPair stride = ReadSpatial(name, "stride", "stride", param.stride(),
                                         param.has_stride_h() || param.has_stride_w(),
                                         param.stride_h(), param.stride_w(), 1);
  const SpatialPair dilation =
      ReadSpatial(name, "dilation", "dilation", param.dilation(), false, 0, 0, 1);
  DEMI_CHECK(kernel.h > 0 && kernel.w > 0, "Convolution layer '", name,
             "' needs a non-zero kernel, got ", kernel.h, " x ", kernel.w);
  DEMI_CHECK(stride.h > 0 && stride.w > 0, "Convolution layer '", name,
             "' needs a non-zero stride, got ", stride.h, " x ", stride.w);
  DEMI_CHECK(dilation.h > 0 && dilation.w > 0, "Convolution layer '", name,
             "' needs a non-zero dilation, got ", dilation.h, " x ", dilation.w);

  num_output_ = param.num_output();
  group_ = param.group();
  bias_term_ = param.bias_term();
  const int64_t channels = bottom[0]->shape(1);
  DEMI_CHECK(num_output_ > 0, "Convolution layer '", name, "' needs num_output > 0");
  DEMI_CHECK(group_ > 0 && channels % group_ == 0 && num_output_ % group_ == 0,
             "Convolution layer '", name, "' has group ", group_, ", which must divide both the ",
             channels, " input channels of bottom shape ", bottom[0]->shape_string(),
             " and num_output ", num_output_);
  geometry_.channels = channels;
  geometry_.kernel_h = kernel.h;
  geometry_.kernel_w = kernel.w;
  geometry_.pad_h = pad.h;
  geometry_.pad_w = pad.w;
  geometry_.stride_h = stride.h;
  geometry_.stride_w = stride.w;
  geometry_.dilation_h = dilation.h;
  geometry_.dilation_w = dilation.w;
  is_1x1_ =
      kernel.h == 1 && kernel.w == 1 && stride.h == 1 && stride.w == 1 && pad.h == 0 && pad.w == 0;
  kernel_dim_ = channels / group_ * kernel.h * kernel.w;
  RegisterBuffer("columns", &columns_, BufferLifetime::kScratch);

  const std::vector<int64_t> weight_shape{num_output_, channels / group_, kernel.h, kernel.w};
  if (!blobs_.empty()) {
    DEMI_CHECK(blobs_.size() == (bias_term_ ? 2u : 1u), "Convolution layer '", name, "' has ",
               blobs_.size(), " preloaded param blobs; expected ", bias_term_ ? 2 : 1);
    DEMI_CHECK(blobs_[0]->shape() == weight_shape, "Convolution layer '", name,
               "' expects weights of shape ", ShapeString(weight_shape), ", got ",
               blobs_[0]->shape_string());
    DEMI_CHECK(!bias_term_ || blobs_[1]->shape() == std::vector<int64_t>{num_output_},
               "Convolution layer '", name, "' expects a bias of shape ",
               ShapeString({num_output_}), ", got ", blobs_[1]->shape_string());
    LOG(INFO) << "Skipping parameter initialization of " << name;
  } else {
    blobs_.push_back(std::make_shared<Blob>(weight_shape));
    GetFiller(param.weight_filler())->Fill(blobs_[0].get(), rng());
    if (bias_term_) {
      blobs_.push_back(std::make_shared<Blob>(std::vector<int64_t>{num_output_}));
      GetFiller(param.bias_filler())->Fill(blobs_[1].get(), rng());
    }
  }
  param_propagate_down_.assign(blobs_.size(), true);
}

void ConvolutionLayer::Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const std::string& name = layer_param_.name();
  DEMI_CHECK(bottom[0]->num_axes() == 4 && bottom[0]->shape(1) == geometry_.channels,
             "Convolution layer '", name, "' was set up for ", geometry_.channels,
             " input channels, but bottom shape is ", bottom[0]->shape_string());
  for (size_t i = 1; i < bottom.size(); ++i) {
    DEMI_CHECK(bottom[i]->shape() == bottom[0]->shape(), "Convolution layer '", name,
               "' needs bottoms of one shape, but bottom 0 is ", bottom[0]->shape_string(),
               " and bottom ", i, " is ", bottom[i]->shape_string());
  }
  num_ = bottom[0]->shape(0);
  geometry_.height = bottom[0]->shape(2);
  geometry_.width = bottom[0]->shape(3);
  const int64_t extent_h = geometry_.dilation_h * (geometry_.kernel_h - 1) + 1;
  const int64_t extent_w = geometry_.dilation_w * (geometry_.kernel_w - 1) + 1;
  DEMI_CHECK(geometry_.height + 2 * geometry_.pad_h >= extent_h &&
                 geometry_.width + 2 * geometry_.pad_w >= extent_w,
             "Convolution layer '", name, "': the dilated kernel (", extent_h, " x ", extent_w,
             ") does not fit in bottom shape ", bottom[0]->shape_string(), " padded by ",
             geometry_.pad_h, " x ", geometry_.pad_w);
  const int64_t out_h = geometry_.output_h();
  const int64_t out_w = geometry_.output_w();
  out_spatial_ = out_h * out_w;
  for (Blob* blob : top) blob->Reshape(num_, num_output_, out_h, out_w);
  if (is_1x1_) {
    columns_.Reshape(std::vector<int64_t>{0});
  } else {
    columns_.Reshape(std::vector<int64_t>{kernel_dim_ * group_, out_spatial_});
  }
}

void ConvolutionLayer::Forward_cpu(const std::vector<Blob*>& bottom,
                                   const std::vector<Blob*>& top) {
  const int64_t in_size = bottom[0]->count(1);
  const int64_t out_size = top[0]->count(1);
  const int64_t out_per_group = num_output_ / group_;
  const int64_t weights_per_group = out_per_group * kernel_dim_;
  const float* w = blobs_[0]->cpu_data();
  for (size_t i = 0; i < bottom.size(); ++i) {
    const float* x = bottom[i]->cpu_data();
    float* y = top[i]->mutable_cpu_data();
    for (int64_t n = 0; n < num_; ++n) {
      const float* col = x + n * in_size;
      if (!is_1x1_) {
        Im2col(col, geometry_, columns_.mutable_cpu_data());
        col = columns_.cpu_data();
      }
      float* y_n = y + n * out_size;
      for (int64_t g = 0; g < group_; ++g) {
        Gemm(false, false, out_per_group, out_spatial_, kernel_dim_, 1.0f,
             w + g * weights_per_group, col + g * kernel_dim_ * out_spatial_, 0.0f,
             y_n + g * out_per_group * out_spatial_);
      }
      if (bias_term_) {
        const float* b = blobs_[1]->cpu_data();
        for (int64_t m = 0; m < num_output_; ++m) {
          AddScalar(out_spatial_, b[m], y_n + m * out_spatial_);
        }
      }
    }
  }
}

void ConvolutionLayer::Backward_cpu(const std::vector<Blob*>& top,
                                    const std::vector<bool>& propagate_down,
                                    const std::vector<Blob*>& bottom) {
  const int64_t in_size = bottom[0]->count(1);
  const int64_t out_size = top[0]->count(1);
  const int64_t out_per_group = num_output_ / group_;
  const int64_t weights_per_group = out_per_group * kernel_dim_;
  const int64_t col_per_group = kernel_dim_ * out_spatial_;
  const float* w = blobs_[0]->cpu_data();
  const bool weight_grad = param_propagate_down(0);
  const bool bias_grad = bias_term_ && param_propagate_down(1);
  for (size_t i = 0; i < top.size(); ++i) {
    const float* dy = top[i]->cpu_diff();
    if (bias_grad) {
      float* db = blobs_[1]->mutable_cpu_diff();
      for (int64_t n = 0; n < num_; ++n) {
        const float* dy_n = dy + n * out_size;
        for (int64_t m = 0; m < num_output_; ++m) {
          double sum = 0;
          for (int64_t s = 0; s < out_spatial_; ++s) sum += dy_n[m * out_spatial_ + s];
          db[m] += static_cast<float>(sum);
        }
      }
    }
    if (!weight_grad && !propagate_down[i]) continue;
    const float* x = bottom[i]->cpu_data();
    for (int64_t n = 0; n < num_; ++n) {
      const float* dy_n = dy + n * out_size;
      if (weight_grad) {
        // dW_g += dy_g (out_per_group x S) * columns_g^T (S x kernel_dim).
        const float* col = x + n * in_size;
        if (!is_1x1_) {
          Im2col(col, geometry_, columns_.mutable_cpu_data());
          col = columns_.cpu_data();
        }
        float* dw = blobs_[0]->mutable_cpu_diff();
        for (int64_t g = 0; g < group_; ++g) {
          Gemm(false, true, out_per_group, kernel_dim_, out_spatial_, 1.0f,
               dy_n + g * out_per_group * out_spatial_, col + g * col_per_group, 1.0f,
               dw + g * weights_per_group);
        }
      }
      if (propagate_down[i]) {
        // Column gradients W_g^T dy_g, folded back into the image by Col2im.
        float* dx_n = bottom[i]->mutable_cpu_diff() + n * in_size;
        float* dcol = is_1x1_ ? dx_n : columns_.mutable_cpu_data();
        for (int64_t g = 0; g < group_; ++g) {
          Gemm(true, false, kernel_dim_, out_spatial_, out_per_group, 1.0f,
               w + g * weights_per_group, dy_n + g * out_per_group * out_spatial_, 0.0f,
               dcol + g * col_per_group);
        }
        if (!is_1x1_) Col2im(dcol, geometry_, dx_n);
      }
    }
  }
}

DEMI_REGISTER_LAYER(Convolution);

}  // namespace demi
