#include "demi/layers/base_conv_layer.hpp"

#include "demi/filler.hpp"
#include "demi/layers/layer_checks.hpp"
#include "demi/util/device_math.hpp"
#include "demi/util/dnnl.hpp"
#include "demi/util/math.hpp"

namespace demi {

namespace {

struct SpatialPair {
  int64_t h, w;
};

// Reads one of Caffe's 2-D size settings: the repeated field `field`
// (0 values: `fallback`, 1: both dims, 2: h then w) or, when `has_hw`, the
// separate `prefix`_h and `prefix`_w. A negative fallback means the setting
// is required. `layer` names the layer in errors ("Convolution layer 'c1'").
SpatialPair ReadSpatial(const std::string& layer, const char* field, const char* prefix,
                        const google::protobuf::RepeatedField<uint32_t>& values, bool has_hw,
                        uint32_t h, uint32_t w, int64_t fallback) {
  if (has_hw) {
    DEMI_CHECK(values.empty(), layer, " sets both ", field, " and ", prefix, "_h/", prefix,
               "_w; give one or the other");
    return {h, w};
  }
  DEMI_CHECK(values.size() <= 2, layer, " gives ", values.size(), " values of ", field,
             "; it takes 1 (both dims) or 2 (h, w) for 2-D images");
  if (values.empty()) {
    DEMI_CHECK(fallback >= 0, layer, " needs ", field, " or ", prefix, "_h and ", prefix, "_w");
    return {fallback, fallback};
  }
  return {values.Get(0), values.Get(values.size() == 2 ? 1 : 0)};
}

std::string LayerLabel(const LayerParameter& param) {
  return StrCat(param.type(), " layer '", param.name(), "'");
}

}  // namespace

ConvGeometry ReadConvGeometry(const LayerParameter& layer_param, const Blob& bottom) {
  const ConvolutionParameter& param = layer_param.convolution_param();
  const std::string label = LayerLabel(layer_param);
  DEMI_CHECK(param.axis() == 1, label, " has axis ", param.axis(),
             "; only axis 1 (N x C x H x W images) is supported");
  DEMI_CHECK(bottom.num_axes() == 4, label, " needs 4-D N x C x H x W bottoms, got shape ",
             bottom.shape_string());
  const SpatialPair kernel = ReadSpatial(label, "kernel_size", "kernel", param.kernel_size(),
                                         param.has_kernel_h() || param.has_kernel_w(),
                                         param.kernel_h(), param.kernel_w(), -1);
  const SpatialPair pad =
      ReadSpatial(label, "pad", "pad", param.pad(), param.has_pad_h() || param.has_pad_w(),
                  param.pad_h(), param.pad_w(), 0);
  const SpatialPair stride = ReadSpatial(label, "stride", "stride", param.stride(),
                                         param.has_stride_h() || param.has_stride_w(),
                                         param.stride_h(), param.stride_w(), 1);
  const SpatialPair dilation =
      ReadSpatial(label, "dilation", "dilation", param.dilation(), false, 0, 0, 1);
  DEMI_CHECK(kernel.h > 0 && kernel.w > 0, label, " needs a non-zero kernel, got ", kernel.h, " x ",
             kernel.w);
  DEMI_CHECK(stride.h > 0 && stride.w > 0, label, " needs a non-zero stride, got ", stride.h, " x ",
             stride.w);
  DEMI_CHECK(dilation.h > 0 && dilation.w > 0, label, " needs a non-zero dilation, got ",
             dilation.h, " x ", dilation.w);
  // channels, height, width (left 0), then the window, in ConvGeometry's order.
  return ConvGeometry{bottom.shape(1), 0,        0,        kernel.h,   kernel.w,  pad.h,
                      pad.w,           stride.h, stride.w, dilation.h, dilation.w};
}

void CheckConvWindowFits(const LayerParameter& param, const ConvGeometry& g, const Blob& bottom) {
  const int64_t extent_h = g.dilation_h * (g.kernel_h - 1) + 1;
  const int64_t extent_w = g.dilation_w * (g.kernel_w - 1) + 1;
  DEMI_CHECK(bottom.shape(2) + 2 * g.pad_h >= extent_h && bottom.shape(3) + 2 * g.pad_w >= extent_w,
             LayerLabel(param), ": the dilated kernel (", extent_h, " x ", extent_w,
             ") does not fit in bottom shape ", bottom.shape_string(), " padded by ", g.pad_h,
             " x ", g.pad_w);
}

void BaseConvolutionLayer::LayerSetUp(const std::vector<Blob*>& bottom,
                                      const std::vector<Blob*>& top) {
  const ConvolutionParameter& param = layer_param_.convolution_param();
  const std::string label = LayerLabel(layer_param_);
  geometry_ = ReadConvGeometry(layer_param_, *bottom[0]);
  num_output_ = param.num_output();
  group_ = param.group();
  bias_term_ = param.bias_term();
  channels_ = bottom[0]->shape(1);
  DEMI_CHECK(num_output_ > 0, label, " needs num_output > 0");
  DEMI_CHECK(group_ > 0 && channels_ % group_ == 0 && num_output_ % group_ == 0, label,
             " has group ", group_, ", which must divide both the ", channels_,
             " input channels of bottom shape ", bottom[0]->shape_string(), " and num_output ",
             num_output_);
  const bool reverse = reverse_dimensions();
  conv_out_channels_ = reverse ? channels_ : num_output_;
  geometry_.channels = reverse ? num_output_ : channels_;
  const ConvGeometry& g = geometry_;
  is_1x1_ = g.kernel_h == 1 && g.kernel_w == 1 && g.stride_h == 1 && g.stride_w == 1 &&
            g.pad_h == 0 && g.pad_w == 0;
  kernel_dim_ = g.channels / group_ * g.kernel_h * g.kernel_w;
  RegisterBuffer("columns", &columns_, BufferLifetime::kScratch);

  const std::vector<int64_t> weight_shape{conv_out_channels_, g.channels / group_, g.kernel_h,
                                          g.kernel_w};
  if (!blobs_.empty()) {
    DEMI_CHECK(blobs_.size() == (bias_term_ ? 2u : 1u), label, " has ", blobs_.size(),
               " preloaded param blobs; expected ", bias_term_ ? 2 : 1);
    DEMI_CHECK(blobs_[0]->shape() == weight_shape, label, " expects weights of shape ",
               ShapeString(weight_shape), ", got ", blobs_[0]->shape_string());
    DEMI_CHECK(!bias_term_ || blobs_[1]->shape() == std::vector<int64_t>{num_output_}, label,
               " expects a bias of shape ", ShapeString({num_output_}), ", got ",
               blobs_[1]->shape_string());
    LOG(INFO) << "Skipping parameter initialization of " << layer_param_.name();
  } else {
    blobs_.push_back(std::make_shared<Blob>(weight_shape));
    GetFiller(param.weight_filler())->Fill(blobs_[0].get(), rng());
    if (bias_term_) {
      blobs_.push_back(std::make_shared<Blob>(std::vector<int64_t>{num_output_}));
      GetFiller(param.bias_filler())->Fill(blobs_[1].get(), rng());
    }
  }
  param_propagate_down_.assign(blobs_.size(), true);
#ifdef USE_CUDNN
  CudnnSetUp();
#endif
  DnnlSetUp();
}

void BaseConvolutionLayer::Reshape(const std::vector<Blob*>& bottom,
                                   const std::vector<Blob*>& top) {
  const std::string label = LayerLabel(layer_param_);
  DEMI_CHECK(bottom[0]->num_axes() == 4 && bottom[0]->shape(1) == channels_, label,
             " was set up for ", channels_, " input channels, but bottom shape is ",
             bottom[0]->shape_string());
  for (size_t i = 1; i < bottom.size(); ++i) {
    DEMI_CHECK(bottom[i]->shape() == bottom[0]->shape(), label,
               " needs bottoms of one shape, but bottom 0 is ", bottom[0]->shape_string(),
               " and bottom ", i, " is ", bottom[i]->shape_string());
  }
  num_ = bottom[0]->shape(0);
  ComputeOutputShape(*bottom[0]);
  for (Blob* blob : top) blob->Reshape(num_, num_output_, top_h_, top_w_);
  if (is_1x1_) {
    columns_.Reshape(std::vector<int64_t>{0});
  } else {
    columns_.Reshape(std::vector<int64_t>{kernel_dim_ * group_, output_spatial_});
  }
#ifdef USE_CUDNN
  if (cudnn_) CudnnReshape(*bottom[0], *top[0]);
#endif
  if (dnnl_) DnnlReshape(*bottom[0], *top[0]);
}

void BaseConvolutionLayer::ForwardOnDevice(const std::vector<Blob*>& bottom,
                                           const std::vector<Blob*>& top) {
  const Device device = context_.device;
  const int64_t in_size = bottom[0]->count(1);
  const int64_t out_size = top[0]->count(1);
  const float* w = blobs_[0]->data_on(device);
  for (size_t i = 0; i < bottom.size(); ++i) {
    if (EngineForward(*bottom[i], w, top[i])) continue;
    const float* x = bottom[i]->data_on(device);
    float* y = top[i]->mutable_data_on(device);
    for (int64_t n = 0; n < num_; ++n) {
      if (reverse_dimensions()) {
        BackwardGemm(x + n * in_size, w, y + n * out_size);
      } else {
        ForwardGemm(x + n * in_size, w, y + n * out_size);
      }
    }
    if (bias_term_) AddBias(y);
  }
}

void BaseConvolutionLayer::BackwardOnDevice(const std::vector<Blob*>& top,
                                            const std::vector<bool>& propagate_down,
                                            const std::vector<Blob*>& bottom) {
  const Device device = context_.device;
  const int64_t in_size = bottom[0]->count(1);
  const int64_t out_size = top[0]->count(1);
  const float* w = blobs_[0]->data_on(device);
  const bool weight_grad = param_propagate_down(0);
  const bool bias_grad = bias_term_ && param_propagate_down(1);
  const bool reverse = reverse_dimensions();
  for (size_t i = 0; i < top.size(); ++i) {
    if (EngineBackward(*top[i], propagate_down[i], bottom[i])) continue;
    const float* dy = top[i]->diff_on(device);
    if (bias_grad) AccumulateBiasGradient(dy);
    if (!weight_grad && !propagate_down[i]) continue;
    const float* x = bottom[i]->data_on(device);
    for (int64_t n = 0; n < num_; ++n) {
      // The convolution's image and output: x and dy for Convolution, dy and
      // x for Deconvolution.
      const float* image = reverse ? dy + n * out_size : x + n * in_size;
      const float* output = reverse ? x + n * in_size : dy + n * out_size;
      if (weight_grad) WeightGemm(image, output, blobs_[0]->mutable_diff_on(device));
      if (!propagate_down[i]) continue;
      float* dx = bottom[i]->mutable_diff_on(device) + n * in_size;
      if (reverse) {
        ForwardGemm(image, w, dx, /*columns_ready=*/weight_grad);  // WeightGemm unfolded dy
      } else {
        BackwardGemm(output, w, dx);
      }
    }
  }
}

BlobFormats BaseConvolutionLayer::narrow_blobs() const {
  bool runs = DnnlReady();
#ifdef USE_CUDNN
  runs = runs || (context_.device == Device::kGPU && CudnnTakesNarrowBlobs());
#endif
  return NarrowBlobsWhen(runs && layer_param_.bottom_size() == 1, BlobFormats::kPerBlob);
}

BlobFormats BaseConvolutionLayer::channels_last_layouts() const {
#ifdef USE_CUDNN
  if (context_.device == Device::kGPU && MayRunChannelsLast() && CudnnTakesChannelsLast()) {
    return BlobFormats::kPerBlob;
  }
#endif
  // On a CPU whose oneDNN convolutions of this storage type read NHWC.
  if (context_.device == Device::kCPU && blocked_layouts() == BlobFormats::kPerBlob &&
      DnnlPrefersChannelsLast(engine_.types.forward_storage)) {
    return BlobFormats::kPerBlob;
  }
  return BlobFormats::kNone;
}

bool BaseConvolutionLayer::EngineForward(const Blob& bottom, const float* weights, Blob* top) {
  const bool reverse = reverse_dimensions();
#ifdef USE_CUDNN
  if (context_.device == Device::kGPU && CudnnReady()) {
    CudnnForward(bottom, top);
    return true;
  }
#endif
  if (context_.device == Device::kGPU) CheckCaffeLayoutOnGpu(*this, bottom, *top);
  if (context_.device != Device::kCPU || !DnnlReady()) return false;
  // The blobs' bytes, in their storage types.
  const void* bottom_data = bottom.data()->cpu_data();
  void* y = top->data()->mutable_cpu_data();
  if (reverse) {
    DnnlConvolveAdjoint(bottom_data, weights, y);
    if (bias_term_) DnnlAddBias(top);
  } else {
    DnnlConvolve(bottom_data, weights, y);  // the bias is fused in
  }
  return true;
}

bool BaseConvolutionLayer::EngineBackward(const Blob& top, bool propagate_down, Blob* bottom) {
  const bool weight_grad = param_propagate_down(0);
  const bool bias_grad = bias_term_ && param_propagate_down(1);
  const bool reverse = reverse_dimensions();
#ifdef USE_CUDNN
  if (context_.device == Device::kGPU && CudnnReady()) {
    CudnnBackward(top, propagate_down, bottom);
    return true;
  }
#endif
  if (context_.device == Device::kGPU) CheckCaffeLayoutOnGpu(*this, *bottom, top);
  if (context_.device != Device::kCPU || !DnnlReady()) return false;
  // The blobs' bytes, in their storage types.
  const void* dy = top.diff()->cpu_data();
  void* dx = propagate_down ? bottom->diff()->mutable_cpu_data() : nullptr;
  float* bias_diff = bias_grad ? blobs_[1]->mutable_cpu_diff() : nullptr;
  if (reverse && bias_diff != nullptr) {
    // Deconvolution's bias is on its top, not on the convolution's output.
    DnnlAddBiasGradient(top, bias_diff);
    bias_diff = nullptr;
  }
  if (weight_grad || bias_diff != nullptr) {
    const void* x = bottom->data()->cpu_data();
    DnnlWeightGradient(reverse ? dy : x, reverse ? x : dy,
                       weight_grad ? blobs_[0]->mutable_cpu_diff() : nullptr, bias_diff);
  }
  if (propagate_down && reverse) {
    DnnlConvolve(dy, blobs_[0]->cpu_data(), dx);
  } else if (propagate_down) {
    DnnlConvolveAdjoint(dy, blobs_[0]->cpu_data(), dx);
  }
  return true;
}

void BaseConvolutionLayer::ForwardGemm(const float* image, const float* weights, float* output,
                                       bool columns_ready) {
  const Device device = context_.device;
  const float* col = image;
  if (!is_1x1_) {
    if (!columns_ready) Im2col(device, image, geometry_, columns_.mutable_data_on(device));
    col = columns_.data_on(device);
  }
  const int64_t out_per_group = conv_out_channels_ / group_;
  for (int64_t g = 0; g < group_; ++g) {
    Gemm(device, false, false, out_per_group, output_spatial_, kernel_dim_, 1.0f,
         weights + g * out_per_group * kernel_dim_, col + g * kernel_dim_ * output_spatial_, 0.0f,
         output + g * out_per_group * output_spatial_);
  }
}

void BaseConvolutionLayer::BackwardGemm(const float* output, const float* weights, float* image) {
  const Device device = context_.device;
  float* col = is_1x1_ ? image : columns_.mutable_data_on(device);
  const int64_t out_per_group = conv_out_channels_ / group_;
  for (int64_t g = 0; g < group_; ++g) {
    Gemm(device, true, false, kernel_dim_, output_spatial_, out_per_group, 1.0f,
         weights + g * out_per_group * kernel_dim_, output + g * out_per_group * output_spatial_,
         0.0f, col + g * kernel_dim_ * output_spatial_);
  }
  if (!is_1x1_) Col2im(device, col, geometry_, image);
}

void BaseConvolutionLayer::WeightGemm(const float* image, const float* output,
                                      float* weights_diff) {
  const Device device = context_.device;
  const float* col = image;
  if (!is_1x1_) {
    Im2col(device, image, geometry_, columns_.mutable_data_on(device));
    col = columns_.data_on(device);
  }
  const int64_t out_per_group = conv_out_channels_ / group_;
  for (int64_t g = 0; g < group_; ++g) {
    Gemm(device, false, true, out_per_group, kernel_dim_, output_spatial_, 1.0f,
         output + g * out_per_group * output_spatial_, col + g * kernel_dim_ * output_spatial_,
         1.0f, weights_diff + g * out_per_group * kernel_dim_);
  }
}

void BaseConvolutionLayer::AddBias(float* top_data) const {
#ifndef CPU_ONLY
  if (context_.device == Device::kGPU) return AddBiasGpu(top_data);
#endif
  const float* b = blobs_[1]->cpu_data();
  const int64_t spatial = top_h_ * top_w_;
  for (int64_t c = 0; c < num_ * num_output_; ++c) {
    AddScalar(spatial, b[c % num_output_], top_data + c * spatial);
  }
}

void BaseConvolutionLayer::AccumulateBiasGradient(const float* top_diff) {
#ifndef CPU_ONLY
  if (context_.device == Device::kGPU) return AccumulateBiasGradientGpu(top_diff);
#endif
  float* db = blobs_[1]->mutable_cpu_diff();
  const int64_t spatial = top_h_ * top_w_;
  for (int64_t n = 0; n < num_; ++n) {
    const float* image_diff = top_diff + n * num_output_ * spatial;
    for (int64_t m = 0; m < num_output_; ++m) {
      double sum = 0;
      for (int64_t s = 0; s < spatial; ++s) sum += image_diff[m * spatial + s];
      db[m] += static_cast<float>(sum);
    }
  }
}

}  // namespace demi
