#ifndef DEMI_LAYERS_HDF5_OUTPUT_LAYER_HPP_
#define DEMI_LAYERS_HDF5_OUTPUT_LAYER_HPP_

#include <memory>
#include <vector>

#include "demi/data/hdf5.hpp"
#include "demi/layer.hpp"

namespace demi {

/// @brief Writes its two bottoms to an HDF5 file as datasets `data` and
/// `label`, as Caffe's HDF5Output, so HDF5Data can read them back.
///
/// hdf5_output_param: file_name, created (or truncated) at setup. Each
/// Forward appends its batch along the first axis (Caffe's layer writes one
/// batch only; appending keeps every batch of a run), and flushes the file.
/// Bottoms: data and label, any shapes with the same first dimension. No tops.
/// Backward writes zero gradients where asked (the file adds no loss).
class HDF5OutputLayer : public Layer {
 public:
  using Layer::Layer;
  const char* type() const override { return "HDF5Output"; }

  void LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  int ExactNumBottomBlobs() const override { return 2; }
  int ExactNumTopBlobs() const override { return 0; }
  bool BackwardReadsTopData(int) const override { return false; }
  bool BackwardReadsBottomData(int) const override { return false; }
  /// Forward writes to a file: an order the planner picks keeps it in place.
  bool ForwardDraws() const override { return true; }

 protected:
  void Forward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Backward_cpu(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob*>& bottom) override;

 private:
  std::unique_ptr<Hdf5Appender> file_;
};

}  // namespace demi

#endif  // DEMI_LAYERS_HDF5_OUTPUT_LAYER_HPP_
