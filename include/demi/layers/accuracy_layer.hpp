#ifndef DEMI_LAYERS_ACCURACY_LAYER_HPP_
#define DEMI_LAYERS_ACCURACY_LAYER_HPP_

#include <vector>

#include "demi/layer.hpp"
#include "demi/layers/bad_label_record.hpp"

namespace demi {

/// @brief Top-k classification accuracy, as in Caffe: a prediction at outer
/// index i and inner position j is correct when fewer than top_k classes have
/// a strictly greater score than its label's class,
/// accuracy = correct / (labels not equal to ignore_label), 0 when none count.
///
/// Bottoms: scores (outer x C x inner around accuracy_param.axis, default 1)
/// and labels, outer * inner integer values in [0, C). Tops: the scalar
/// accuracy and, optionally, the accuracy per class (C values; 0 for a class
/// no label names). On a GPU the tops are computed on the device and a bad
/// label is raised by CheckDeferredErrors: a step reads nothing back. Not differentiable: Backward
/// reads no data and fails if asked to propagate down; force_backward never reaches its bottoms.
/// The per-class tallies are small integer arrays sized in Reshape (exact past 2^24 labels a class,
/// which float counts would not be), not arena buffers.
class AccuracyLayer : public Layer {
 public:
  using Layer::Layer;
  void LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  const char* type() const override { return "Accuracy"; }
  int ExactNumBottomBlobs() const override { return 2; }
  int MinTopBlobs() const override { return 1; }
  int MaxTopBlobs() const override { return 2; }
  bool AllowForceBackward(int) const override { return false; }
  bool BackwardReadsBottomData(int) const override { return false; }
  bool BackwardReadsTopData(int) const override { return false; }
  /// A label outside the classes that Forward_gpu found since the last
  /// check (the lowest position's), with the CPU's message.
  void CheckDeferredErrors() override;

 protected:
  void Forward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Backward_cpu(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob*>& bottom) override;
#ifndef CPU_ONLY
  void Forward_gpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Backward_gpu(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob*>& bottom) override;
#endif

 private:
  // The tallies, counted the same way on CPU and GPU.
  /// Zeroes them; `per_class` with a second top.
  void ResetTallies(bool per_class);
  /// Counts a position whose label is `value`: a hit or a miss.
  void Tally(int64_t value, bool hit);
  /// The tops from the tallies.
  void WriteAccuracies(const std::vector<Blob*>& top);

  int64_t top_k_ = 1;
  bool has_ignore_label_ = false;
  int64_t ignore_label_ = 0;
  int64_t outer_num_ = 0;
  int64_t channels_ = 0;
  int64_t inner_num_ = 0;
  bool per_class_ = false;             ///< whether this Forward counts per class
  int64_t correct_ = 0;                ///< hits in this Forward
  int64_t counted_ = 0;                ///< labels not ignored in this Forward
  std::vector<int64_t> class_labels_;  ///< labels seen per class (with a second top)
  std::vector<int64_t> class_hits_;    ///< correct predictions per class
  Blob outcome_;  ///< Forward_gpu's verdict per position: hit, miss, ignored or bad label
  std::vector<int64_t> scores_shape_;  ///< for a deferred bad label's message
  BadLabelRecord bad_label_;           ///< a label outside the classes Forward_gpu found
};

}  // namespace demi

#endif  // DEMI_LAYERS_ACCURACY_LAYER_HPP_
