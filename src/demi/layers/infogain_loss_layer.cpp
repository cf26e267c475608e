#include "demi/layers/infogain_loss_layer.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>

#include "demi/layer_registry.hpp"
#include "demi/layers/layer_checks.hpp"
#include "demi/util/io.hpp"
#include "demi/util/math.hpp"

namespace demi {

void InfogainLossLayer::LayerSetUp(const std::vector<Blob*>& bottom,
                                   const std::vector<Blob*>& top) {
  const InfogainLossParameter& param = layer_param_.infogain_loss_param();
  if (bottom.size() < 3) {
    DEMI_CHECK(param.has_source(), "InfogainLoss layer '", layer_param_.name(),
               "' needs infogain_loss_param.source or the infogain matrix as a third bottom");
    BlobProto proto;
    try {
      ReadProtoFromBinaryFile(param.source(), &proto);
    } catch (const Error& error) {
      ThrowError(StrCat("InfogainLoss layer '", layer_param_.name(), "': ", error.what()));
    }
    infogain_.FromProto(proto);
  }
  CanonicalAxis(*this, *bottom[0], param.axis(), "infogain_loss_param.axis", "scores");
  SetUpSoftmax(bottom[0], param.axis());
}

void InfogainLossLayer::Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) {
  const Blob& scores = *bottom[0];
  const int axis = CanonicalAxis(*this, scores, layer_param_.infogain_loss_param().axis(),
                                 "infogain_loss_param.axis", "scores");
  outer_num_ = scores.count(0, axis);
  channels_ = scores.shape(axis);
  inner_num_ = scores.count(axis + 1);
  DEMI_CHECK(bottom[1]->count() == outer_num_ * inner_num_, "InfogainLoss layer '",
             layer_param_.name(), "': scores ", scores.shape_string(), " with class axis ", axis,
             " need ", outer_num_ * inner_num_, " labels, but the labels have shape ",
             bottom[1]->shape_string());
  const Blob& infogain = bottom.size() > 2 ? *bottom[2] : infogain_;
  DEMI_CHECK(infogain.count() == channels_ * channels_, "InfogainLoss layer '", layer_param_.name(),
             "': the infogain matrix of shape ", infogain.shape_string(), " needs ", channels_,
             " x ", channels_, " values for the ", channels_, " classes of scores ",
             scores.shape_string());
  ReshapeSoftmax(bottom[0]);
  LossLayer::Reshape(bottom, top);
  if (top.size() > 1) top[1]->ReshapeLike(scores);
}

const float* InfogainLossLayer::Infogain(const std::vector<Blob*>& bottom) const {
  return bottom.size() > 2 ? bottom[2]->cpu_data() : infogain_.cpu_data();
}

void InfogainLossLayer::Forward_cpu(const std::vector<Blob*>& bottom,
                                    const std::vector<Blob*>& top) {
  ForwardSoftmax(top);
  const float* infogain = Infogain(bottom);
  double loss = 0;
  const int64_t valid =
      ForEachLabeledColumn(bottom[1]->cpu_data(), [&](int64_t index, float label, float* column) {
        const float* row =
            infogain + WholeClassLabel(*this, label, index, channels_, *bottom[0]) * channels_;
        float row_sum = 0.0f;
        for (int64_t k = 0; k < channels_; ++k) {
          loss -= row[k] * std::log(std::max(column[k * inner_num_], FLT_MIN));
          row_sum += row[k];
        }
        // The probabilities become the unscaled gradient p_c sum_k H[l, k] - H[l, c].
        for (int64_t k = 0; k < channels_; ++k) {
          column[k * inner_num_] = column[k * inner_num_] * row_sum - row[k];
        }
      });
  normalizer_ =
      WriteNormalizedLoss(loss, Normalizer(normalization_, outer_num_, inner_num_, valid), top[0]);
}

void InfogainLossLayer::Backward_cpu(const std::vector<Blob*>& top,
                                     const std::vector<bool>& propagate_down,
                                     const std::vector<Blob*>& bottom) {
  if (bottom.size() > 2) RefuseGradient(propagate_down, 2, "the infogain matrix");
  BackwardFromSaved(top, propagate_down, bottom, "labels", prob_, normalizer_);
}

DEMI_REGISTER_LAYER(InfogainLoss);

}  // namespace demi
