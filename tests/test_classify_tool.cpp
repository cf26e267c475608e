// The classify tool on a model trained by the train tool: images exported
// as PNG from a test LMDB get as top-1 the class the net computes for them,
// so that classify's top-1 agrees with the test tool's accuracy; batching
// changes nothing; a bad image ends it naming the file.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <opencv2/imgcodecs.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "data_test_util.hpp"
#include "demi/net.hpp"
#include "demi/util/batch_size.hpp"
#include "demi/util/io.hpp"
#include "solver_test_util.hpp"
#include "tool_test_util.hpp"

namespace demi {
namespace {

namespace fs = std::filesystem;

constexpr int kImages = 10;

// A small convolutional net on 28 x 28 bands (data_test_util's WriteBandsDB).
const char* kLayers = R"(
  layer { name: "conv" type: "Convolution" bottom: "data" top: "conv"
          convolution_param { num_output: 4 kernel_size: 5 stride: 2
                              weight_filler { type: "xavier" } } }
  layer { name: "relu" type: "ReLU" bottom: "conv" top: "conv" }
  layer { name: "ip" type: "InnerProduct" bottom: "conv" top: "ip"
          inner_product_param { num_output: 10 weight_filler { type: "xavier" } } }
)";

/// Trains the net once for every test: the model, its deploy prototxt, and
/// kImages test images as PNG with their labels.
class ClassifyToolTest : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new ScratchDir;
    WriteBandsDB(dir_->file("train_db"), 100);
    WriteBandsDB(dir_->file("test_db"), kImages);
    const std::string data = R"(
      layer { name: "data" type: "Data" top: "data" top: "label" include { phase: %PHASE% }
              transform_param { scale: 0.00390625 }
              data_param { source: "%SOURCE%" batch_size: %BATCH% backend: LMDB } })";
    auto data_layer = [&](const std::string& phase, const std::string& db, int batch) {
      std::string text = data;
      text.replace(text.find("%PHASE%"), 7, phase);
      text.replace(text.find("%SOURCE%"), 8, dir_->file(db));
      text.replace(text.find("%BATCH%"), 7, std::to_string(batch));
      return text;
    };
    WriteFileAtomically(
        dir_->file("train_val.prototxt"),
        StrCat("name: \"bands\"", data_layer("TRAIN", "train_db", 20),
               data_layer("TEST", "test_db", kImages), kLayers,
               R"(layer { name: "accuracy" type: "Accuracy" bottom: "ip" bottom: "label"
                          top: "accuracy" include { phase: TEST } }
                  layer { name: "loss" type: "SoftmaxWithLoss" bottom: "ip" bottom: "label"
                          top: "loss" })"));
    WriteFileAtomically(
        dir_->file("deploy.prototxt"),
        StrCat(R"(name: "bands"
          layer { name: "data" type: "Input" top: "data"
                  input_param { shape { dim: 1 dim: 1 dim: 28 dim: 28 } } })",
               kLayers, R"(layer { name: "prob" type: "Softmax" bottom: "ip" top: "prob" })"));
    WriteFileAtomically(dir_->file("solver.prototxt"),
                        StrCat("net: \"", dir_->file("train_val.prototxt"), "\"\n",
                               "base_lr: 0.05 momentum: 0.9 lr_policy: \"fixed\" max_iter: 30 "
                               "display: 0 random_seed: 3 snapshot_prefix: \"",
                               dir_->file("bands"), "\"\n"));
    train_output_ =
        new std::string(RunShell(StrCat("timeout 120 ", ToolPath("train"),
                                        " --logtostderr --solver=", dir_->file("solver.prototxt")))
                            .output);
    // The test images as the Data layer reads them, and as PNG files.
    datums_ = new std::vector<Datum>;
    auto cursor = LMDB::Open(dir_->file("test_db"), DBMode::kRead)->NewCursor();
    for (; cursor->valid(); cursor->Next()) {
      Datum datum;
      datum.ParseFromString(std::string(cursor->value()));
      const std::string& pixels = datum.data();
      cv::Mat image(28, 28, CV_8UC1, const_cast<char*>(pixels.data()));
      cv::imwrite(Image(static_cast<int>(datums_->size())), image);
      datums_->push_back(datum);
    }
    std::string labels;
    for (int i = 0; i < 10; ++i) labels += StrCat("band ", i, "\n");
    WriteFileAtomically(dir_->file("labels.txt"), labels);
  }
  static void TearDownTestSuite() {
    delete datums_;
    delete train_output_;
    delete dir_;
  }

  static std::string Image(int i) { return dir_->file(StrCat("image_", i, ".png")); }
  static std::string Model() { return dir_->file("bands_iter_30.caffemodel"); }
  static std::string AllImages() {
    std::string images;
    for (int i = 0; i < kImages; ++i) images += " " + Image(i);
    return images;
  }
  static Result Classify(const std::string& args) {
    return RunShell(StrCat("timeout 120 ", ToolPath("classify"), " --model=",
                           dir_->file("deploy.prototxt"), " --weights=", Model(), " ", args));
  }

  static ScratchDir* dir_;
  static std::string* train_output_;
  static std::vector<Datum>* datums_;
};

ScratchDir* ClassifyToolTest::dir_ = nullptr;
std::string* ClassifyToolTest::train_output_ = nullptr;
std::vector<Datum>* ClassifyToolTest::datums_ = nullptr;

struct Prediction {
  std::string path;
  std::vector<std::pair<double, std::string>> classes;  ///< probability, label
};

/// classify's output: a path line, then `  0.1234 - "label"` lines.
std::vector<Prediction> ParsePredictions(const std::string& output) {
  std::vector<Prediction> predictions;
  std::istringstream in(output);
  std::string line;
  const std::regex score(R"re(  ([0-9.]+) - "(.*)")re");
  std::smatch match;
  while (std::getline(in, line)) {
    if (std::regex_match(line, match, score)) {
      if (predictions.empty()) break;
      predictions.back().classes.emplace_back(std::stod(match[1].str()), match[2].str());
    } else if (!line.empty() && line[0] == '/') {
      predictions.push_back({line, {}});
    }
  }
  return predictions;
}

TEST_F(ClassifyToolTest, TopOneAgreesWithTheNetAndTheTestTool) {
  ASSERT_TRUE(fs::exists(Model())) << *train_output_;
  const Result run = Classify("--labels=" + dir_->file("labels.txt") +
                              " --input_scale=0.00390625 --top_k=3" + AllImages());
  ASSERT_EQ(run.status, 0) << run.output;
  const std::vector<Prediction> predictions = ParsePredictions(run.output);
  ASSERT_EQ(predictions.size(), static_cast<size_t>(kImages)) << run.output;

  // The same images through the deploy net, as the Data layer scales them.
  NetParameter param;
  ReadProtoFromTextFile(dir_->file("deploy.prototxt"), &param);
  param.mutable_state()->set_phase(TEST);
  SetBatchSize(&param, kImages);
  Net net(param);
  net.CopyTrainedLayersFrom(Model());
  float* input = net.input_blobs()[0]->mutable_cpu_data();
  for (int i = 0; i < kImages; ++i) {
    const std::string& pixels = (*datums_)[i].data();
    for (int j = 0; j < 28 * 28; ++j) {
      input[i * 28 * 28 + j] = static_cast<uint8_t>(pixels[j]) * 0.00390625f;
    }
  }
  net.Forward();
  const float* prob = net.output_blobs()[0]->cpu_data();
  int correct = 0;
  for (int i = 0; i < kImages; ++i) {
    const Prediction& prediction = predictions[i];
    EXPECT_EQ(prediction.path, Image(i));
    ASSERT_EQ(prediction.classes.size(), 3u) << run.output;
    int best = 0;
    for (int c = 1; c < 10; ++c) best = prob[i * 10 + c] > prob[i * 10 + best] ? c : best;
    EXPECT_EQ(prediction.classes[0].second, StrCat("band ", best)) << run.output;
    EXPECT_NEAR(prediction.classes[0].first, prob[i * 10 + best], 5.1e-5);
    EXPECT_GE(prediction.classes[0].first, prediction.classes[1].first);
    EXPECT_GE(prediction.classes[1].first, prediction.classes[2].first);
    if (prediction.classes[0].second == StrCat("band ", (*datums_)[i].label())) ++correct;
  }
  // The test tool scores the same images from the LMDB: one batch of kImages.
  const Result test = RunShell(StrCat("timeout 120 ", ToolPath("test"),
                                      " --logtostderr --model=", dir_->file("train_val.prototxt"),
                                      " --weights=", Model(), " --iterations=1"));
  ASSERT_EQ(test.status, 0) << test.output;
  std::smatch accuracy;
  ASSERT_TRUE(std::regex_search(test.output, accuracy, std::regex(R"(\] accuracy = (\S+))")))
      << test.output;
  EXPECT_NEAR(std::stod(accuracy[1].str()), correct / static_cast<double>(kImages), 1e-6);
}

TEST_F(ClassifyToolTest, BatchesAndImageListsGiveTheSameAnswers) {
  ASSERT_TRUE(fs::exists(Model())) << *train_output_;
  const Result one = Classify("--input_scale=0.00390625" + AllImages());
  ASSERT_EQ(one.status, 0) << one.output;
  std::string list;
  for (int i = 0; i < kImages; ++i) list += Image(i) + "\n";
  WriteFileAtomically(dir_->file("list.txt"), list);
  // Batches of 4, 4 and 2: the input is reshaped for the last.
  const Result batched =
      Classify("--input_scale=0.00390625 --batch=4 --images=" + dir_->file("list.txt"));
  ASSERT_EQ(batched.status, 0) << batched.output;
  const std::vector<Prediction> a = ParsePredictions(one.output);
  const std::vector<Prediction> b = ParsePredictions(batched.output);
  ASSERT_EQ(a.size(), static_cast<size_t>(kImages)) << one.output;
  ASSERT_EQ(b.size(), a.size()) << batched.output;
  for (int i = 0; i < kImages; ++i) {
    EXPECT_EQ(b[i].path, a[i].path);
    EXPECT_EQ(b[i].classes, a[i].classes);
    EXPECT_EQ(a[i].classes.size(), 5u);  // --top_k's default
    EXPECT_TRUE(std::regex_match(a[i].classes[0].second, std::regex(R"(\d)")));  // no labels
  }
}

TEST_F(ClassifyToolTest, ABadImageEndsItNamingTheFile) {
  ASSERT_TRUE(fs::exists(Model())) << *train_output_;
  const std::string png = ReadFileToString(Image(0));
  const std::string truncated = dir_->file("truncated.png");
  WriteFileAtomically(truncated, png.substr(0, png.size() / 2));
  const std::vector<std::pair<std::string, std::string>> bad_files = {
      {truncated, "is a truncated PNG"},
      {dir_->file("missing.png"), "does not exist"},
      {dir_->path(), "is a directory, not an image"}};
  for (const auto& [bad, why] : bad_files) {
    const Result run = Classify("--logtostderr " + Image(1) + " " + bad);
    EXPECT_EQ(run.status, 1) << run.output;
    std::smatch error;
    ASSERT_TRUE(std::regex_search(run.output, error, std::regex(R"((^|\n)E\d+ [^\n]*)")))
        << run.output;
    EXPECT_NE(error.str().find(bad + ": " + why), std::string::npos) << run.output;
  }
  WriteFileAtomically(dir_->file("three_labels.txt"), "a\nb\nc\n");
  const Result labels =
      Classify("--logtostderr --labels=" + dir_->file("three_labels.txt") + " " + Image(0));
  EXPECT_EQ(labels.status, 1) << labels.output;
  EXPECT_NE(labels.output.find("has 3 lines but the net's output 'prob' has 10 classes"),
            std::string::npos)
      << labels.output;
  const Result no_images = Classify("--logtostderr");
  EXPECT_EQ(no_images.status, 1);
  EXPECT_NE(no_images.output.find("give the image files to classify"), std::string::npos)
      << no_images.output;
}

}  // namespace
}  // namespace demi
