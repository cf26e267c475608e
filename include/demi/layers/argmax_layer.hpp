#ifndef DEMI_LAYERS_ARGMAX_LAYER_HPP_
#define DEMI_LAYERS_ARGMAX_LAYER_HPP_

#include <vector>

#include "demi/layer.hpp"

namespace demi {

/// @brief Indices (or values) of the top_k largest entries, as in Caffe.
///
/// Without argmax_param.axis, each item n of an N x ... bottom is searched over
/// its count(1) values; the top is N x 1 x top_k (padded with axes of 1 to the
/// bottom's number of axes), or N x 2 x top_k with out_max_val: the indices,
/// then the values. With an axis, the search runs along that axis; the top is
/// the bottom's shape with that axis replaced by top_k and holds the indices,
/// or the values with out_max_val. Entries are ordered by decreasing value and,
/// among equal values, by decreasing index (Caffe's order). Indices are written
/// as floats. Not differentiable: Backward reads no data and is an error when
/// asked for the bottom's gradient.
class ArgMaxLayer : public Layer {
 public:
  using Layer::Layer;
  void LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  const char* type() const override { return "ArgMax"; }
  int ExactNumBottomBlobs() const override { return 1; }
  int ExactNumTopBlobs() const override { return 1; }
  bool AllowForceBackward(int) const override { return false; }
  bool BackwardReadsBottomData(int) const override { return false; }
  bool BackwardReadsTopData(int) const override { return false; }

 protected:
  void Forward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Backward_cpu(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob*>& bottom) override;

 private:
  bool out_max_val_ = false;
  bool has_axis_ = false;
  int64_t top_k_ = 1;
  int64_t outer_ = 0;           ///< searches before the axis
  int64_t dim_ = 0;             ///< values searched in each
  int64_t inner_ = 1;           ///< stride between them
  std::vector<int64_t> order_;  ///< a permutation of [0, dim_), sized in Reshape
};

}  // namespace demi

#endif  // DEMI_LAYERS_ARGMAX_LAYER_HPP_
