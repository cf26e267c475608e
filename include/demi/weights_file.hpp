#ifndef DEMI_WEIGHTS_FILE_HPP_
#define DEMI_WEIGHTS_FILE_HPP_

#include <string>

#include "demi/proto/demi.pb.h"

namespace demi {

/// A weights file (--weights, a solver's weights field, Net(prototxt,
/// weights)): a binary .caffemodel (legacy formats upgraded) or Caffe's
/// HDF5 weights, told apart by the file's signature as Caffe does. A solver
/// state given as weights is refused, saying to resume from it.
NetParameter ReadWeightsFile(const std::string& path);

}  // namespace demi

#endif  // DEMI_WEIGHTS_FILE_HPP_
