#include "demi/util/dnnl.hpp"

#include <algorithm>
#include <array>
#include <atomic>

#include "demi/util/rounded_chunks.hpp"

namespace demi {

const dnnl::engine& DnnlEngine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

dnnl::stream& DnnlStream() {
  thread_local dnnl::stream stream(DnnlEngine());
  return stream;
}

dnnl::memory::desc DenseDesc(const std::vector<int64_t>& shape, dnnl::memory::data_type type) {
  const dnnl::memory::dims dims(shape.begin(), shape.end());
  dnnl::memory::dims strides(dims.size(), 1);
  for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i) {
    strides[i] = strides[i + 1] * std::max<dnnl::memory::dim>(dims[i + 1], 1);
  }
  return dnnl::memory::desc(dims, type, strides);
}

dnnl::memory::data_type DnnlMathType(Type math) {
  return math == BFLOAT16 ? dnnl::memory::data_type::bf16 : dnnl::memory::data_type::f32;
}

namespace {

/// A typical 3x3 convolution in `type`, oneDNN choosing the layouts; throws
/// dnnl::error where oneDNN has no kernel for it on this CPU.
dnnl::convolution_forward::primitive_desc ProbeConvolution(dnnl::memory::data_type type) {
  using dnnl::memory;
  const memory::desc any({8, 64, 14, 14}, type, memory::format_tag::any);
  const memory::desc weights({64, 64, 3, 3}, type, memory::format_tag::any);
  return dnnl::convolution_forward::primitive_desc(
      dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training,
                                      dnnl::algorithm::convolution_direct, any, weights, any,
                                      {1, 1}, {1, 1}, {1, 1}),
      DnnlEngine());
}

}  // namespace

bool DnnlComputesBfloat16() {
  static const bool computes = [] {
    try {
      ProbeConvolution(dnnl::memory::data_type::bf16);
    } catch (const dnnl::error&) {
      return false;
    }
    return true;
  }();
  return computes;
}

bool DnnlWidens(Type storage) {
  return storage == FLOAT16 || (storage == BFLOAT16 && !DnnlComputesBfloat16());
}

namespace {

/// Set by ScopedDnnlChannelsLast (tests): overrides the probe below. Atomic:
/// replicas' threads build nets and read it.
std::atomic<int> channels_last_override{-1};  // -1: none; 0 or 1: the answer

}  // namespace

bool DnnlPrefersChannelsLast(Type storage) {
  const int override_answer = channels_last_override.load();
  if (override_answer >= 0) return override_answer == 1 && storage != FLOAT;
  if (storage != BFLOAT16 || !DnnlComputesBfloat16()) return false;
  // Intel AMX's bfloat16 convolutions in oneDNN read and write NHWC
  // activations (acdb); AVX-512's read nChw16c.
  static const bool prefers = [] {
    try {
      const dnnl::memory::desc src = ProbeConvolution(dnnl::memory::data_type::bf16).src_desc();
      return src == dnnl::memory::desc(src.dims(), src.data_type(), dnnl::memory::format_tag::nhwc);
    } catch (const dnnl::error&) {
      return false;
    }
  }();
  return prefers;
}

ScopedDnnlChannelsLast::ScopedDnnlChannelsLast(bool prefers) : previous_(channels_last_override) {
  channels_last_override = prefers ? 1 : 0;
}

ScopedDnnlChannelsLast::~ScopedDnnlChannelsLast() { channels_last_override = previous_; }

int DnnlChannelBlock() {
  // The source layout oneDNN picks for a FLOAT convolution.
  static const int block = [] {
    try {
      const dnnl_blocking_desc_t blocking =
          ProbeConvolution(dnnl::memory::data_type::f32).src_desc().data.format_desc.blocking;
      if (blocking.inner_nblks == 1 && blocking.inner_idxs[0] == 1) {
        return static_cast<int>(blocking.inner_blks[0]);
      }
    } catch (const dnnl::error&) {
    }
    return 1;
  }();
  return block;
}

dnnl::memory::data_type DnnlStorageType(const Blob& blob) {
  return DnnlStorageType(blob.storage_type());
}

dnnl::memory::data_type DnnlStorageType(Type storage) {
  switch (storage) {
    case BFLOAT16:
      return dnnl::memory::data_type::bf16;
    case FLOAT16:
      return dnnl::memory::data_type::f16;
    default:
      return dnnl::memory::data_type::f32;
  }
}

dnnl::memory::desc WithDataType(const dnnl::memory::desc& desc, dnnl::memory::data_type type) {
  dnnl::memory::desc typed = desc;
  typed.data.data_type = static_cast<dnnl_data_type_t>(type);
  return typed;
}

dnnl::memory::desc BlobDesc(const Blob& blob) {
  const int block = blob.channel_block();
  if (block == 1) return DenseDesc(blob.shape(), DnnlStorageType(blob));
  const dnnl::memory::dims dims(blob.shape().begin(), blob.shape().end());
  // Channels last (Net::ChooseChannelsLast); of 8 or 16 channels, the same
  // bytes as the blocked layout below, which is what a blocked net's
  // primitives were made for.
  if (blob.channels_last() && block != 8 && block != 16) {
    return dnnl::memory::desc(dims, DnnlStorageType(blob), dnnl::memory::format_tag::nhwc);
  }
  DEMI_CHECK(blob.num_axes() == 4 && blob.shape(1) % block == 0 && (block == 8 || block == 16),
             "a blob of shape ", blob.shape_string(), " cannot hold channels in blocks of ", block);
  return dnnl::memory::desc(
      dims, DnnlStorageType(blob),
      block == 16 ? dnnl::memory::format_tag::nChw16c : dnnl::memory::format_tag::nChw8c);
}

dnnl::memory::desc FlatDesc(const Blob& blob) {
  return blob.channel_block() > 1 ? BlobDesc(blob)
                                  : DenseDesc({blob.count()}, DnnlStorageType(blob));
}

dnnl::primitive_attr UserScratchpadAttr() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

namespace {

void ExecuteArgs(const dnnl::primitive& primitive, size_t count, const dnnl_exec_arg_t* args) {
  dnnl::error::wrap_c_api(
      dnnl_primitive_execute(primitive.get(), DnnlStream().get(), static_cast<int>(count), args),
      "could not execute a oneDNN primitive");
}

}  // namespace

void DnnlExecute(const dnnl::primitive& primitive, std::initializer_list<dnnl_exec_arg_t> args) {
  ExecuteArgs(primitive, args.size(), args.begin());
}

void DnnlExecute(const dnnl::primitive& primitive, const std::vector<dnnl_exec_arg_t>& args) {
  ExecuteArgs(primitive, args.size(), args.data());
}

dnnl::memory UnboundMemory(const dnnl::memory::desc& desc) {
  return dnnl::memory(desc, DnnlEngine(), DNNL_MEMORY_NONE);
}

void Bind(const dnnl::memory& memory, const void* data) {
  memory.set_data_handle(const_cast<void*>(data));
}

void ReserveBytes(Blob* blob, size_t bytes) {
  const auto floats = static_cast<int64_t>((bytes + sizeof(float) - 1) / sizeof(float));
  if (blob->count() < floats) blob->Reshape(std::vector<int64_t>{floats});
}

void DnnlScratch::Reshape(std::initializer_list<dnnl::memory::desc> descs) {
  dnnl::memory::desc largest;
  for (const dnnl::memory::desc& desc : descs) {
    if (desc.get_size() > largest.get_size()) largest = desc;
  }
  blob.Reshape(std::vector<int64_t>{0});
  ReserveBytes(&blob, largest.get_size());
  memory = UnboundMemory(largest);
}

const dnnl::memory& DnnlScratch::Bound() {
  if (blob.count() > 0) Bind(memory, blob.mutable_cpu_data());
  return memory;
}

void DnnlLayerState::Reset(std::initializer_list<Blob*> buffers) {
  ready = false;
  for (Blob* buffer : buffers) buffer->Reshape(std::vector<int64_t>{0});
  scratchpad.Reshape();
}

void DnnlLayerState::Execute(const dnnl::primitive& primitive,
                             std::initializer_list<dnnl_exec_arg_t> args) {
  // On the stack: no allocation while a net runs.
  constexpr size_t kMaxArgs = 8;
  DEMI_CHECK(args.size() < kMaxArgs, "a oneDNN primitive with ", args.size(),
             " arguments besides its scratchpad; at most ", kMaxArgs - 1, " fit");
  std::array<dnnl_exec_arg_t, kMaxArgs> all;
  std::copy(args.begin(), args.end(), all.begin());
  all[args.size()] = {DNNL_ARG_SCRATCHPAD, scratchpad.Bound().get()};
  ExecuteArgs(primitive, args.size() + 1, all.data());
}

void LogDnnlFallback(const LayerParameter& param, const std::string& reason) {
  LOG(INFO) << param.type() << " layer '" << param.name() << "' runs the CAFFE engine: " << reason;
}

bool TryDnnl(const LayerParameter& param, const std::string& what,
             const std::function<void()>& build) {
  try {
    build();
  } catch (const dnnl::error& error) {
    LogDnnlFallback(param, StrCat("oneDNN has no ", what, " (", error.what(), ")"));
    return false;
  }
  return true;
}

void DnnlForwardBackward::Set(const dnnl::primitive_desc& forward_pd,
                              const dnnl::primitive_desc& backward_pd) {
  forward = dnnl::primitive(forward_pd);
  backward = dnnl::primitive(backward_pd);
  scratchpad.Reshape({forward_pd.scratchpad_desc(), backward_pd.scratchpad_desc()});
}

void DnnlActivation::Set(const dnnl::primitive_desc& forward_pd,
                         const dnnl::primitive_desc& backward_pd, const dnnl::memory::desc& data) {
  DnnlForwardBackward::Set(forward_pd, backward_pd);
  for (dnnl::memory* m : {&src_, &dst_, &diff_dst_, &diff_src_}) *m = UnboundMemory(data);
}

void DnnlSavingForward::Forward(const Blob& bottom, Blob* top) {
  void* y = top->data()->mutable_cpu_data();
  Forward(bottom.data()->cpu_data(), y);
}

void DnnlSavingForward::Forward(const void* x, void* y) {
  // The blobs' bytes, in their storage types (the reorders convert).
  const dnnl::memory& in = src.In(x);
  const dnnl::memory& out = dst.Out(y);
  Execute(forward, {{DNNL_ARG_SRC, in.get()},
                    {DNNL_ARG_DST, out.get()},
                    {DNNL_ARG_WORKSPACE, workspace.Bound().get()}});
  dst.Finish(y);
}

void DnnlSavingForward::Backward(const Blob& top, Blob* bottom, bool reads_src) {
  void* dx = bottom->diff()->mutable_cpu_data();
  const void* x = reads_src || recompute ? bottom->data()->cpu_data() : nullptr;
  Backward(x, top.diff()->cpu_data(), dx);
}

void DnnlSavingForward::Backward(const void* x, const void* dy, void* dx) {
  DEMI_CHECK(x != nullptr || !recompute, "a recomputed workspace needs the bottom's data");
  // In this order: tensors may share a buffer used one after another.
  const dnnl::memory* in = x != nullptr ? &src.In(x) : nullptr;
  if (recompute) {
    // Its top goes to a buffer that diff_dst may take next.
    Bind(recompute->top, recompute->top_buffer->mutable_cpu_data());
    Execute(forward, {{DNNL_ARG_SRC, in->get()},
                      {DNNL_ARG_DST, recompute->top.get()},
                      {DNNL_ARG_WORKSPACE, workspace.Bound().get()}});
  }
  const dnnl::memory& out_diff = diff_dst.In(dy);
  const dnnl::memory& in_diff = diff_src.Out(dx);
  const dnnl_exec_arg_t diff_args[] = {{DNNL_ARG_DIFF_DST, out_diff.get()},
                                       {DNNL_ARG_DIFF_SRC, in_diff.get()},
                                       {DNNL_ARG_WORKSPACE, workspace.Bound().get()}};
  if (in != nullptr) {
    Execute(backward, {{DNNL_ARG_SRC, in->get()}, diff_args[0], diff_args[1], diff_args[2]});
  } else {
    Execute(backward, {diff_args[0], diff_args[1], diff_args[2]});
  }
  diff_src.Finish(dx);
}

void DnnlActivation::Forward(const void* x, void* y) {
  Bind(src_, x);
  Bind(dst_, y);
  Execute(forward, {{DNNL_ARG_SRC, src_.get()}, {DNNL_ARG_DST, dst_.get()}});
}

void DnnlActivation::Backward(const void* y, const void* dy, void* dx) {
  Bind(dst_, y);
  Bind(diff_dst_, dy);
  Bind(diff_src_, dx);
  Execute(backward, {{DNNL_ARG_DST, dst_.get()},
                     {DNNL_ARG_DIFF_DST, diff_dst_.get()},
                     {DNNL_ARG_DIFF_SRC, diff_src_.get()}});
}

void DnnlTensor::Reshape(const dnnl::memory::desc& layout, const dnnl::memory::desc& user,
                         Blob* buffer, bool own_buffer) {
  reorder_ = own_buffer || layout != user;
  buffer_ = buffer;
  user_memory_ = UnboundMemory(user);
  if (!reorder_) return;
  ReserveBytes(buffer, layout.get_size());
  buffer_memory_ = UnboundMemory(layout);
  const bool sixteen_bits = user.data_type() == dnnl::memory::data_type::f16 ||
                            user.data_type() == dnnl::memory::data_type::bf16;
  widened_ = FLOAT;
  if (sixteen_bits && WithDataType(user, dnnl::memory::data_type::f32) == layout) {
    widened_ = user.data_type() == dnnl::memory::data_type::f16 ? FLOAT16 : BFLOAT16;
  }
  elements_ = static_cast<int64_t>(layout.get_size() / sizeof(float));
  if (widened_ != FLOAT) return;
  const dnnl::engine& engine = DnnlEngine();
  to_layout_ = dnnl::reorder(dnnl::reorder::primitive_desc(engine, user, engine, layout));
  to_user_ = dnnl::reorder(dnnl::reorder::primitive_desc(engine, layout, engine, user));
  dnnl::post_ops sum;
  sum.append_sum(1.0f);
  dnnl::primitive_attr accumulate;
  accumulate.set_post_ops(sum);
  add_to_user_ =
      dnnl::reorder(dnnl::reorder::primitive_desc(engine, layout, engine, user, accumulate));
}

const dnnl::memory& DnnlTensor::Buffer() {
  Bind(buffer_memory_, buffer_->mutable_cpu_data());
  return buffer_memory_;
}

const dnnl::memory& DnnlTensor::In(const void* user) {
  Bind(user_memory_, user);
  if (!reorder_) return user_memory_;
  const dnnl::memory& buffer = Buffer();
  if (widened_ != FLOAT) {
    float* to = buffer_->mutable_cpu_data();
    VisitStorageType(widened_, [&](auto tag) {
      const auto* from = static_cast<const decltype(tag)*>(user);
      ParallelFor(elements_, [=](int64_t begin, int64_t end) {
        LoadWidened(end - begin, from + begin, to + begin);
      });
    });
    return buffer;
  }
  DnnlExecute(to_layout_, {{DNNL_ARG_FROM, user_memory_.get()}, {DNNL_ARG_TO, buffer.get()}});
  return buffer;
}

const dnnl::memory& DnnlTensor::Out(void* user) {
  Bind(user_memory_, user);
  return reorder_ ? Buffer() : user_memory_;
}

void DnnlTensor::Finish(void* user, bool accumulate) {
  if (!reorder_) return;
  if (widened_ != FLOAT) {
    const float* from = buffer_->cpu_data();
    VisitStorageType(widened_, [&](auto tag) {
      auto* to = static_cast<decltype(tag)*>(user);
      if (!accumulate) {
        ParallelFor(elements_, [=](int64_t begin, int64_t end) {
          StoreRounded(end - begin, from + begin, to + begin);
        });
        return;
      }
      ParallelStoreRounded(elements_, to, [=](int64_t at, int64_t n, float* sum) {
        LoadWidened(n, to + at, sum);
#pragma omp simd
        for (int64_t i = 0; i < n; ++i) sum[i] += from[at + i];
      });
    });
    return;
  }
  Bind(user_memory_, user);
  DnnlExecute(accumulate ? add_to_user_ : to_user_,
              {{DNNL_ARG_FROM, buffer_memory_.get()}, {DNNL_ARG_TO, user_memory_.get()}});
}

}  // namespace demi
