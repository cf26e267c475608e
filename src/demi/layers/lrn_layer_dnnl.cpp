// The DNNL engine of LRN (see lrn_layer.hpp).
#include "demi/layers/lrn_layer.hpp"
#include "demi/util/dnnl.hpp"

namespace demi {

using dnnl::memory;

struct LRNLayer::DnnlState : DnnlSavingForward {
  Blob src_buffer, dst_buffer, diff_src_buffer;  ///< blocked copies (scratch)
};

void LRNLayer::DnnlSetUp() {
  if (engine_.engine != EngineKind::kDnnl) return;
  dnnl_ = std::make_shared<DnnlState>();
  DnnlState& s = *dnnl_;
  RegisterBuffer("dnnl_src", &s.src_buffer, BufferLifetime::kScratch);
  RegisterBuffer("dnnl_dst", &s.dst_buffer, BufferLifetime::kScratch);
  RegisterBuffer("dnnl_diff_src", &s.diff_src_buffer, BufferLifetime::kScratch);
  RegisterBuffer("dnnl_workspace", &s.workspace.blob, BufferLifetime::kSavedForBackward);
  RegisterBuffer("dnnl_scratchpad", &s.scratchpad.blob, BufferLifetime::kScratch);
}

bool LRNLayer::DnnlReady() const { return dnnl_ && dnnl_->ready; }

void LRNLayer::DnnlReshape(const Blob& bottom, const Blob& top) {
  DnnlState& s = *dnnl_;
  s.Reset({&s.src_buffer, &s.dst_buffer, &s.diff_src_buffer, &s.workspace.blob});
  if (bottom.count() == 0) return;
  const LRNParameter& param = layer_param_.lrn_param();
  const memory::desc bottom_user = BlobDesc(bottom), top_user = BlobDesc(top);
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
  });
  if (!s.ready) return;
  scale_.Reshape(std::vector<int64_t>{0});  // the CAFFE engine's buffers are not needed
  ratio_.Reshape(std::vector<int64_t>{0});
}

void LRNLayer::DnnlForward(const Blob& bottom, Blob* top) { dnnl_->Forward(bottom, top); }

void LRNLayer::DnnlBackward(const Blob& top, Blob* bottom) {
  dnnl_->Backward(top, bottom, /*reads_src=*/true);
}

}  // namespace demi
