#include "demi/util/upgrade_v0.hpp"

#include <initializer_list>
#include <map>
#include <string>
#include <vector>

#include "demi/common.hpp"

namespace demi {

bool NetNeedsV0Upgrade(const NetParameter& param) {
  for (const V1LayerParameter& layer : param.layers()) {
    if (layer.has_layer()) return true;
  }
  return false;
}

namespace {

/// The V1 enum of a V0 type string; NONE for an unknown one.
V1LayerParameter::LayerType V0LayerType(const std::string& type) {
  static const std::map<std::string, V1LayerParameter::LayerType> kTypes = {
      {"accuracy", V1LayerParameter::ACCURACY},
      {"bnll", V1LayerParameter::BNLL},
      {"concat", V1LayerParameter::CONCAT},
      {"conv", V1LayerParameter::CONVOLUTION},
      {"data", V1LayerParameter::DATA},
      {"dropout", V1LayerParameter::DROPOUT},
      {"euclidean_loss", V1LayerParameter::EUCLIDEAN_LOSS},
      {"flatten", V1LayerParameter::FLATTEN},
      {"hdf5_data", V1LayerParameter::HDF5_DATA},
      {"hdf5_output", V1LayerParameter::HDF5_OUTPUT},
      {"im2col", V1LayerParameter::IM2COL},
      {"images", V1LayerParameter::IMAGE_DATA},
      {"infogain_loss", V1LayerParameter::INFOGAIN_LOSS},
      {"innerproduct", V1LayerParameter::INNER_PRODUCT},
      {"lrn", V1LayerParameter::LRN},
      {"multinomial_logistic_loss", V1LayerParameter::MULTINOMIAL_LOGISTIC_LOSS},
      {"pool", V1LayerParameter::POOLING},
      {"relu", V1LayerParameter::RELU},
      {"sigmoid", V1LayerParameter::SIGMOID},
      {"softmax", V1LayerParameter::SOFTMAX},
      {"softmax_loss", V1LayerParameter::SOFTMAX_LOSS},
      {"split", V1LayerParameter::SPLIT},
      {"tanh", V1LayerParameter::TANH},
      {"window_data", V1LayerParameter::WINDOW_DATA},
  };
  const auto it = kTypes.find(type);
  return it == kTypes.end() ? V1LayerParameter::NONE : it->second;
}

std::string EntryName(const V1LayerParameter& entry, int index) {
  if (entry.has_layer() && entry.layer().has_name()) return entry.layer().name();
  return entry.has_name() ? entry.name() : StrCat("#", index);
}

bool IsV0Type(const V1LayerParameter& entry, const std::string& type) {
  return entry.has_layer() && entry.layer().type() == type;
}

/// The net's `layers` without its V0 padding layers, each pad moved into the
/// conv or pool layer that reads the padded blob, which reads the padding
/// layer's input instead.
std::vector<V1LayerParameter> FoldPaddingLayers(const NetParameter& in) {
  std::map<std::string, int> producer;  // blob -> index of the last layer writing it
  std::vector<V1LayerParameter> folded;
  for (int i = 0; i < in.layers_size(); ++i) {
    const V1LayerParameter& entry = in.layers(i);
    if (IsV0Type(entry, "padding")) {
      DEMI_CHECK(entry.bottom_size() == 1 && entry.top_size() == 1, "V0 padding layer '",
                 EntryName(entry, i), "' must have one bottom and one top, not ",
                 entry.bottom_size(), " and ", entry.top_size());
    } else {
      V1LayerParameter layer(entry);
      for (int j = 0; j < entry.bottom_size(); ++j) {
        const auto it = producer.find(entry.bottom(j));
        if (it == producer.end() || !IsV0Type(in.layers(it->second), "padding")) continue;
        const V1LayerParameter& padding = in.layers(it->second);
        DEMI_CHECK(IsV0Type(entry, "conv") || IsV0Type(entry, "pool"), "V0 padding layer '",
                   EntryName(padding, it->second), "' feeds layer '", EntryName(entry, i),
                   "', which is not a conv or pool layer that could take its pad");
        DEMI_CHECK(entry.bottom_size() == 1, "V0 layer '", EntryName(entry, i),
                   "' reads padding layer '", EntryName(padding, it->second), "' but has ",
                   entry.bottom_size(), " bottoms; a padded conv or pool layer takes one");
        layer.set_bottom(j, padding.bottom(0));
        layer.mutable_layer()->set_pad(padding.layer().pad());
      }
      folded.push_back(layer);
    }
    for (const std::string& top : entry.top()) producer[top] = i;
  }
  return folded;
}

void UpgradeV0Layer(const V1LayerParameter& entry, int index, V1LayerParameter* v1) {
  if (!entry.has_layer()) {
    v1->CopyFrom(entry);
    return;
  }
  const V0LayerParameter& v0 = entry.layer();
  const std::string name = EntryName(entry, index);
  const std::string& type = v0.type();
  const V1LayerParameter::LayerType v1_type = V0LayerType(type);
  DEMI_CHECK(v1_type != V1LayerParameter::NONE, "V0 layer '", name, "' has unknown type '", type,
             "'");
  v1->Clear();
  v1->set_name(name);
  v1->set_type(v1_type);
  for (const std::string& bottom : entry.bottom()) v1->add_bottom(bottom);
  for (const std::string& top : entry.top()) v1->add_top(top);
  for (const BlobProto& blob : v0.blobs()) v1->add_blobs()->CopyFrom(blob);
  for (float lr : v0.blobs_lr()) v1->add_blobs_lr(lr);
  for (float decay : v0.weight_decay()) v1->add_weight_decay(decay);

  // A field set on a type that has no place for it would be lost silently.
  const auto takes = [&](const char* field, std::initializer_list<const char*> types) {
    bool known = false;
    for (const char* t : types) known = known || type == t;
    DEMI_CHECK(known, "V0 layer '", name, "' of type '", type, "' sets ", field,
               ", which that type does not take");
    return true;
  };
  const bool conv = type == "conv";
  const bool data = type == "data";
  const bool images = type == "images";
  const auto conv_param = [&] { return v1->mutable_convolution_param(); };
  const auto ip_param = [&] { return v1->mutable_inner_product_param(); };
  const auto transform = [&] { return v1->mutable_transform_param(); };
  const auto window = [&] { return v1->mutable_window_data_param(); };
  if (v0.has_num_output() && takes("num_output", {"conv", "innerproduct"})) {
    conv ? conv_param()->set_num_output(v0.num_output())
         : ip_param()->set_num_output(v0.num_output());
  }
  if (v0.has_biasterm() && takes("biasterm", {"conv", "innerproduct"})) {
    conv ? conv_param()->set_bias_term(v0.biasterm()) : ip_param()->set_bias_term(v0.biasterm());
  }
  if (v0.has_weight_filler() && takes("weight_filler", {"conv", "innerproduct"})) {
    (conv ? conv_param()->mutable_weight_filler() : ip_param()->mutable_weight_filler())
        ->CopyFrom(v0.weight_filler());
  }
  if (v0.has_bias_filler() && takes("bias_filler", {"conv", "innerproduct"})) {
    (conv ? conv_param()->mutable_bias_filler() : ip_param()->mutable_bias_filler())
        ->CopyFrom(v0.bias_filler());
  }
  if (v0.has_pad() && takes("pad", {"conv", "pool"})) {
    conv ? conv_param()->add_pad(v0.pad()) : v1->mutable_pooling_param()->set_pad(v0.pad());
  }
  if (v0.has_kernelsize() && takes("kernelsize", {"conv", "pool"})) {
    conv ? conv_param()->add_kernel_size(v0.kernelsize())
         : v1->mutable_pooling_param()->set_kernel_size(v0.kernelsize());
  }
  if (v0.has_stride() && takes("stride", {"conv", "pool"})) {
    conv ? conv_param()->add_stride(v0.stride())
         : v1->mutable_pooling_param()->set_stride(v0.stride());
  }
  if (v0.has_group() && takes("group", {"conv"})) conv_param()->set_group(v0.group());
  if (v0.has_pool() && takes("pool", {"pool"})) {
    v1->mutable_pooling_param()->set_pool(static_cast<PoolingParameter::PoolMethod>(v0.pool()));
  }
  if (v0.has_dropout_ratio() && takes("dropout_ratio", {"dropout"})) {
    v1->mutable_dropout_param()->set_dropout_ratio(v0.dropout_ratio());
  }
  if (v0.has_local_size() && takes("local_size", {"lrn"})) {
    v1->mutable_lrn_param()->set_local_size(v0.local_size());
  }
  if (v0.has_alpha() && takes("alpha", {"lrn"})) v1->mutable_lrn_param()->set_alpha(v0.alpha());
  if (v0.has_beta() && takes("beta", {"lrn"})) v1->mutable_lrn_param()->set_beta(v0.beta());
  if (v0.has_k() && takes("k", {"lrn"})) v1->mutable_lrn_param()->set_k(v0.k());
  if (v0.has_source() &&
      takes("source", {"data", "hdf5_data", "images", "window_data", "infogain_loss"})) {
    if (data) v1->mutable_data_param()->set_source(v0.source());
    if (type == "hdf5_data") v1->mutable_hdf5_data_param()->set_source(v0.source());
    if (images) v1->mutable_image_data_param()->set_source(v0.source());
    if (type == "window_data") v1->mutable_window_data_param()->set_source(v0.source());
    if (type == "infogain_loss") v1->mutable_infogain_loss_param()->set_source(v0.source());
  }
  if (v0.has_batchsize() && takes("batchsize", {"data", "hdf5_data", "images", "window_data"})) {
    if (data) v1->mutable_data_param()->set_batch_size(v0.batchsize());
    if (type == "hdf5_data") v1->mutable_hdf5_data_param()->set_batch_size(v0.batchsize());
    if (images) v1->mutable_image_data_param()->set_batch_size(v0.batchsize());
    if (type == "window_data") v1->mutable_window_data_param()->set_batch_size(v0.batchsize());
  }
  if (v0.has_rand_skip() && takes("rand_skip", {"data", "images"})) {
    data ? v1->mutable_data_param()->set_rand_skip(v0.rand_skip())
         : v1->mutable_image_data_param()->set_rand_skip(v0.rand_skip());
  }
  // The image transformations of the data layers.
  if (v0.has_scale() && takes("scale", {"data", "images", "window_data"})) {
    transform()->set_scale(v0.scale());
  }
  if (v0.has_meanfile() && takes("meanfile", {"data", "images", "window_data"})) {
    transform()->set_mean_file(v0.meanfile());
  }
  if (v0.has_cropsize() && takes("cropsize", {"data", "images", "window_data"})) {
    transform()->set_crop_size(v0.cropsize());
  }
  if (v0.has_mirror() && takes("mirror", {"data", "images", "window_data"})) {
    transform()->set_mirror(v0.mirror());
  }
  if (v0.has_shuffle_images() && takes("shuffle_images", {"images"})) {
    v1->mutable_image_data_param()->set_shuffle(v0.shuffle_images());
  }
  if (v0.has_new_height() && takes("new_height", {"images"})) {
    v1->mutable_image_data_param()->set_new_height(v0.new_height());
  }
  if (v0.has_new_width() && takes("new_width", {"images"})) {
    v1->mutable_image_data_param()->set_new_width(v0.new_width());
  }
  if (v0.has_new_num()) takes("new_num", {});
  if (v0.has_new_channels()) takes("new_channels", {});
  if (v0.has_concat_dim() && takes("concat_dim", {"concat"})) {
    v1->mutable_concat_param()->set_concat_dim(v0.concat_dim());
  }
  if (v0.has_det_fg_threshold() && takes("det_fg_threshold", {"window_data"})) {
    window()->set_fg_threshold(v0.det_fg_threshold());
  }
  if (v0.has_det_bg_threshold() && takes("det_bg_threshold", {"window_data"})) {
    window()->set_bg_threshold(v0.det_bg_threshold());
  }
  if (v0.has_det_fg_fraction() && takes("det_fg_fraction", {"window_data"})) {
    window()->set_fg_fraction(v0.det_fg_fraction());
  }
  if (v0.has_det_context_pad() && takes("det_context_pad", {"window_data"})) {
    window()->set_context_pad(v0.det_context_pad());
  }
  if (v0.has_det_crop_mode() && takes("det_crop_mode", {"window_data"})) {
    window()->set_crop_mode(v0.det_crop_mode());
  }
  if (v0.has_hdf5_output_param() && takes("hdf5_output_param", {"hdf5_output"})) {
    v1->mutable_hdf5_output_param()->CopyFrom(v0.hdf5_output_param());
  }
}

}  // namespace

void UpgradeV0Net(const NetParameter& in, NetParameter* out) {
  const std::vector<V1LayerParameter> folded = FoldPaddingLayers(in);
  NetParameter upgraded(in);
  upgraded.clear_layers();
  for (size_t i = 0; i < folded.size(); ++i) {
    UpgradeV0Layer(folded[i], static_cast<int>(i), upgraded.add_layers());
  }
  out->Swap(&upgraded);
}

}  // namespace demi
