#include "demi/weights_file.hpp"

#include "demi/common.hpp"
#include "demi/data/hdf5.hpp"
#include "demi/hdf5_snapshots.hpp"
#include "demi/util/strings.hpp"
#include "demi/util/upgrade_proto.hpp"

namespace demi {

NetParameter ReadWeightsFile(const std::string& path) {
  DEMI_CHECK(!EndsWith(path, ".solverstate") && !EndsWith(path, ".solverstate.h5"), "'", path,
             "' is a solver state, not weights (a .caffemodel); use --snapshot to resume from it");
  if (IsHdf5File(path)) return ReadHdf5Weights(path);
  NetParameter weights;
  ReadNetParamsFromBinaryFile(path, &weights);
  return weights;
}

}  // namespace demi
