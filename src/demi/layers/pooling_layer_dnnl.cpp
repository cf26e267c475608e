// The DNNL engine of Pooling (see pooling_layer.hpp).
#include <optional>

#include "demi/layers/channels_last_max_pool.hpp"
#include "demi/layers/pooling_layer.hpp"
#include "demi/util/channel_blocks.hpp"
#include "demi/util/dnnl.hpp"

namespace demi {

using dnnl::memory;

// src: the bottom in the type oneDNN pools in; dst: the top in its layout,
// the bottom's. The workspace (MAX): where each window's max was. MAX
// between channels-last blobs of one type runs our own kernels instead of
// the primitives (channels_last_max_pool.hpp), their window indexes in the
// workspace.
struct PoolingLayer::DnnlState : DnnlSavingForward {
  Blob src_buffer, dst_buffer;
  std::optional<MaxPoolGeometry> channels_last_max;
};

void PoolingLayer::DnnlSetUp(const std::vector<Blob*>& top) {
  if (engine_.engine != EngineKind::kDnnl) return;
  dnnl_ = std::make_shared<DnnlState>();
  RegisterBuffer("dnnl_src", &dnnl_->src_buffer, BufferLifetime::kScratch);
  RegisterBuffer("dnnl_dst", &dnnl_->dst_buffer, BufferLifetime::kScratch);
  RegisterBuffer("dnnl_workspace", &dnnl_->workspace.blob, BufferLifetime::kSavedForBackward);
  RegisterBuffer("dnnl_scratchpad", &dnnl_->scratchpad.blob, BufferLifetime::kScratch);
}

bool PoolingLayer::DnnlReady() const { return dnnl_ && dnnl_->ready; }

bool PoolingLayer::RunsChannelsLastKernels() const {
  return DnnlReady() && dnnl_->channels_last_max.has_value();
}

void PoolingLayer::DnnlReshape(const Blob& bottom, const Blob& top) {
  DnnlState& s = *dnnl_;
  s.Reset({&s.workspace.blob, &s.src_buffer, &s.dst_buffer});
  s.channels_last_max.reset();
  if (bottom.count() == 0) return;
  // Caffe's windows in oneDNN's terms: the right padding that gives Caffe's
  // output size. A window wholly outside the image (Caffe: 0) has no oneDNN
  // equivalent, and AVE's divisor matches only where Caffe's is the whole
  // window (pad > 0 and no window beyond in + pad) or the part inside the
  // image (pad 0).
  const int64_t pad_r_h = (pooled_h_ - 1) * stride_h_ + kernel_h_ - height_ - pad_h_;
  const int64_t pad_r_w = (pooled_w_ - 1) * stride_w_ + kernel_w_ - width_ - pad_w_;
  const bool windows_inside = (pooled_h_ - 1) * stride_h_ - pad_h_ < height_ &&
                              (pooled_w_ - 1) * stride_w_ - pad_w_ < width_;
  const bool padded = pad_h_ > 0 || pad_w_ > 0;
  dnnl::algorithm algorithm = dnnl::algorithm::pooling_max;
  if (method_ == PoolingParameter::AVE) {
    algorithm = padded ? dnnl::algorithm::pooling_avg_include_padding
                       : dnnl::algorithm::pooling_avg_exclude_padding;
  }
  const bool ave_matches =
      method_ != PoolingParameter::AVE || !padded || (pad_r_h <= pad_h_ && pad_r_w <= pad_w_);
  if (!windows_inside || !ave_matches) {
    LogDnnlFallback(layer_param_, StrCat("its windows over bottom shape ", bottom.shape_string(),
                                         " reach past the padding, which oneDNN counts "
                                         "differently from Caffe"));
    return;
  }
  if (method_ == PoolingParameter::MAX && HoldsChannelsLast(bottom) && HoldsChannelsLast(top) &&
      bottom.storage_type() == top.storage_type() &&
      kernel_h_ * kernel_w_ <= kMaxPoolWindowElements) {
    // Our kernels, not the primitives: no scratch, and their window indexes
    // in the workspace, a byte an output.
    s.channels_last_max =
        MaxPoolGeometry{bottom.shape(0), channels_, height_,   width_,    pooled_h_, pooled_w_,
                        kernel_h_,       kernel_w_, stride_h_, stride_w_, pad_h_,    pad_w_};
    ReserveBytes(&s.workspace.blob, static_cast<size_t>(top.count()));
    s.ready = true;
    argmax_.Reshape(std::vector<int64_t>{0});
    VLOG(1) << "Pooling layer '" << layer_param_.name()
            << "' runs our channels-last max pooling kernels";
    return;
  }
  // oneDNN pools in the bottom's storage type, but a widened one (FLOAT16,
  // which it pools only on AVX512_FP16 cores, and BFLOAT16 without AVX-512)
  // in FLOAT; a blob of another type is reordered.
  const memory::desc user_src = BlobDesc(bottom);
  const memory::desc src =
      DnnlWidens(bottom.storage_type()) ? WithDataType(user_src, memory::data_type::f32) : user_src;
  const memory::desc dst(top.shape(), src.data_type(), memory::format_tag::any);
  const memory::dims strides{stride_h_, stride_w_}, kernel{kernel_h_, kernel_w_};
  const memory::dims pad_l{pad_h_, pad_w_}, pad_r{pad_r_h, pad_r_w};
  const dnnl::primitive_attr attr = UserScratchpadAttr();
  s.ready = TryDnnl(layer_param_, StrCat("pooling for bottom shape ", bottom.shape_string()), [&] {
    const dnnl::pooling_forward::primitive_desc forward(
        dnnl::pooling_forward::desc(dnnl::prop_kind::forward_training, algorithm, src, dst, strides,
                                    kernel, pad_l, pad_r),
        attr, DnnlEngine());
    const dnnl::pooling_backward::primitive_desc backward(
        dnnl::pooling_backward::desc(algorithm, src, forward.dst_desc(), strides, kernel, pad_l,
                                     pad_r),
        attr, DnnlEngine(), forward);
    s.Set(forward, backward);
    s.src.Reshape(src, user_src, &s.src_buffer);
    s.diff_src.Reshape(src, user_src, &s.src_buffer);
    s.dst.Reshape(forward.dst_desc(), BlobDesc(top), &s.dst_buffer);
    s.diff_dst.Reshape(backward.diff_dst_desc(), BlobDesc(top), &s.dst_buffer);
    s.workspace.Reshape({forward.workspace_desc()});
  });
  if (!s.ready) return;
  argmax_.Reshape(std::vector<int64_t>{0});  // the CAFFE engine's saved buffer is not needed
}

void PoolingLayer::DnnlForward(const Blob& bottom, Blob* top) {
  DnnlState& s = *dnnl_;
  if (!s.channels_last_max) return s.Forward(bottom, top);
  ChannelsLastMaxPoolForward(*s.channels_last_max, top->storage_type(), bottom.data()->cpu_data(),
                             top->data()->mutable_cpu_data(),
                             static_cast<uint8_t*>(s.workspace.blob.data()->mutable_cpu_data()));
}

void PoolingLayer::DnnlBackward(const Blob& top, Blob* bottom) {
  DnnlState& s = *dnnl_;
  if (!s.channels_last_max) return s.Backward(top, bottom, /*reads_src=*/false);
  ChannelsLastMaxPoolBackward(*s.channels_last_max, top.storage_type(), top.diff()->cpu_data(),
                              static_cast<const uint8_t*>(s.workspace.blob.data()->cpu_data()),
                              bottom->diff()->mutable_cpu_data());
}

}  // namespace demi
