#include <gtest/gtest.h>

#include <limits>

#include "demi/layers/tile_layer.hpp"
#include "gradient_checker.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

TEST(TileLayerTest, ForwardMatchesHandComputed) {
  Blob x({2, 3});
  FillValues(&x, {1, 2, 3, 4, 5, 6});
  Blob y;
  std::vector<Blob*> bottom{&x}, top{&y};
  auto layer = MakeLayer(R"(type: "Tile" tile_param { tiles: 2 })");
  layer->SetUp(bottom, top);
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{2, 6}));
  layer->Forward(bottom, top);
  EXPECT_EQ(DataOf(y), (std::vector<float>{1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6}));
  auto rows = MakeLayer(R"(type: "Tile" tile_param { axis: 0 tiles: 3 })");
  rows->SetUp(bottom, top);
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{6, 3}));
  rows->Forward(bottom, top);
  EXPECT_EQ(DataOf(y), (std::vector<float>{1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6}));
}

TEST(TileLayerTest, BackwardSumsTheCopiesAndReadsNoData) {
  Blob x({2, 3});
  Blob y;
  std::vector<Blob*> bottom{&x}, top{&y};
  auto layer = MakeLayer(R"(type: "Tile" tile_param { axis: -1 tiles: 2 })");
  EXPECT_FALSE(layer->BackwardReadsBottomData(0));
  EXPECT_FALSE(layer->BackwardReadsTopData(0));
  layer->SetUp(bottom, top);
  layer->Forward(bottom, top);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Set(x.count(), nan, x.mutable_cpu_data());
  Set(y.count(), nan, y.mutable_cpu_data());
  for (int i = 0; i < 12; ++i) y.mutable_cpu_diff()[i] = static_cast<float>(i + 1);
  layer->Backward(top, {true}, bottom);
  EXPECT_EQ(DiffOf(x), (std::vector<float>{5, 7, 9, 17, 19, 21}));
}

TEST(TileLayerTest, Gradient) {
  struct Case {
    std::vector<int64_t> shape;
    const char* text;
  };
  for (const Case& c :
       std::vector<Case>{{{2, 3, 4, 5}, R"(type: "Tile" tile_param { tiles: 3 })"},
                         {{2, 3, 4, 5}, R"(type: "Tile" tile_param { axis: 3 tiles: 2 })"},
                         {{13}, R"(type: "Tile" tile_param { axis: 0 tiles: 2 })"},
                         {{1, 127}, R"(type: "Tile" tile_param { axis: -1 tiles: 2 })"},
                         {{1, 1}, R"(type: "Tile" tile_param { tiles: 13 })"},
                         {{3, 2}, R"(type: "Tile" tile_param { tiles: 1 })"}}) {
    SCOPED_TRACE(c.text);
    Blob x(c.shape);
    FillGaussian(&x, 321);
    Blob y;
    std::vector<Blob*> bottom{&x}, top{&y};
    auto layer = MakeLayer(c.text);
    GradientChecker checker(1e-2f, 1e-3f);
    checker.CheckGradient(layer.get(), bottom, top);
  }
}

TEST(TileLayerTest, BadParamsAreErrors) {
  Blob x({2, 3});
  Blob y;
  std::vector<Blob*> bottom{&x}, top{&y};
  auto unset = MakeLayer(R"(name: "tile" type: "Tile")");
  ExpectErrorContaining([&] { unset->SetUp(bottom, top); },
                        {"Tile layer 'tile'", "tile_param.tiles > 0, got 0"});
  auto axis = MakeLayer(R"(name: "tile" type: "Tile" tile_param { axis: 2 tiles: 2 })");
  ExpectErrorContaining([&] { axis->SetUp(bottom, top); },
                        {"Tile layer 'tile'", "tile_param.axis 2 is out of range", "2 3 (6)"});
}

}  // namespace
}  // namespace demi
