#include <gtest/gtest.h>

#include <limits>

#include "demi/layers/batch_reindex_layer.hpp"
#include "gradient_checker.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

class BatchReindexLayerTest : public ::testing::Test {
 protected:
  BatchReindexLayerTest() : data_({3, 2}), index_({4}) {
    FillValues(&data_, {0, 1, 2, 3, 4, 5});
    FillValues(&index_, {2, 0, 2, 1});
  }
  Blob data_;
  Blob index_;
  Blob y_;
  std::vector<Blob*> bottom_{&data_, &index_};
  std::vector<Blob*> top_{&y_};
};

TEST_F(BatchReindexLayerTest, ForwardGathersItems) {
  auto layer = MakeLayer(R"(type: "BatchReindex")");
  layer->SetUp(bottom_, top_);
  EXPECT_EQ(y_.shape(), (std::vector<int64_t>{4, 2}));
  layer->Forward(bottom_, top_);
  EXPECT_EQ(DataOf(y_), (std::vector<float>{4, 5, 0, 1, 4, 5, 2, 3}));
}

TEST_F(BatchReindexLayerTest, BackwardAccumulatesReadingOnlyTheIndices) {
  auto layer = MakeLayer(R"(type: "BatchReindex")");
  EXPECT_FALSE(layer->BackwardReadsBottomData(0));
  EXPECT_TRUE(layer->BackwardReadsBottomData(1));
  EXPECT_FALSE(layer->BackwardReadsTopData(0));
  EXPECT_TRUE(layer->AllowForceBackward(0));
  EXPECT_FALSE(layer->AllowForceBackward(1));
  layer->SetUp(bottom_, top_);
  layer->Forward(bottom_, top_);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Set(data_.count(), nan, data_.mutable_cpu_data());
  Set(y_.count(), nan, y_.mutable_cpu_data());
  for (int i = 0; i < 8; ++i) y_.mutable_cpu_diff()[i] = static_cast<float>(i + 1);
  layer->Backward(top_, {true, false}, bottom_);
  // Item 0 from position 1, item 1 from position 3, item 2 from positions 0 and 2.
  EXPECT_EQ(DiffOf(data_), (std::vector<float>{3, 4, 7, 8, 6, 8}));
  FillValues(&index_, {1, 1, 1, 1});
  layer->Forward(bottom_, top_);
  layer->Backward(top_, {true, false}, bottom_);
  EXPECT_EQ(DiffOf(data_), (std::vector<float>{0, 0, 16, 20, 0, 0}));
}

TEST_F(BatchReindexLayerTest, Gradient) {
  struct Case {
    std::vector<int64_t> data;
    std::vector<float> index;
  };
  std::vector<float> long_index(127);
  for (int i = 0; i < 127; ++i) long_index[i] = static_cast<float>(i * 5 % 13);
  for (const Case& c : std::vector<Case>{{{5, 3, 2}, {4, 0, 0, 2, 3, 4, 1}},
                                         {{13}, long_index},
                                         {{1, 127}, {0}},
                                         {{3, 1, 2, 2}, {2, 2}}}) {
    SCOPED_TRACE(ShapeString(c.data));
    Blob data(c.data);
    FillGaussian(&data, 351);
    Blob index({static_cast<int64_t>(c.index.size())});
    FillValues(&index, c.index);
    Blob y;
    std::vector<Blob*> bottom{&data, &index}, top{&y};
    auto layer = MakeLayer(R"(type: "BatchReindex")");
    GradientChecker checker(1e-2f, 1e-3f);
    checker.CheckGradient(layer.get(), bottom, top, 0);
  }
}

TEST_F(BatchReindexLayerTest, BadIndicesAreErrors) {
  auto layer = MakeLayer(R"(name: "reindex" type: "BatchReindex")");
  layer->SetUp(bottom_, top_);
  index_.mutable_cpu_data()[1] = 3;
  ExpectErrorContaining([&] { layer->Forward(bottom_, top_); },
                        {"BatchReindex layer 'reindex'", "index 3 at position 1", "3 2 (6)"});
  index_.mutable_cpu_data()[1] = -1;
  ExpectErrorContaining([&] { layer->Forward(bottom_, top_); }, {"index -1 at position 1"});
  index_.mutable_cpu_data()[1] = 0.5f;
  ExpectErrorContaining([&] { layer->Forward(bottom_, top_); }, {"index 0.5 at position 1"});
  index_.mutable_cpu_data()[1] = 0;
  layer->Forward(bottom_, top_);
  ExpectErrorContaining(
      [&] {
        layer->Backward(top_, {true, true}, bottom_);
      },
      {"BatchReindex layer 'reindex'", "cannot backpropagate to its indices"});
  Blob index({2, 2});
  std::vector<Blob*> bottom{&data_, &index};
  auto two_d = MakeLayer(R"(name: "reindex" type: "BatchReindex")");
  ExpectErrorContaining(
      [&] { two_d->SetUp(bottom, top_); },
      {"BatchReindex layer 'reindex'", "1-D indices", "data 3 2 (6)", "indices 2 2 (4)"});
}

}  // namespace
}  // namespace demi
