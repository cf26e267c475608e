// Which blobs a net stores channels last (Net::ChooseChannelsLast, on a GPU
// in practice): the blobs passed only between layers that read the layout
// (Layer::channels_last_layouts()), a refusal spreading through a layer
// that takes one layout for all its blobs (kUniform) and stopping at one
// that takes each blob's own (kPerBlob), blobs of one pixel or one channel
// (the same bytes either way) kept in Caffe's layout without stopping
// anyone, a choice that never settles falling back to Caffe's layout, and
// NetParameter.channels_last turning it off. Stand-in layers
// declare what they take, so this runs on any CPU; the GPU layers' kernels
// are test_gpu_channels_last.cpp's, the CPU's test_cpu_channels_last.cpp's.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "demi/layer_registry.hpp"
#include "demi/layers/neuron_layer.hpp"
#include "demi/net.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

/// A layer of one bottom and one top, the top a copy of the bottom (or, for
/// "global", of its first pixel: N x C x 1 x 1), declaring which blobs it
/// reads channels last; a fickle one takes each blob's own layout only while
/// its top is in Caffe's (an engine that finds no kernel for the layout it
/// asked for).
class LayoutStandInLayer : public Layer {
 public:
  LayoutStandInLayer(const LayerParameter& param, BlobFormats formats, bool global, bool fickle)
      : Layer(param), formats_(formats), global_(global), fickle_(fickle) {}
  const char* type() const override { return "LayoutStandIn"; }
  int ExactNumBottomBlobs() const override { return 1; }
  int ExactNumTopBlobs() const override { return 1; }
  void Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override {
    if (global_) {
      top[0]->Reshape(bottom[0]->shape(0), bottom[0]->shape(1), 1, 1);
    } else {
      top[0]->ReshapeLike(*bottom[0]);
    }
    top_last_ = top[0]->channels_last();
  }
  BlobFormats channels_last_layouts() const override {
    return fickle_ && top_last_ ? BlobFormats::kNone : formats_;
  }

 protected:
  void Forward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override {
    std::copy_n(bottom[0]->cpu_data(), top[0]->count(), top[0]->mutable_cpu_data());
  }
  void Backward_cpu(const std::vector<Blob*>&, const std::vector<bool>&,
                    const std::vector<Blob*>&) override {}

 private:
  BlobFormats formats_;
  bool global_, fickle_;
  bool top_last_ = false;
};

void RegisterStandIns() {
  static const bool registered = [] {
    const struct {
      const char* name;
      BlobFormats formats;
      bool global, fickle;
    } kinds[] = {{"PerBlobStandIn", BlobFormats::kPerBlob, false, false},
                 {"UniformStandIn", BlobFormats::kUniform, false, false},
                 {"RefusingStandIn", BlobFormats::kNone, false, false},
                 {"GlobalStandIn", BlobFormats::kUniform, true, false},
                 {"FickleStandIn", BlobFormats::kPerBlob, false, true}};
    for (const auto& kind : kinds) {
      LayerRegistry::Add(kind.name, [kind](const LayerParameter& param) {
        return std::make_unique<LayoutStandInLayer>(param, kind.formats, kind.global, kind.fickle);
      });
    }
    return true;
  }();
  (void)registered;
}

// data -> a (per blob) -> b (uniform) -> g (global, 1 x 1) -> r (refusing)
// data -> a2 (per blob) -> u (uniform) -> n (refusing)
// one (a single channel) -> o (per blob) -> o2 (refusing)
constexpr char kNet[] = R"(
  name: 'layouts'
  layer { name: 'data' type: 'Input' top: 'data' top: 'one'
          input_param { shape { dim: 2 dim: 4 dim: 3 dim: 3 } shape { dim: 2 dim: 1 dim: 3 dim: 3 } } }
  layer { name: 'a' type: 'PerBlobStandIn' bottom: 'data' top: 'a' }
  layer { name: 'b' type: 'UniformStandIn' bottom: 'a' top: 'b' }
  layer { name: 'g' type: 'GlobalStandIn' bottom: 'b' top: 'g' }
  layer { name: 'r' type: 'RefusingStandIn' bottom: 'g' top: 'r' }
  layer { name: 'a2' type: 'PerBlobStandIn' bottom: 'data' top: 'a2' }
  layer { name: 'u' type: 'UniformStandIn' bottom: 'a2' top: 'u' }
  layer { name: 'n' type: 'RefusingStandIn' bottom: 'u' top: 'n' }
  layer { name: 'o' type: 'PerBlobStandIn' bottom: 'one' top: 'o' }
  layer { name: 'o2' type: 'RefusingStandIn' bottom: 'o' top: 'o2' }
)";

std::unique_ptr<Net> LayoutNet(bool channels_last, const std::string& text = kNet) {
  RegisterStandIns();
  NetParameter param = ParseText<NetParameter>(text);
  param.mutable_state()->set_phase(TEST);
  param.set_channels_last(channels_last);
  return std::make_unique<Net>(param, Context());
}

TEST(ChannelsLastNetTest, GivesTheLayoutToTheBlobsOnlyItsReadersTouch) {
  auto net = LayoutNet(true);
  // a and b: every layer touching them reads channels last; g, one pixel,
  // stops neither b nor the refusing r.
  for (const char* name : {"a", "b"}) {
    EXPECT_TRUE(net->blob_by_name(name)->channels_last()) << name;
    EXPECT_EQ(net->blob_by_name(name)->channel_block(), 4) << name;
  }
  // n refuses u, and the uniform layer making u then refuses a2 too; the
  // input, the outputs and the single-channel blobs stay in Caffe's layout.
  for (const char* name : {"data", "g", "r", "a2", "u", "n", "one", "o", "o2"}) {
    EXPECT_EQ(net->blob_by_name(name)->channel_block(), 1) << name;
  }
}

TEST(ChannelsLastNetTest, AnOutputWrittenInPlaceKeepsCaffesLayout) {
  // b reads a in place, yet a is still the net's output, which the user
  // reads in Caffe's layout; c, read by d and by no one after, is not.
  auto net = LayoutNet(true, R"(
    name: 'in_place_output'
    layer { name: 'data' type: 'Input' top: 'data'
            input_param { shape { dim: 2 dim: 4 dim: 3 dim: 3 } } }
    layer { name: 'a' type: 'PerBlobStandIn' bottom: 'data' top: 'a' }
    layer { name: 'b' type: 'UniformStandIn' bottom: 'a' top: 'a' }
    layer { name: 'c' type: 'PerBlobStandIn' bottom: 'data' top: 'c' }
    layer { name: 'd' type: 'PerBlobStandIn' bottom: 'c' top: 'd' }
  )");
  EXPECT_EQ(net->blob_by_name("a")->channel_block(), 1);
  EXPECT_TRUE(net->blob_by_name("c")->channels_last());
  EXPECT_EQ(net->blob_by_name("d")->channel_block(), 1);
}

TEST(ChannelsLastNetTest, TheNetFieldTurnsItOff) {
  auto net = LayoutNet(false);
  for (size_t b = 0; b < net->blobs().size(); ++b) {
    EXPECT_EQ(net->blobs()[b]->channel_block(), 1) << net->blob_names()[b];
  }
}

TEST(ChannelsLastNetTest, ALayoutThatNeverSettlesFallsBackToCaffesLayout) {
  // f offers the layout while its top is in Caffe's and refuses it once
  // there: the choice would cycle, so after its rounds every blob keeps
  // Caffe's layout (the well-behaved branch too), and the net is built.
  auto net = LayoutNet(true, R"(
    name: 'fickle'
    layer { name: 'data' type: 'Input' top: 'data'
            input_param { shape { dim: 2 dim: 4 dim: 3 dim: 3 } } }
    layer { name: 'f' type: 'FickleStandIn' bottom: 'data' top: 'f' }
    layer { name: 'p' type: 'PerBlobStandIn' bottom: 'f' top: 'p' }
    layer { name: 'a' type: 'PerBlobStandIn' bottom: 'data' top: 'a' }
    layer { name: 'b' type: 'PerBlobStandIn' bottom: 'a' top: 'b' }
  )");
  for (size_t b = 0; b < net->blobs().size(); ++b) {
    EXPECT_EQ(net->blobs()[b]->channel_block(), 1) << net->blob_names()[b];
  }
}

}  // namespace
}  // namespace demi
