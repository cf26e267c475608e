#include <gtest/gtest.h>

#include <limits>

#include "demi/layers/parameter_layer.hpp"
#include "gradient_checker.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

TEST(ParameterLayerTest, ForwardCopiesTheParam) {
  Blob y;
  std::vector<Blob*> bottom, top{&y};
  auto layer = MakeLayer(R"(type: "Parameter" parameter_param { shape { dim: 2 dim: 3 } })");
  layer->SetUp(bottom, top);
  ASSERT_EQ(layer->blobs().size(), 1u);
  EXPECT_EQ(layer->blobs()[0]->shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(DataOf(*layer->blobs()[0]), std::vector<float>(6, 0.0f));
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{2, 3}));
  FillValues(layer->blobs()[0].get(), {1, 2, 3, 4, 5, 6});
  layer->Forward(bottom, top);
  EXPECT_EQ(DataOf(y), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_NE(y.data(), layer->blobs()[0]->data());  // memory of its own

  auto loaded = MakeLayer(R"(type: "Parameter" parameter_param { shape { dim: 2 } }
                             blobs { shape { dim: 2 } data: [7, -8] })");
  loaded->SetUp(bottom, top);
  loaded->Forward(bottom, top);
  EXPECT_EQ(DataOf(y), (std::vector<float>{7, -8}));
}

TEST(ParameterLayerTest, BackwardAccumulatesAndReadsNoData) {
  Blob y;
  std::vector<Blob*> bottom, top{&y};
  auto layer = MakeLayer(R"(type: "Parameter" parameter_param { shape { dim: 3 } })");
  EXPECT_FALSE(layer->BackwardReadsTopData(0));
  layer->SetUp(bottom, top);
  layer->Forward(bottom, top);
  Set(3, std::numeric_limits<float>::quiet_NaN(), y.mutable_cpu_data());
  std::copy_n(std::vector<float>{1, 2, 3}.begin(), 3, y.mutable_cpu_diff());
  Blob& param = *layer->blobs()[0];
  Set(3, 1.0f, param.mutable_cpu_diff());
  layer->Backward(top, {}, bottom);
  EXPECT_EQ(DiffOf(param), (std::vector<float>{2, 3, 4}));
  layer->set_param_propagate_down(0, false);
  layer->Backward(top, {}, bottom);
  EXPECT_EQ(DiffOf(param), (std::vector<float>{2, 3, 4}));
}

TEST(ParameterLayerTest, Gradient) {
  for (const std::vector<int64_t>& shape : {std::vector<int64_t>{13}, {1, 127}, {2, 3, 4}, {1}}) {
    SCOPED_TRACE(ShapeString(shape));
    LayerParameter param = ParseText<LayerParameter>(R"(type: "Parameter")");
    for (int64_t dim : shape) param.mutable_parameter_param()->mutable_shape()->add_dim(dim);
    auto layer = LayerRegistry::Create(param);
    Blob y;
    std::vector<Blob*> bottom, top{&y};
    layer->SetUp(bottom, top);
    FillGaussian(layer->blobs()[0].get(), 361);
    GradientChecker checker(1e-2f, 1e-3f);
    checker.CheckGradient(layer.get(), bottom, top);
  }
}

TEST(ParameterLayerTest, PreloadedBlobOfTheWrongShapeIsAnError) {
  Blob y;
  std::vector<Blob*> bottom, top{&y};
  auto layer = MakeLayer(R"(name: "p" type: "Parameter" parameter_param { shape { dim: 3 } }
                            blobs { shape { dim: 2 } data: [1, 2] })");
  ExpectErrorContaining([&] { layer->SetUp(bottom, top); },
                        {"Parameter layer 'p'", "1 param blobs (the first of shape 2 (2))",
                         "parameter_param.shape is 3 (3)"});
}

}  // namespace
}  // namespace demi
