#ifndef DEMI_OUTPUT_MEANS_HPP_
#define DEMI_OUTPUT_MEANS_HPP_

#include <cstddef>
#include <vector>

#include "demi/net.hpp"

namespace demi {

/// @brief The mean of every element of a net's outputs over the batches of
/// a test (Solver::Test, the `test` tool). Score i is the i-th element
/// counting through the output blobs in order.
class OutputMeans {
 public:
  /// Adds the outputs of the net's last Forward as one more batch.
  void Add(const Net& net);

  size_t size() const { return sums_.size(); }
  /// The blob of the net that score `i` is an element of.
  int blob_id(size_t i) const { return blob_ids_[i]; }
  /// Score `i` summed over the batches added, divided by their number.
  double mean(size_t i) const { return sums_[i] / batches_; }

 private:
  std::vector<double> sums_;
  std::vector<int> blob_ids_;
  int batches_ = 0;
};

}  // namespace demi

#endif  // DEMI_OUTPUT_MEANS_HPP_
