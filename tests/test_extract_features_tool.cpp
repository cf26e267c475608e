// The extract_features tool: the LMDBs it writes hold, record by record, the
// values a forward pass of the same net computes; bad requests leave no
// database behind.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "data_test_util.hpp"
#include "demi/net.hpp"
#include "demi/util/io.hpp"
#include "solver_test_util.hpp"
#include "tool_test_util.hpp"

namespace demi {
namespace {

namespace fs = std::filesystem;

constexpr int kBatch = 5;

const char* kNet = R"(
  name: "features"
  layer { name: "data" type: "Data" top: "data" top: "label"
          transform_param { scale: 0.00390625 }
          data_param { source: "%SOURCE%" batch_size: 5 backend: LMDB } }
  layer { name: "ip1" type: "InnerProduct" bottom: "data" top: "ip1"
          inner_product_param { num_output: 7 weight_filler { type: "gaussian" std: 0.1 }
                                bias_filler { type: "constant" value: 0.2 } } }
  layer { name: "relu" type: "ReLU" bottom: "ip1" top: "r1" }
  layer { name: "ip2" type: "InnerProduct" bottom: "r1" top: "ip2"
          inner_product_param { num_output: 10 weight_filler { type: "gaussian" std: 0.3 } } }
  layer { name: "loss" type: "SoftmaxWithLoss" bottom: "ip2" bottom: "label" top: "loss" }
)";

class ExtractFeaturesToolTest : public testing::Test {
 protected:
  void SetUp() override {
    WriteBandsDB(dir_.file("db"), 40);
    std::string text = kNet;
    text.replace(text.find("%SOURCE%"), 8, dir_.file("db"));
    WriteFileAtomically(Model(), text);
    // Weights: the fillers' values, saved as a trained model would be.
    Net net(Model(), TEST);
    NetParameter weights;
    net.ToProto(&weights);
    WriteProtoToBinaryFile(weights, Weights());
  }

  std::string Model() const { return dir_.file("net.prototxt"); }
  std::string Weights() const { return dir_.file("net.caffemodel"); }
  Result Run(const std::string& tool, const std::string& args) const {
    return RunShell(StrCat("timeout 120 ", ToolPath(tool), " ", args, " --logtostderr"));
  }

  /// The values of `blob` over `batches` forward passes of the net.
  std::vector<float> Expected(const std::string& blob, int batches) const {
    NetParameter param;
    ReadProtoFromTextFile(Model(), &param);
    param.mutable_state()->set_phase(TEST);
    param.add_keep_blob(blob);
    Net net(param);
    net.CopyTrainedLayersFrom(Weights());
    std::vector<float> values;
    for (int i = 0; i < batches; ++i) {
      net.Forward();
      const Blob& b = *net.blob_by_name(blob);
      values.insert(values.end(), b.cpu_data(), b.cpu_data() + b.count());
    }
    return values;
  }

  /// Checks that `db` holds `expected` as records of `dim` floats keyed %010d.
  void ExpectDatabase(const std::string& db, const std::vector<float>& expected, int dim) const {
    ASSERT_TRUE(fs::exists(db + "/data.mdb")) << db;
    std::shared_ptr<LMDB> lmdb = LMDB::Open(db, DBMode::kRead);
    EXPECT_EQ(lmdb->Count(), static_cast<int64_t>(expected.size() / dim));
    int index = 0;
    for (auto cursor = lmdb->NewCursor(); cursor->valid(); cursor->Next(), ++index) {
      char key[16];
      std::snprintf(key, sizeof(key), "%010d", index);
      EXPECT_EQ(cursor->key(), key);
      Datum datum;
      ASSERT_TRUE(datum.ParseFromString(std::string(cursor->value())));
      EXPECT_EQ(datum.channels(), dim);
      EXPECT_EQ(datum.height(), 1);
      EXPECT_EQ(datum.width(), 1);
      ASSERT_EQ(datum.float_data_size(), dim);
      for (int j = 0; j < dim; ++j) {
        const float want = expected[index * dim + j];
        EXPECT_NEAR(datum.float_data(j), want, 1e-5f * std::max(1.0f, std::fabs(want)))
            << db << " record " << index << " value " << j;
      }
    }
    EXPECT_EQ(index * dim, static_cast<int>(expected.size()));
  }

  ScratchDir dir_;
};

TEST_F(ExtractFeaturesToolTest, WritesTheBlobsOfEachBatchInCaffesForm) {
  const Result run =
      Run("extract_features", StrCat(Weights(), " ", Model(), " ip1,ip2 ", dir_.file("ip1_db"), ",",
                                     dir_.file("ip2_db"), " 3 lmdb CPU"));
  ASSERT_EQ(run.status, 0) << run.output;
  EXPECT_NE(run.output.find("Extracted features of 15 query images for feature blob ip2"),
            std::string::npos)
      << run.output;
  const std::vector<float> ip1 = Expected("ip1", 3);
  ASSERT_EQ(ip1.size(), 3u * kBatch * 7);
  ExpectDatabase(dir_.file("ip1_db"), ip1, 7);
  ExpectDatabase(dir_.file("ip2_db"), Expected("ip2", 3), 10);
  // Values that differ between records and batches: the check can fail.
  EXPECT_NE(ip1[0], ip1[7]);
  EXPECT_NE(ip1[0], ip1[kBatch * 7]);

  // The flag form, through caffe.
  const Result flags =
      RunShell(StrCat("timeout 120 ", ToolPath("caffe"), " extract_features --logtostderr ",
                      "--weights=", Weights(), " --model=", Model(),
                      " --blobs=r1 --dbs=", dir_.file("r1_db"), " --iterations=2"));
  ASSERT_EQ(flags.status, 0) << flags.output;
  ExpectDatabase(dir_.file("r1_db"), Expected("r1", 2), 7);
}

TEST_F(ExtractFeaturesToolTest, BadRequestsLeaveNoDatabase) {
  const std::string a = dir_.file("a_db"), b = dir_.file("b_db");
  const Result unknown =
      Run("extract_features", StrCat(Weights(), " ", Model(), " ip1,fc7 ", a, ",", b, " 1 lmdb"));
  EXPECT_EQ(unknown.status, 1);
  EXPECT_NE(unknown.output.find("has no blob 'fc7'; its blobs: data, label, ip1, r1, ip2, loss"),
            std::string::npos)
      << unknown.output;
  const Result count =
      Run("extract_features", StrCat(Weights(), " ", Model(), " ip1,ip2 ", a, " 1 lmdb"));
  EXPECT_EQ(count.status, 1);
  EXPECT_NE(count.output.find("2 blob(s) but 1 database(s)"), std::string::npos) << count.output;
  const Result leveldb =
      Run("extract_features", StrCat(Weights(), " ", Model(), " ip1 ", a, " 1 leveldb"));
  EXPECT_EQ(leveldb.status, 1);
  const Result usage = Run("extract_features", StrCat(Weights(), " ", Model(), " ip1"));
  EXPECT_EQ(usage.status, 1);
  EXPECT_NE(usage.output.find("extract_features takes PRETRAINED.caffemodel"), std::string::npos)
      << usage.output;
  EXPECT_FALSE(fs::exists(a));
  EXPECT_FALSE(fs::exists(b));
  // A database that exists is refused before anything is written, the
  // others included; the existing one keeps its records.
  ASSERT_EQ(Run("extract_features", StrCat(Weights(), " ", Model(), " ip2 ", b, " 1 lmdb")).status,
            0);
  const Result exists =
      Run("extract_features", StrCat(Weights(), " ", Model(), " ip1,ip2 ", a, ",", b, " 2 lmdb"));
  EXPECT_EQ(exists.status, 1);
  EXPECT_NE(exists.output.find(b), std::string::npos) << exists.output;
  EXPECT_FALSE(fs::exists(a));
  EXPECT_EQ(LMDB::Open(b, DBMode::kRead)->Count(), kBatch);
  for (const auto& entry : fs::directory_iterator(dir_.path())) {
    EXPECT_EQ(entry.path().string().find(".tmp."), std::string::npos) << entry.path();
  }
}

}  // namespace
}  // namespace demi
