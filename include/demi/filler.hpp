#ifndef DEMI_FILLER_HPP_
#define DEMI_FILLER_HPP_

#include <memory>

#include "demi/blob.hpp"
#include "demi/common.hpp"
#include "demi/proto/demi.pb.h"

namespace demi {

/// @brief Initializes a blob's data from a FillerParameter, drawing from an
/// explicit random engine. Types, as in Caffe: constant, uniform, gaussian
/// (with `sparse`), positive_unitball, xavier, msra, bilinear.
///
/// Fan-in of a blob of shape (N, ...) is count / N and fan-out is count /
/// shape(1), as Caffe computes them; `variance_norm` picks FAN_IN, FAN_OUT or
/// their AVERAGE for xavier and msra.
class Filler {
 public:
  explicit Filler(const FillerParameter& param) : param_(param) {}
  virtual ~Filler() = default;
  virtual void Fill(Blob* blob, RandomEngine* engine) = 0;
  const FillerParameter& param() const { return param_; }

 protected:
  FillerParameter param_;
};

/// Creates the filler for `param.type()`; an unknown type throws an Error.
std::unique_ptr<Filler> GetFiller(const FillerParameter& param);

}  // namespace demi

#endif  // DEMI_FILLER_HPP_
