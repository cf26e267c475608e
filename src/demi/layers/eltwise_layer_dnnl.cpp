// The DNNL engine of Eltwise SUM (see eltwise_layer.hpp).
#include <algorithm>

#include "demi/layers/eltwise_layer.hpp"
#include "demi/util/dnnl.hpp"
#include "demi/util/math.hpp"
#include "demi/util/rounded_chunks.hpp"
#include "demi/util/threads.hpp"

namespace demi {

using dnnl::memory;

namespace {

/// dx = coeff dy over `count` floats.
void ScaleInto(int64_t count, float coeff, const float* dy, float* dx) {
  ParallelFor(count, [=](int64_t begin, int64_t end) {
#pragma omp simd
    for (int64_t i = begin; i < end; ++i) dx[i] = coeff * dy[i];
  });
}

/// The same over bfloat16 or float16, in FLOAT, a chunk at a time; coeff 1
/// copies.
template <typename Half>
void ScaleInto(int64_t count, float coeff, const Half* dy, Half* dx) {
  if (coeff == 1.0f) {
    Copy(count, dy, dx);
    return;
  }
  ParallelStoreRounded(count, dx, [=](int64_t at, int64_t n, float* scaled) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) scaled[i] = coeff * dy[at + i];
  });
}

/// y = sum_k coeffs[k] x_k over 16-bit blobs, in FLOAT a chunk at a time:
/// oneDNN has only its reference sum for the types it widens (FLOAT16:
/// measured 100x slower).
template <typename Half>
void SumWidened(int64_t count, const std::vector<float>& coeffs, const std::vector<const void*>& xs,
                Half* y) {
  ParallelStoreRounded(count, y, [&](int64_t at, int64_t n, float* sum) {
    float term[kRoundedChunk];
    std::fill_n(sum, n, 0.0f);
    for (size_t k = 0; k < xs.size(); ++k) {
      LoadWidened(n, static_cast<const Half*>(xs[k]) + at, term);
      const float c = coeffs[k];
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) sum[i] += c * term[i];
    }
  });
}

}  // namespace

struct EltwiseLayer::DnnlState : DnnlLayerState {
  /// Widened blobs (DnnlWidens): our loop (SumWidened) instead of the
  /// primitive.
  bool own_sum = false;
  std::vector<const void*> own_sum_srcs;
  dnnl::sum forward;
  std::vector<memory> srcs;
  memory dst;
  /// The sum's arguments, built in Reshape: Forward only rebinds the memories.
  std::vector<dnnl_exec_arg_t> args;
};

void EltwiseLayer::DnnlSetUp() {
  if (engine_.engine != EngineKind::kDnnl) return;
  if (!dnnl_) dnnl_ = std::make_shared<DnnlState>();  // SetUp may run again
  RegisterBuffer("dnnl_scratchpad", &dnnl_->scratchpad.blob, BufferLifetime::kScratch);
}

bool EltwiseLayer::DnnlReady() const { return dnnl_ && dnnl_->ready; }

void EltwiseLayer::DnnlReshape(const std::vector<Blob*>& bottom, const Blob& top) {
  DnnlState& s = *dnnl_;
  s.Reset();
  if (top.count() == 0) return;
  s.own_sum = DnnlWidens(top.storage_type());
  if (s.own_sum) {
    s.own_sum_srcs.resize(bottom.size());
    s.ready = true;
    return;
  }
  // Every bottom and the top share one layout (kUniform), Caffe's or blocked.
  std::vector<memory::desc> srcs;
  for (const Blob* blob : bottom) srcs.push_back(FlatDesc(*blob));
  const memory::desc dst = FlatDesc(top);
  const std::string what =
      StrCat("sum of ", bottom.size(), " bottoms of shape ", top.shape_string());
  s.ready = TryDnnl(layer_param_, what, [&] {
    const dnnl::sum::primitive_desc forward(dst, coeffs_, srcs, DnnlEngine(), UserScratchpadAttr());
    s.forward = dnnl::sum(forward);
    s.scratchpad.Reshape({forward.scratchpad_desc()});
    s.srcs.clear();
    s.args.clear();
    for (size_t k = 0; k < srcs.size(); ++k) {
      s.srcs.push_back(UnboundMemory(srcs[k]));
      s.args.push_back({DNNL_ARG_MULTIPLE_SRC + static_cast<int>(k), s.srcs.back().get()});
    }
    s.dst = UnboundMemory(dst);
    s.args.push_back({DNNL_ARG_DST, s.dst.get()});
    s.args.push_back({DNNL_ARG_SCRATCHPAD, s.scratchpad.memory.get()});
  });
}

void EltwiseLayer::DnnlForward(const std::vector<Blob*>& bottom, Blob* top) {
  DnnlState& s = *dnnl_;
  if (s.own_sum) {
    for (size_t k = 0; k < bottom.size(); ++k) s.own_sum_srcs[k] = bottom[k]->data()->cpu_data();
    VisitStorageType(top->storage_type(), [&](auto tag) {
      using T = decltype(tag);
      SumWidened(top->count(), coeffs_, s.own_sum_srcs, top->mutable_cpu_data_as<T>());
    });
    return;
  }
  for (size_t k = 0; k < bottom.size(); ++k) Bind(s.srcs[k], bottom[k]->data()->cpu_data());
  Bind(s.dst, top->data()->mutable_cpu_data());
  s.scratchpad.Bound();
  DnnlExecute(s.forward, s.args);
}

void EltwiseLayer::DnnlBackward(const Blob& top, const std::vector<bool>& propagate_down,
                                const std::vector<Blob*>& bottom) {
  // dx_k = coeff_k dy, element by element in whatever layout and storage
  // type the blobs share.
  for (size_t k = 0; k < bottom.size(); ++k) {
    if (!propagate_down[k]) continue;
    VisitStorageType(top.storage_type(), [&](auto tag) {
      using T = decltype(tag);
      ScaleInto(top.count(), coeffs_[k], top.cpu_diff_as<T>(), bottom[k]->mutable_cpu_diff_as<T>());
    });
  }
}

}  // namespace demi
