#ifndef DEMI_UTIL_INSERT_SPLITS_HPP_
#define DEMI_UTIL_INSERT_SPLITS_HPP_

#include <string>

#include "demi/proto/demi.pb.h"

namespace demi {

/// Copies `in` to `out`, inserting a Split layer after every blob that more
/// than one layer reads (or that one layer reads and that also carries a
/// loss), so each consumer gets its own gradient to write. Names follow Caffe:
/// layer "<blob>_<producer>_<top index>_split", tops "..._split_<k>".
void InsertSplits(const NetParameter& in, NetParameter* out);

std::string SplitLayerName(const std::string& layer_name, const std::string& blob_name,
                           int blob_index);
std::string SplitBlobName(const std::string& layer_name, const std::string& blob_name,
                          int blob_index, int split_index);

}  // namespace demi

#endif  // DEMI_UTIL_INSERT_SPLITS_HPP_
