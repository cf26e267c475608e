#include "demi/util/upgrade_v1.hpp"

#include "demi/common.hpp"

namespace demi {

bool NetNeedsV1Upgrade(const NetParameter& param) { return param.layers_size() > 0; }

std::string V1LayerTypeName(V1LayerParameter::LayerType type) {
  switch (type) {
    case V1LayerParameter::NONE:
      return "";
    case V1LayerParameter::ABSVAL:
      return "AbsVal";
    case V1LayerParameter::ACCURACY:
      return "Accuracy";
    case V1LayerParameter::ARGMAX:
      return "ArgMax";
    case V1LayerParameter::BNLL:
      return "BNLL";
    case V1LayerParameter::CONCAT:
      return "Concat";
    case V1LayerParameter::CONTRASTIVE_LOSS:
      return "ContrastiveLoss";
    case V1LayerParameter::CONVOLUTION:
      return "Convolution";
    case V1LayerParameter::DATA:
      return "Data";
    case V1LayerParameter::DECONVOLUTION:
      return "Deconvolution";
    case V1LayerParameter::DROPOUT:
      return "Dropout";
    case V1LayerParameter::DUMMY_DATA:
      return "DummyData";
    case V1LayerParameter::EUCLIDEAN_LOSS:
      return "EuclideanLoss";
    case V1LayerParameter::ELTWISE:
      return "Eltwise";
    case V1LayerParameter::EXP:
      return "Exp";
    case V1LayerParameter::FLATTEN:
      return "Flatten";
    case V1LayerParameter::HDF5_DATA:
      return "HDF5Data";
    case V1LayerParameter::HDF5_OUTPUT:
      return "HDF5Output";
    case V1LayerParameter::HINGE_LOSS:
      return "HingeLoss";
    case V1LayerParameter::IM2COL:
      return "Im2col";
    case V1LayerParameter::IMAGE_DATA:
      return "ImageData";
    case V1LayerParameter::INFOGAIN_LOSS:
      return "InfogainLoss";
    case V1LayerParameter::INNER_PRODUCT:
      return "InnerProduct";
    case V1LayerParameter::LRN:
      return "LRN";
    case V1LayerParameter::MEMORY_DATA:
      return "MemoryData";
    case V1LayerParameter::MULTINOMIAL_LOGISTIC_LOSS:
      return "MultinomialLogisticLoss";
    case V1LayerParameter::MVN:
      return "MVN";
    case V1LayerParameter::POOLING:
      return "Pooling";
    case V1LayerParameter::POWER:
      return "Power";
    case V1LayerParameter::RELU:
      return "ReLU";
    case V1LayerParameter::SIGMOID:
      return "Sigmoid";
    case V1LayerParameter::SIGMOID_CROSS_ENTROPY_LOSS:
      return "SigmoidCrossEntropyLoss";
    case V1LayerParameter::SILENCE:
      return "Silence";
    case V1LayerParameter::SOFTMAX:
      return "Softmax";
    case V1LayerParameter::SOFTMAX_LOSS:
      return "SoftmaxWithLoss";
    case V1LayerParameter::SPLIT:
      return "Split";
    case V1LayerParameter::SLICE:
      return "Slice";
    case V1LayerParameter::TANH:
      return "TanH";
    case V1LayerParameter::WINDOW_DATA:
      return "WindowData";
    case V1LayerParameter::THRESHOLD:
      return "Threshold";
  }
  return "";
}

namespace {

/// Returns the i-th ParamSpec of `layer`, adding empty ones up to it.
ParamSpec* ParamAt(LayerParameter* layer, int i) {
  while (layer->param_size() <= i) layer->add_param();
  return layer->mutable_param(i);
}

void UpgradeV1Layer(const V1LayerParameter& v1, int index, LayerParameter* layer) {
  const std::string name = v1.has_name() ? v1.name() : StrCat("#", index);
  DEMI_CHECK(!v1.has_layer(), "V1 layer '", name,
             "' nests a V0 layer definition; run UpgradeV0Net first");
  const std::string type = V1LayerTypeName(v1.type());
  DEMI_CHECK(!type.empty(), "V1 layer '", name, "' has no type (NONE)");
  layer->Clear();
  if (v1.has_name()) layer->set_name(v1.name());
  layer->set_type(type);
  for (const std::string& bottom : v1.bottom()) layer->add_bottom(bottom);
  for (const std::string& top : v1.top()) layer->add_top(top);
  for (const NetStateRule& rule : v1.include()) layer->add_include()->CopyFrom(rule);
  for (const NetStateRule& rule : v1.exclude()) layer->add_exclude()->CopyFrom(rule);
  for (const BlobProto& blob : v1.blobs()) layer->add_blobs()->CopyFrom(blob);
  for (int i = 0; i < v1.param_size(); ++i) ParamAt(layer, i)->set_name(v1.param(i));
  for (int i = 0; i < v1.blob_share_mode_size(); ++i) {
    ParamAt(layer, i)->set_share_mode(v1.blob_share_mode(i) == V1LayerParameter::PERMISSIVE
                                          ? ParamSpec::PERMISSIVE
                                          : ParamSpec::STRICT);
  }
  for (int i = 0; i < v1.blobs_lr_size(); ++i) ParamAt(layer, i)->set_lr_mult(v1.blobs_lr(i));
  for (int i = 0; i < v1.weight_decay_size(); ++i) {
    ParamAt(layer, i)->set_decay_mult(v1.weight_decay(i));
  }
  for (float weight : v1.loss_weight()) layer->add_loss_weight(weight);

  // The per-type messages are the same types in both formats.
  if (v1.has_accuracy_param()) layer->mutable_accuracy_param()->CopyFrom(v1.accuracy_param());
  if (v1.has_argmax_param()) layer->mutable_argmax_param()->CopyFrom(v1.argmax_param());
  if (v1.has_concat_param()) layer->mutable_concat_param()->CopyFrom(v1.concat_param());
  if (v1.has_contrastive_loss_param()) {
    layer->mutable_contrastive_loss_param()->CopyFrom(v1.contrastive_loss_param());
  }
  if (v1.has_convolution_param()) {
    layer->mutable_convolution_param()->CopyFrom(v1.convolution_param());
  }
  if (v1.has_data_param()) layer->mutable_data_param()->CopyFrom(v1.data_param());
  if (v1.has_dropout_param()) layer->mutable_dropout_param()->CopyFrom(v1.dropout_param());
  if (v1.has_dummy_data_param()) {
    layer->mutable_dummy_data_param()->CopyFrom(v1.dummy_data_param());
  }
  if (v1.has_eltwise_param()) layer->mutable_eltwise_param()->CopyFrom(v1.eltwise_param());
  if (v1.has_exp_param()) layer->mutable_exp_param()->CopyFrom(v1.exp_param());
  if (v1.has_hdf5_data_param()) layer->mutable_hdf5_data_param()->CopyFrom(v1.hdf5_data_param());
  if (v1.has_hdf5_output_param()) {
    layer->mutable_hdf5_output_param()->CopyFrom(v1.hdf5_output_param());
  }
  if (v1.has_hinge_loss_param()) {
    layer->mutable_hinge_loss_param()->CopyFrom(v1.hinge_loss_param());
  }
  if (v1.has_image_data_param()) {
    layer->mutable_image_data_param()->CopyFrom(v1.image_data_param());
  }
  if (v1.has_infogain_loss_param()) {
    layer->mutable_infogain_loss_param()->CopyFrom(v1.infogain_loss_param());
  }
  if (v1.has_inner_product_param()) {
    layer->mutable_inner_product_param()->CopyFrom(v1.inner_product_param());
  }
  if (v1.has_lrn_param()) layer->mutable_lrn_param()->CopyFrom(v1.lrn_param());
  if (v1.has_memory_data_param()) {
    layer->mutable_memory_data_param()->CopyFrom(v1.memory_data_param());
  }
  if (v1.has_mvn_param()) layer->mutable_mvn_param()->CopyFrom(v1.mvn_param());
  if (v1.has_pooling_param()) layer->mutable_pooling_param()->CopyFrom(v1.pooling_param());
  if (v1.has_power_param()) layer->mutable_power_param()->CopyFrom(v1.power_param());
  if (v1.has_relu_param()) layer->mutable_relu_param()->CopyFrom(v1.relu_param());
  if (v1.has_sigmoid_param()) layer->mutable_sigmoid_param()->CopyFrom(v1.sigmoid_param());
  if (v1.has_softmax_param()) layer->mutable_softmax_param()->CopyFrom(v1.softmax_param());
  if (v1.has_slice_param()) layer->mutable_slice_param()->CopyFrom(v1.slice_param());
  if (v1.has_tanh_param()) layer->mutable_tanh_param()->CopyFrom(v1.tanh_param());
  if (v1.has_threshold_param()) layer->mutable_threshold_param()->CopyFrom(v1.threshold_param());
  if (v1.has_window_data_param()) {
    layer->mutable_window_data_param()->CopyFrom(v1.window_data_param());
  }
  if (v1.has_transform_param()) layer->mutable_transform_param()->CopyFrom(v1.transform_param());
  if (v1.has_loss_param()) layer->mutable_loss_param()->CopyFrom(v1.loss_param());
}

}  // namespace

void UpgradeV1Net(const NetParameter& in, NetParameter* out) {
  DEMI_CHECK(in.layer_size() == 0 || in.layers_size() == 0, "net '", in.name(),
             "' has both 'layer' and legacy V1 'layers' fields; use one of them");
  NetParameter upgraded(in);
  upgraded.clear_layers();
  for (int i = 0; i < in.layers_size(); ++i) UpgradeV1Layer(in.layers(i), i, upgraded.add_layer());
  out->Swap(&upgraded);
}

}  // namespace demi
