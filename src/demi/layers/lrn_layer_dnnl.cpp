// The DNNL engine of LRN (see lrn_layer.hpp).
#include <algorithm>
#include <optional>

#include "demi/layers/channels_last_lrn.hpp"
#include "demi/layers/lrn_layer.hpp"
#include "demi/util/channel_blocks.hpp"
#include "demi/util/dnnl.hpp"

namespace demi {

using dnnl::memory;

struct LRNLayer::DnnlState : DnnlSavingForward {
  /// Between channels-last blobs of one type, with beta 0.75: our own
  /// kernels (channels_last_lrn.hpp) instead of the primitives.
  std::optional<LrnGeometry> channels_last;
  Blob src_buffer, dst_buffer, diff_src_buffer;  ///< blocked copies (scratch)
  /// The primitives take `images` of the batch at a time, the scratch
  /// sized for them; bytes per image of the bottom and the top (data and
  /// diff alike) in their own layouts and types.
  int64_t images = 0;
  size_t bottom_image_bytes = 0, top_image_bytes = 0;
};

namespace {

/// FLOAT bytes of a chunk of images: LRN's buffers and workspace (five such
/// tensors in backward) stay small beside the arena, and a chunk still
/// fills every core.
constexpr size_t kChunkBytes = 8 << 20;

/// `desc` (N outermost, as in every layout a blob holds) for `images` of
/// its batch.
memory::desc ImagesOf(memory::desc desc, int64_t images) {
  desc.data.dims[0] = desc.data.padded_dims[0] = images;
  return desc;
}

/// The largest divisor of `num` at most `most` (at least 1).
int64_t DivisorAtMost(int64_t num, int64_t most) {
  for (int64_t d = std::min(num, std::max<int64_t>(most, 1)); d > 1; --d) {
    if (num % d == 0) return d;
  }
  return 1;
}

}  // namespace

void LRNLayer::DnnlSetUp() {
  if (engine_.engine != EngineKind::kDnnl) return;
  dnnl_ = std::make_shared<DnnlState>();
  DnnlState& s = *dnnl_;
  RegisterBuffer("dnnl_src", &s.src_buffer, BufferLifetime::kScratch);
  RegisterBuffer("dnnl_dst", &s.dst_buffer, BufferLifetime::kScratch);
  RegisterBuffer("dnnl_diff_src", &s.diff_src_buffer, BufferLifetime::kScratch);
  // oneDNN's fast LRN keeps a workspace of twice the top in FLOAT (its
  // reference kernel none): backward recomputes it (one more LRN forward,
  // about 1 % of a GoogLeNet step) rather than the arena holding it from
  // forward to backward (AlexNet b32: 117 MiB, +63 % of its BFLOAT16 arena).
  RegisterBuffer("dnnl_workspace", &s.workspace.blob, BufferLifetime::kScratch);
  RegisterBuffer("dnnl_scratchpad", &s.scratchpad.blob, BufferLifetime::kScratch);
}

bool LRNLayer::DnnlReady() const { return dnnl_ && dnnl_->ready; }

bool LRNLayer::RunsChannelsLastKernels() const {
  return DnnlReady() && dnnl_->channels_last.has_value();
}

bool LRNLayer::OwnKernelsTake() const {
  const LRNParameter& param = layer_param_.lrn_param();
  return param.beta() == kLrnBeta && param.local_size() <= kMaxLrnSize &&
         channels_ <= kMaxLrnChannels;
}

BlobFormats LRNLayer::channels_last_layouts() const {
  // Elsewhere oneDNN would reorder channels last into its blocks and back.
  const bool cpu = context_.device == Device::kCPU;
  return cpu && DnnlReady() && OwnKernelsTake() &&
                 DnnlPrefersChannelsLast(engine_.types.forward_storage)
             ? BlobFormats::kPerBlob
             : BlobFormats::kNone;
}

void LRNLayer::DnnlReshape(const Blob& bottom, const Blob& top) {
  DnnlState& s = *dnnl_;
  s.Reset({&s.src_buffer, &s.dst_buffer, &s.diff_src_buffer, &s.workspace.blob});
  s.channels_last.reset();
  if (bottom.count() == 0) return;
  const LRNParameter& param = layer_param_.lrn_param();
  if (HoldsChannelsLast(bottom) && HoldsChannelsLast(top) &&
      bottom.storage_type() == top.storage_type() && OwnKernelsTake()) {
    s.channels_last = LrnGeometry{bottom.count() / channels_, channels_, param.local_size(),
                                  param.alpha(), param.k()};
    s.ready = true;
    scale_.Reshape(std::vector<int64_t>{0});  // the CAFFE engine's buffers are not needed
    ratio_.Reshape(std::vector<int64_t>{0});
    VLOG(1) << "LRN layer '" << layer_param_.name() << "' runs our channels-last kernels";
    return;
  }
  // LRN is per image: the primitives run a chunk of images at a time.
  const int64_t num = bottom.shape(0);
  const size_t image_float_bytes = static_cast<size_t>(bottom.count() / num) * sizeof(float);
  s.images = DivisorAtMost(num, static_cast<int64_t>(kChunkBytes / image_float_bytes));
  s.bottom_image_bytes = BlobDesc(bottom).get_size() / num;
  s.top_image_bytes = BlobDesc(top).get_size() / num;
  const memory::desc bottom_user = ImagesOf(BlobDesc(bottom), s.images);
  const memory::desc top_user = ImagesOf(BlobDesc(top), s.images);
  // oneDNN's fast LRN kernels want the CPU's channel block inner (16 with
  // AVX-512, 8 with AVX2: on Caffe's layout, or another block, it runs its
  // reference kernel, 20x slower); the reorders (none between DNNL layers,
  // which hold that block; a widening loop for a 16-bit blob) cost less.
  const int block = DnnlChannelBlock();
  const memory::desc blocked(bottom_user.dims(), memory::data_type::f32,
                             block == 16  ? memory::format_tag::nChw16c
                             : block == 8 ? memory::format_tag::nChw8c
                                          : memory::format_tag::nchw);
  const dnnl::primitive_attr attr = UserScratchpadAttr();
  const auto algorithm = dnnl::algorithm::lrn_across_channels;
  s.ready = TryDnnl(layer_param_, StrCat("LRN for bottom shape ", bottom.shape_string()), [&] {
    // oneDNN divides alpha by local_size across channels, as Caffe does.
    const dnnl::lrn_forward::primitive_desc forward(
        dnnl::lrn_forward::desc(dnnl::prop_kind::forward_training, algorithm, blocked,
                                param.local_size(), param.alpha(), param.beta(), param.k()),
        attr, DnnlEngine());
    const dnnl::lrn_backward::primitive_desc backward(
        dnnl::lrn_backward::desc(algorithm, blocked, blocked, param.local_size(), param.alpha(),
                                 param.beta(), param.k()),
        attr, DnnlEngine(), forward);
    s.Set(forward, backward);
    // dst in forward and diff_dst in backward share a buffer.
    s.src.Reshape(forward.src_desc(), bottom_user, &s.src_buffer);
    s.dst.Reshape(forward.dst_desc(), top_user, &s.dst_buffer);
    s.diff_dst.Reshape(backward.diff_dst_desc(), top_user, &s.dst_buffer);
    s.diff_src.Reshape(backward.diff_src_desc(), bottom_user, &s.diff_src_buffer);
    s.workspace.Reshape({forward.workspace_desc()});
    // dst in forward and diff_dst in backward share a buffer: the
    // recomputed top takes it before diff_dst does. (oneDNN's reference
    // kernel, where the fast one does not take the settings, keeps none.)
    s.recompute.reset();
    if (forward.workspace_desc().get_size() > 0) {
      ReserveBytes(&s.dst_buffer, forward.dst_desc().get_size());
      s.recompute = DnnlSavingForward::Recompute{UnboundMemory(forward.dst_desc()), &s.dst_buffer};
    }
  });
  if (!s.ready) return;
  scale_.Reshape(std::vector<int64_t>{0});  // the CAFFE engine's buffers are not needed
  ratio_.Reshape(std::vector<int64_t>{0});
}

void LRNLayer::DnnlForward(const Blob& bottom, Blob* top) {
  DnnlState& s = *dnnl_;
  if (s.channels_last) {
    ChannelsLastLrnForward(*s.channels_last, top->storage_type(), bottom.data()->cpu_data(),
                           top->data()->mutable_cpu_data());
    return;
  }
  const auto* x = static_cast<const char*>(bottom.data()->cpu_data());
  auto* y = static_cast<char*>(top->data()->mutable_cpu_data());
  for (int64_t n = 0; n < bottom.shape(0); n += s.images) {
    s.Forward(x + n * s.bottom_image_bytes, y + n * s.top_image_bytes);
  }
}

void LRNLayer::DnnlBackward(const Blob& top, Blob* bottom) {
  DnnlState& s = *dnnl_;
  if (s.channels_last) {
    ChannelsLastLrnBackward(*s.channels_last, top.storage_type(), bottom->data()->cpu_data(),
                            top.diff()->cpu_data(), bottom->diff()->mutable_cpu_data());
    return;
  }
  auto* dx = static_cast<char*>(bottom->diff()->mutable_cpu_data());
  const auto* x = static_cast<const char*>(bottom->data()->cpu_data());
  const auto* dy = static_cast<const char*>(top.diff()->cpu_data());
  for (int64_t n = 0; n < bottom->shape(0); n += s.images) {
    s.Backward(x + n * s.bottom_image_bytes, dy + n * s.top_image_bytes,
               dx + n * s.bottom_image_bytes);
  }
}

}  // namespace demi
