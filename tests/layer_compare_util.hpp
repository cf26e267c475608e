#ifndef DEMI_TESTS_LAYER_COMPARE_UTIL_HPP_
#define DEMI_TESTS_LAYER_COMPARE_UTIL_HPP_
// Two implementations of one layer (CPU and GPU, or the CAFFE and DNNL
// engines) against each other on the same inputs, and the candidate's
// gradients against finite differences.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "demi/layer_registry.hpp"
#include "gradient_checker.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

/// LayerCase::candidate_block for channels last (NHWC): each 4-D blob's
/// block is all its channels.
constexpr int kAllChannels = -1;

/// One layer configuration to compare: the layer's prototxt and its bottom
/// shapes. `fill` sets bottom i (default: Gaussian, seed 1000 + i);
/// `propagate_down` defaults to true for every bottom.
struct LayerCase {
  std::string layer;
  std::vector<std::vector<int64_t>> bottoms;
  std::function<void(int index, Blob* bottom)> fill;
  std::vector<bool> propagate_down;
  bool check_gradient = true;
  float stepsize = 1e-2f;
  float threshold = 1e-2f;
  /// |candidate - reference| <= tolerance * (1 + |reference|) for every value.
  float tolerance = 1e-4f;
  /// > 1: the candidate's 4-D bottoms and tops whose channels divide into
  /// blocks of this size hold the channel-blocked layout (Blob::channel_block());
  /// kAllChannels: its 4-D bottoms and tops are channels last.
  int candidate_block = 1;
};

/// Copies the values of `blob`'s shape (N x C x ...) from `source`, whose
/// channels are in blocks of `from` (1: Caffe's layout), to `dest` in blocks
/// of `to`, element by element.
inline void CopyChannels(const Blob& blob, const float* source, int from, float* dest, int to) {
  const int64_t num = blob.shape(0), channels = blob.shape(1), inner = blob.count(2);
  auto at = [&](int64_t n, int64_t c, int64_t i, int64_t b) {
    return ((n * (channels / b) + c / b) * inner + i) * b + c % b;
  };
  for (int64_t n = 0; n < num; ++n) {
    for (int64_t c = 0; c < channels; ++c) {
      for (int64_t i = 0; i < inner; ++i) dest[at(n, c, i, to)] = source[at(n, c, i, from)];
    }
  }
}

/// Moves `blob`'s data and diff from its layout into channels in blocks of
/// `block` (1: Caffe's layout).
inline void SetChannelBlock(Blob* blob, int block) {
  if (block == blob->channel_block()) return;  // any shape: nothing to move
  for (float* values : {blob->mutable_cpu_data(), blob->mutable_cpu_diff()}) {
    const std::vector<float> old(values, values + blob->count());
    CopyChannels(*blob, old.data(), blob->channel_block(), values, block);
  }
  blob->set_channel_block(block);
}

/// Whether a layer case's candidate holds `blob` channel-blocked.
inline bool TakesBlock(const Blob& blob, int block) {
  if (block == kAllChannels) return blob.num_axes() == 4 && blob.shape(1) > 1;
  return block > 1 && blob.num_axes() == 4 && blob.shape(1) % block == 0;
}

/// The channel block a layer case's candidate gives `blob` (TakesBlock).
inline int BlockOf(const Blob& blob, int block) {
  return block == kAllChannels ? static_cast<int>(blob.shape(1)) : block;
}

/// `blob` in Caffe's layout (a copy when it is blocked).
inline const Blob& InCaffeLayout(const Blob& blob, std::unique_ptr<Blob>* copy) {
  if (blob.channel_block() == 1) return blob;
  *copy = std::make_unique<Blob>(blob.shape());
  (*copy)->set_channel_block(blob.channel_block());
  Copy(blob.count(), blob.cpu_data(), (*copy)->mutable_cpu_data());
  Copy(blob.count(), blob.cpu_diff(), (*copy)->mutable_cpu_diff());
  SetChannelBlock(copy->get(), 1);
  return **copy;
}

inline void ExpectClose(const Blob& blob, const Blob& reference, float tolerance,
                        const std::string& what) {
  std::unique_ptr<Blob> copy;
  const Blob& candidate = InCaffeLayout(blob, &copy);
  ASSERT_EQ(candidate.shape(), reference.shape()) << what;
  const float* g = candidate.cpu_data();
  const float* c = reference.cpu_data();
  int reported = 0;
  for (int64_t i = 0; i < reference.count() && reported < 5; ++i) {
    if (!(std::abs(g[i] - c[i]) <= tolerance * (1 + std::abs(c[i])))) {
      ADD_FAILURE() << what << "[" << i << "]: " << g[i] << " vs reference " << c[i];
      ++reported;
    }
  }
}

inline void ExpectCloseDiff(const Blob& blob, const Blob& reference, float tolerance,
                            const std::string& what) {
  std::unique_ptr<Blob> copy;
  const Blob& candidate = InCaffeLayout(blob, &copy);
  Blob g(candidate.shape()), c(reference.shape());
  Copy(candidate.count(), candidate.cpu_diff(), g.mutable_cpu_data());
  Copy(reference.count(), reference.cpu_diff(), c.mutable_cpu_data());
  ExpectClose(g, c, tolerance, what);
}

/// The layer of `text` with the DNNL engine asked for (as a net would with
/// --engine=DNNL).
inline std::unique_ptr<Layer> MakeDnnlLayer(const std::string& text) {
  std::unique_ptr<Layer> layer = MakeLayer(text);
  Context context;
  context.engine = EngineKind::kDnnl;
  layer->set_context(context);
  return layer;
}

using LayerMaker = std::function<std::unique_ptr<Layer>()>;

/// Runs the case's layer as two implementations (`make_reference`, say the
/// CPU or the CAFFE engine, and `make_candidate`) with the same params,
/// inputs and top gradients; their tops, bottom gradients and param
/// gradients must agree. Then checks a fresh candidate's gradients against
/// finite differences.
inline void ExpectLayersAgree(const LayerCase& c, const LayerMaker& make_reference,
                              const LayerMaker& make_candidate) {
  const size_t num_bottoms = c.bottoms.size();
  std::vector<std::unique_ptr<Blob>> ref_bottoms, cand_bottoms;
  std::vector<Blob*> ref_bottom, cand_bottom;
  for (size_t i = 0; i < num_bottoms; ++i) {
    ref_bottoms.push_back(std::make_unique<Blob>(c.bottoms[i]));
    if (c.fill) {
      c.fill(static_cast<int>(i), ref_bottoms.back().get());
    } else {
      FillGaussian(ref_bottoms.back().get(), 1000 + static_cast<uint32_t>(i));
    }
    cand_bottoms.push_back(std::make_unique<Blob>(c.bottoms[i]));
    cand_bottoms.back()->CopyFrom(*ref_bottoms.back());
    ref_bottom.push_back(ref_bottoms.back().get());
    cand_bottom.push_back(cand_bottoms.back().get());
  }
  auto ref_layer = make_reference();
  auto cand_layer = make_candidate();
  const int num_tops = ref_layer->EqualNumBottomTopBlobs()
                           ? static_cast<int>(num_bottoms)
                           : std::max(ref_layer->ExactNumTopBlobs(), ref_layer->MinTopBlobs());
  std::vector<std::unique_ptr<Blob>> owned;
  std::vector<Blob*> ref_top, cand_top;
  for (int i = 0; i < std::max(num_tops, 1); ++i) {
    owned.push_back(std::make_unique<Blob>());
    ref_top.push_back(owned.back().get());
    owned.push_back(std::make_unique<Blob>());
    cand_top.push_back(owned.back().get());
  }
  ref_layer->SetUp(ref_bottom, ref_top);
  const int block = c.candidate_block;
  for (Blob* blob : cand_bottom) {
    if (TakesBlock(*blob, block)) SetChannelBlock(blob, BlockOf(*blob, block));
  }
  cand_layer->SetUp(cand_bottom, cand_top);
  // The tops' shapes are known now: block them and reshape the layer for it.
  bool blocked_top = false;
  for (Blob* blob : cand_top) {
    if (TakesBlock(*blob, block)) blob->set_channel_block(BlockOf(*blob, block));
    blocked_top = blocked_top || blob->channel_block() > 1;
  }
  if (blocked_top) cand_layer->Reshape(cand_bottom, cand_top);
  ASSERT_EQ(ref_layer->blobs().size(), cand_layer->blobs().size());
  for (size_t p = 0; p < ref_layer->blobs().size(); ++p) {
    cand_layer->blobs()[p]->CopyFrom(*ref_layer->blobs()[p]);
  }

  ref_layer->Forward(ref_bottom, ref_top);
  cand_layer->Forward(cand_bottom, cand_top);
  for (size_t t = 0; t < ref_top.size(); ++t) {
    ExpectClose(*cand_top[t], *ref_top[t], c.tolerance, StrCat("top ", t));
  }

  std::vector<bool> propagate_down = c.propagate_down;
  if (propagate_down.empty()) propagate_down.assign(num_bottoms, true);
  for (size_t t = 0; t < ref_top.size(); ++t) {
    if (ref_layer->loss(static_cast<int>(t)) != 0.0f) continue;  // holds the loss weight
    Blob diff(ref_top[t]->shape());
    FillGaussian(&diff, 2000 + static_cast<uint32_t>(t));
    Copy(diff.count(), diff.cpu_data(), ref_top[t]->mutable_cpu_diff());
    if (cand_top[t]->channel_block() > 1) {
      CopyChannels(diff, diff.cpu_data(), 1, cand_top[t]->mutable_cpu_diff(),
                   cand_top[t]->channel_block());
    } else {
      Copy(diff.count(), diff.cpu_data(), cand_top[t]->mutable_cpu_diff());
    }
  }
  for (size_t p = 0; p < ref_layer->blobs().size(); ++p) {
    Set(ref_layer->blobs()[p]->count(), 0.0f, ref_layer->blobs()[p]->mutable_cpu_diff());
    Set(cand_layer->blobs()[p]->count(), 0.0f, cand_layer->blobs()[p]->mutable_cpu_diff());
  }
  ref_layer->Backward(ref_top, propagate_down, ref_bottom);
  cand_layer->Backward(cand_top, propagate_down, cand_bottom);
  for (size_t i = 0; i < num_bottoms; ++i) {
    if (!propagate_down[i]) continue;
    ExpectCloseDiff(*cand_bottom[i], *ref_bottom[i], c.tolerance, StrCat("bottom diff ", i));
  }
  for (size_t p = 0; p < ref_layer->blobs().size(); ++p) {
    ExpectCloseDiff(*cand_layer->blobs()[p], *ref_layer->blobs()[p], c.tolerance,
                    StrCat("param diff ", p));
  }

  if (!c.check_gradient) return;
  auto checked = make_candidate();
  GradientChecker checker(c.stepsize, c.threshold);
  for (size_t i = 0; i < num_bottoms; ++i) {
    const int bottom_block = cand_bottoms[i]->channel_block();
    cand_bottoms[i]->set_channel_block(1);
    cand_bottoms[i]->CopyFrom(*ref_bottoms[i]);
    SetChannelBlock(cand_bottoms[i].get(), bottom_block);
  }
  if (std::all_of(propagate_down.begin(), propagate_down.end(), [](bool down) { return down; })) {
    checker.CheckGradient(checked.get(), cand_bottom, cand_top);
    return;
  }
  // Some bottoms take no gradient (labels, RNN's cont): check the others one at a time.
  for (size_t i = 0; i < num_bottoms; ++i) {
    if (propagate_down[i]) {
      checker.CheckGradient(checked.get(), cand_bottom, cand_top, static_cast<int>(i));
    }
  }
}

/// The DNNL layer of `text` with its candidate's 4-D blobs in channel blocks
/// of `block` (or channels last: kAllChannels) against itself in Caffe's
/// layout, then the candidate's gradient against finite differences.
inline void ExpectDnnlLayoutMatchesPlain(int block, const std::string& text,
                                         std::vector<std::vector<int64_t>> bottoms,
                                         bool check_gradient = true) {
  LayerCase c;
  c.layer = text;
  c.bottoms = std::move(bottoms);
  c.candidate_block = block;
  c.check_gradient = check_gradient;
  c.tolerance = 2e-4f;  // sums in another order
  ExpectLayersAgree(
      c, [&] { return MakeDnnlLayer(text); }, [&] { return MakeDnnlLayer(text); });
}

}  // namespace
}  // namespace demi

#endif  // DEMI_TESTS_LAYER_COMPARE_UTIL_HPP_
