#ifndef DEMI_LAYERS_BATCH_REINDEX_LAYER_HPP_
#define DEMI_LAYERS_BATCH_REINDEX_LAYER_HPP_

#include "demi/layer.hpp"

namespace demi {

/// @brief Gathers items of a batch by index, as in Caffe: top[i] =
/// data[idx[i]].
///
/// Bottoms: the data, N x ..., and the indices, a 1-D blob of M integers in
/// [0, N) stored as floats (repeats allowed). Top: M x ... (the data's shape
/// with axis 0 replaced by M). An index out of range is an error naming the
/// layer, value and position. Backward accumulates the gradient back:
/// dx[n] = sum over i with idx[i] = n of dy[i] (zero for items never
/// gathered); the indices get no gradient. It reads the indices' data, not the
/// data's or the top's.
class BatchReindexLayer : public Layer {
 public:
  using Layer::Layer;
  void Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  const char* type() const override { return "BatchReindex"; }
  int ExactNumBottomBlobs() const override { return 2; }
  int ExactNumTopBlobs() const override { return 1; }
  bool AllowForceBackward(int bottom_index) const override { return bottom_index == 0; }
  bool BackwardReadsBottomData(int bottom_index) const override { return bottom_index == 1; }
  bool BackwardReadsTopData(int) const override { return false; }

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
  /// The item of `data` that `index`, at position i of the indices, names;
  /// throws unless it is a whole number in [0, N).
  int64_t CheckedItem(float index, int64_t i, const Blob& data) const;

  /// Backward_gpu's grouping of the positions by item: N + 1 group starts,
  /// then the positions (built on the host, as floats).
  Blob gather_;
};

}  // namespace demi

#endif  // DEMI_LAYERS_BATCH_REINDEX_LAYER_HPP_
