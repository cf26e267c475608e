#ifndef DEMI_LAYERS_LAYER_CHECKS_HPP_
#define DEMI_LAYERS_LAYER_CHECKS_HPP_

#include <cstdint>
#include <string>
#include <vector>

#include "demi/blob.hpp"
#include "demi/layer.hpp"

namespace demi {

// Checks of a layer's params and inputs that many layers make, each throwing
// an Error that names the layer (type and name), what was wrong and the shape
// it was checked against.

/// `axis`, the value of the param `field` (e.g. "softmax_param.axis"), as an
/// index in [0, num_axes) of `blob` (`what`, as the message names it), a
/// negative one counting from the end; throws when it is out of range.
int CanonicalAxis(const Layer& layer, const Blob& blob, int64_t axis, const char* field,
                  const char* what = "bottom");

/// The shape of `bottom`'s axes [axis, axis + num_axes), num_axes -1 meaning
/// up to the last: the params `param`.axis and `param`.num_axes (e.g.
/// "bias_param") that size a learned operand; throws unless they name such a
/// range.
std::vector<int64_t> AxesShape(const Layer& layer, const Blob& bottom, int axis, int num_axes,
                               const char* param);

/// The axis of `bottom` from which `operand` (a scale or bias, `what` in
/// the message) applies: `param`.axis, or 0 for a scalar operand; throws
/// unless `operand`'s shape is `bottom`'s from that axis on. `from_bottom`
/// says whether the operand is bottom 1 (else a param), for the message.
int OperandAxis(const Layer& layer, const Blob& bottom, const Blob& operand, int axis,
                const char* param, const char* what, bool from_bottom);

/// Throws unless `value`, the label at `index`, is one of the `classes`
/// classes of `scores`: in [0, classes).
void CheckClassLabel(const Layer& layer, int64_t value, int64_t index, int64_t classes,
                     const Blob& scores);
/// The same, for scores of shape `scores_shape` (a check deferred past the
/// Forward that saw the label: BadLabelRecord).
void CheckClassLabel(const Layer& layer, int64_t value, int64_t index, int64_t classes,
                     const std::vector<int64_t>& scores_shape);

/// The class that `label`, the label at `index`, names: throws unless it is
/// a whole number in [0, classes) of `scores`.
int64_t WholeClassLabel(const Layer& layer, float label, int64_t index, int64_t classes,
                        const Blob& scores);

/// Throws unless `bottom` and `top` are in Caffe's layout, where a GPU
/// layer's kernels for it run (its engine found none for channels last at
/// this shape, which the net avoids by keeping such a layer's blobs in
/// Caffe's layout: reaching this is a bug, not garbage to compute).
void CheckCaffeLayoutOnGpu(const Layer& layer, const Blob& bottom, const Blob& top);

}  // namespace demi

#endif  // DEMI_LAYERS_LAYER_CHECKS_HPP_
