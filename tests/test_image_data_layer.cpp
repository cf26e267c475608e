#include <gtest/gtest.h>

#include <algorithm>
#include <opencv2/imgcodecs.hpp>

#include "data_test_util.hpp"
#include "demi/layers/image_data_layer.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

/// Image i: 2 x 3 BGR, pixel (h, w) channel c = 40 i + 10 c + 3 h + w.
cv::Mat Image(int i) {
  cv::Mat image(2, 3, CV_8UC3);
  for (int h = 0; h < 2; ++h) {
    for (int w = 0; w < 3; ++w) {
      for (int c = 0; c < 3; ++c)
        image.at<cv::Vec3b>(h, w)[c] = static_cast<uchar>(40 * i + 10 * c + 3 * h + w);
    }
  }
  return image;
}

class ImageDataLayerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int i = 0; i < 4; ++i) ASSERT_TRUE(cv::imwrite(dir_ / StrCat("img", i, ".png"), Image(i)));
    WriteFile(dir_ / "list.txt", "img0.png 0\nimg1.png 1\n\nimg2.png 2\nimg3.png 3\n");
  }

  std::unique_ptr<Layer> Make(const std::string& params, uint32_t seed = 1701) {
    auto layer = MakeLayer("name: 'images' type: 'ImageData' " + params);
    Context context;
    context.seed = seed;
    layer->set_context(context);
    layer->SetUp({}, top_);
    return layer;
  }

  std::string Params(const std::string& list, const std::string& extra) {
    return "image_data_param { source: '" + list + "' root_folder: '" + dir_.path() + "/' " +
           extra + " }";
  }

  TempDir dir_;
  Blob data_, label_;
  std::vector<Blob*> top_{&data_, &label_};
};

TEST_F(ImageDataLayerTest, ReadsTheListInOrder) {
  auto layer = Make("phase: TEST " + Params(dir_ / "list.txt", "batch_size: 3"));
  EXPECT_EQ(data_.shape(), (std::vector<int64_t>{3, 3, 2, 3}));
  layer->Forward({}, top_);
  EXPECT_EQ(DataOf(label_), (std::vector<float>{0, 1, 2}));
  // Row 1 (image 1), channel 2, h 1, w 2: 40 + 20 + 3 + 2.
  EXPECT_EQ(data_.data_at(1, 2, 1, 2), 65.0f);
  EXPECT_EQ(data_.data_at(0, 0, 0, 0), 0.0f);
  layer->Forward({}, top_);
  EXPECT_EQ(DataOf(label_), (std::vector<float>{3, 0, 1}));
  EXPECT_EQ(data_.data_at(0, 1, 0, 1), 120.0f + 10 + 1);
}

TEST_F(ImageDataLayerTest, GrayAndResize) {
  auto layer = Make("phase: TEST " + Params(dir_ / "list.txt",
                                            "batch_size: 2 is_color: false new_height: 4 "
                                            "new_width: 6"));
  EXPECT_EQ(data_.shape(), (std::vector<int64_t>{2, 1, 4, 6}));
}

TEST_F(ImageDataLayerTest, ShuffleIsAPermutationPerEpochKeyedBySeed) {
  auto orders = [&](uint32_t seed) {
    auto layer = Make(Params(dir_ / "list.txt", "batch_size: 4 shuffle: true"), seed);
    std::vector<std::vector<float>> epochs;
    for (int e = 0; e < 6; ++e) {
      layer->Forward({}, top_);
      epochs.push_back(DataOf(label_));
      std::vector<float> sorted = epochs.back();
      std::sort(sorted.begin(), sorted.end());
      EXPECT_EQ(sorted, (std::vector<float>{0, 1, 2, 3}));
      // Each row's pixels belong to its label's image.
      for (int row = 0; row < 4; ++row) {
        EXPECT_EQ(data_.data_at(row, 0, 0, 0), 40.0f * epochs.back()[row]);
      }
    }
    return epochs;
  };
  const auto a = orders(5);
  EXPECT_EQ(orders(5), a);
  EXPECT_NE(orders(6), a);
  EXPECT_NE(std::count(a.begin(), a.end(), a[0]), 6) << "the order changes between epochs";
}

// A shuffled list's read position is the epoch (which gives the order) and
// the place in it: a new layer restored to it reads the batches this one
// reads next.
TEST_F(ImageDataLayerTest, ARestoredReadPositionReadsOnInTheShuffledOrder) {
  const std::string params = "phase: TRAIN transform_param { mirror: true } " +
                             Params(dir_ / "list.txt", "batch_size: 3 shuffle: true");
  auto layer = Make(params);
  for (int b = 0; b < 2; ++b) layer->Forward({}, top_);
  DataReadPosition position;
  ASSERT_TRUE(layer->SaveReadPosition(&position));
  EXPECT_EQ(position.type(), "ImageData");
  EXPECT_EQ(position.epoch(), 1);
  EXPECT_EQ(position.index(), 2);
  EXPECT_EQ(position.stream_position(), 6);
  std::vector<float> next;
  for (int b = 0; b < 3; ++b) {
    layer->Forward({}, top_);
    for (const Blob* blob : top_) {
      next.insert(next.end(), blob->cpu_data(), blob->cpu_data() + blob->count());
    }
  }
  auto fresh = Make(params);
  fresh->RestoreReadPosition(position);
  std::vector<float> restored;
  for (int b = 0; b < 3; ++b) {
    fresh->Forward({}, top_);
    for (const Blob* blob : top_) {
      restored.insert(restored.end(), blob->cpu_data(), blob->cpu_data() + blob->count());
    }
  }
  EXPECT_EQ(restored, next);
}

TEST_F(ImageDataLayerTest, ListErrorsNameFileAndLine) {
  WriteFile(dir_ / "nolabel.txt", "img0.png 0\nimg1.png\n");
  ExpectErrorContaining(
      [&] { Make(Params(dir_ / "nolabel.txt", "")); },
      {"ImageData layer 'images'", dir_ / "nolabel.txt" + ":2", "'img1.png' has no label"});
  WriteFile(dir_ / "badlabel.txt", "img0.png zero\n");
  ExpectErrorContaining([&] { Make(Params(dir_ / "badlabel.txt", "")); },
                        {dir_ / "badlabel.txt" + ":1", "label 'zero' is not an integer"});
  WriteFile(dir_ / "empty.txt", "\n  \n");
  ExpectErrorContaining([&] { Make(Params(dir_ / "empty.txt", "")); },
                        {"ImageData layer 'images'", dir_ / "empty.txt", "is empty"});
  ExpectErrorContaining(
      [&] { Make(Params(dir_ / "missing.txt", "")); },
      {"ImageData layer 'images'", "cannot open image list", dir_ / "missing.txt"});
  ExpectErrorContaining([&] { Make("image_data_param { batch_size: 1 }"); }, {"has no source"});
  ExpectErrorContaining([&] { Make(Params(dir_ / "list.txt", "new_height: 4")); },
                        {"new_height and new_width must be given together"});
}

TEST_F(ImageDataLayerTest, BadImagesFailNamingFileAndLine) {
  WriteFile(dir_ / "bad.png", "this is not a PNG");
  WriteFile(dir_ / "withbad.txt", "img0.png 0\nimg1.png 1\nbad.png 2\n");
  auto layer = Make(Params(dir_ / "withbad.txt", "batch_size: 3"));
  ExpectErrorContaining(
      [&] { layer->Forward({}, top_); },
      {"ImageData layer 'images'", "image '" + (dir_ / "bad.png") + "'",
       "line 3 of '" + (dir_ / "withbad.txt") + "'", "does not decode as an image"});
  WriteFile(dir_ / "withmissing.txt", "img0.png 0\n\nnope.png 1\n");
  auto missing = Make(Params(dir_ / "withmissing.txt", "batch_size: 2"));
  ExpectErrorContaining([&] { missing->Forward({}, top_); },
                        {"image '" + (dir_ / "nope.png") + "' (line 3 of", "does not exist"});
  // The first image decides the shape, so a bad first image fails at setup.
  WriteFile(dir_ / "badfirst.txt", "nope.png 0\nimg0.png 1\n");
  ExpectErrorContaining([&] { Make(Params(dir_ / "badfirst.txt", "")); },
                        {"ImageData layer 'images'",
                         "image '" + (dir_ / "nope.png") + "' (line 1 of", "does not exist"});
}

TEST_F(ImageDataLayerTest, ATruncatedJpegFailsOrIsSkippedNamed) {
  std::vector<uchar> jpeg;
  ASSERT_TRUE(cv::imencode(".jpg", cv::Mat(2, 3, CV_8UC3, cv::Scalar(9, 8, 7)), jpeg));
  WriteFile(dir_ / "cut.jpg", std::string(jpeg.begin(), jpeg.begin() + jpeg.size() / 2));
  WriteFile(dir_ / "withcut.txt", "img0.png 0\ncut.jpg 1\nimg1.png 2\n");
  auto layer = Make(Params(dir_ / "withcut.txt", "batch_size: 2"));
  ExpectErrorContaining([&] { layer->Forward({}, top_); },
                        {"image '" + (dir_ / "cut.jpg") + "' (line 2 of", "is a truncated JPEG",
                         "skip_bad_records: true"});
  auto skipping = Make(Params(dir_ / "withcut.txt", "batch_size: 2 skip_bad_records: true"));
  skipping->Forward({}, top_);
  EXPECT_EQ(DataOf(label_), (std::vector<float>{0, 2}));
  // A bad first image is looked past for the example shape, too.
  WriteFile(dir_ / "cutfirst.txt", "cut.jpg 0\nimg3.png 3\n");
  EXPECT_THROW(Make(Params(dir_ / "cutfirst.txt", "")), Error);
  auto past = Make(Params(dir_ / "cutfirst.txt", "batch_size: 1 skip_bad_records: true"));
  EXPECT_EQ(data_.shape(), (std::vector<int64_t>{1, 3, 2, 3}));
  past->Forward({}, top_);
  EXPECT_EQ(DataOf(label_), (std::vector<float>{3}));
}

TEST_F(ImageDataLayerTest, ImageOfAnotherSizeFailsUnlessResized) {
  ASSERT_TRUE(cv::imwrite(dir_ / "big.png", cv::Mat(4, 4, CV_8UC3, cv::Scalar(1, 2, 3))));
  WriteFile(dir_ / "sizes.txt", "img0.png 0\nbig.png 1\n");
  auto layer = Make(Params(dir_ / "sizes.txt", "batch_size: 2"));
  ExpectErrorContaining([&] { layer->Forward({}, top_); },
                        {"image '" + (dir_ / "big.png") + "' (line 2 of",
                         "gives a 3x4x4 image, but the batch holds 3x2x3 images", "new_height"});
  auto resized = Make(Params(dir_ / "sizes.txt", "batch_size: 2 new_height: 3 new_width: 3"));
  resized->Forward({}, top_);
  EXPECT_EQ(data_.data_at(1, 2, 2, 2), 3.0f);
}

}  // namespace
}  // namespace demi
