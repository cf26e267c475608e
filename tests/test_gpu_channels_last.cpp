// Channels last (NHWC) on a GPU, the layout a net gives 16-bit blobs between
// layers whose kernels read it (NetParameter.channels_last): the layout
// transposes, each such layer on channels-last 16-bit blobs against the
// same layer in FLOAT and Caffe's layout (storage_compare_util.hpp's
// tolerance), and the ResNet block net channels last against Caffe's
// layout. Which blobs a net stores so is test_channels_last.cpp's (CPU).
// Skipped without a CUDA device.
#include <string>
#include <vector>

#include "channels_last_test_util.hpp"
#include "demi/util/convert_gpu.hpp"
#include "gpu_test_util.hpp"
#include "storage_compare_util.hpp"

namespace demi {
namespace {

TEST(GpuConvertLayoutTest, TransposesEachWayAndAddsAWeightGradientBack) {
  if (!HaveGpu()) GTEST_SKIP() << "no CUDA device";
#ifndef CPU_ONLY
  // Sizes that leave partial 32 x 32 tiles both ways.
  const int64_t num = 3, channels = 37, spatial = 45, count = num * channels * spatial;
  const std::vector<float> caffe = RoundedGaussian(count, 7, BFLOAT16);
  Blob x(std::vector<int64_t>{count});
  StoreValues(&x, caffe, false);
  Blob last;
  last.set_storage_type(BFLOAT16);
  last.Reshape(std::vector<int64_t>{count});
  GpuConvertLayout(num, channels, spatial, FLOAT, x.gpu_data(), BFLOAT16,
                   last.data()->mutable_gpu_data(), true);
  // The values are bfloat16 numbers already: the conversion is exact.
  EXPECT_EQ(ValuesOf(last, false), ToChannelsLast(caffe, num, channels));
  Blob back(std::vector<int64_t>{count});
  GpuConvertLayout(num, channels, spatial, BFLOAT16, last.data()->gpu_data(), FLOAT,
                   back.mutable_gpu_data(), false);
  EXPECT_EQ(DataOf(back), caffe);
  // y += x widened, from KRSC into KCRS: back becomes twice the values.
  GpuAddWidenedFromChannelsLast(num, channels, spatial, BFLOAT16, last.data()->gpu_data(),
                                back.mutable_gpu_data());
  std::vector<float> twice = caffe;
  for (float& value : twice) value *= 2;
  EXPECT_EQ(DataOf(back), twice);
#endif
}

class GpuChannelsLastTest : public GpuSixteenBitTest {};

std::string Convolution(const std::string& geometry) {
  return StrCat("type: 'Convolution' convolution_param { ", geometry, kStorageFillers, " }");
}

TEST_P(GpuChannelsLastTest, Convolution) {
  // With a bias (added and summed channels last), without, strided; and a
  // 3 x 1 window over 16 channels into 24, where a weight transposed with K
  // and C, or R and S, swapped would give other numbers (the 5 x 3 planes
  // tell rows from columns).
  for (const char* geometry :
       {"num_output: 16 kernel_size: 3 pad: 1", "num_output: 32 kernel_size: 1 bias_term: false",
        "num_output: 8 kernel_size: 3 stride: 2",
        "num_output: 24 kernel_h: 3 kernel_w: 1 pad_h: 1"}) {
    SCOPED_TRACE(geometry);
    ExpectStoresLikeFloat({Convolution(geometry)}, type(), kChannelsLast, Device::kGPU);
  }
}

TEST_P(GpuChannelsLastTest, ConvolutionTransposesASideInCaffeLayoutThroughScratch) {
  // The net's first convolution reads its FLOAT input in Caffe's layout; a
  // convolution may meet a 16-bit blob in Caffe's layout on either side.
  StorageCase c{Convolution("num_output: 16 kernel_size: 3 pad: 1")};
  for (int side = 0; side < 4; ++side) {
    StorageCase s = c;
    s.float_bottoms = side == 0;
    s.caffe_layout_bottoms = side == 1;
    s.caffe_layout_tops = side == 2;
    s.float_tops = side == 3;
    SCOPED_TRACE(side);
    ExpectStoresLikeFloat(s, type(), kChannelsLast, Device::kGPU);
  }
}

TEST_P(GpuChannelsLastTest, BatchNorm) {
  ExpectCasesStoreLikeFloatOnGpu("BatchNorm", type(), kChannelsLast);
}

TEST_P(GpuChannelsLastTest, BatchNormOverManyChannelsAndRows) {
  // Past one tile of the channels-last sums, with a partial tile; then rows
  // enough to cut each channel among 32 blocks (SplitRows).
  StorageCase c = StorageCasesOf("BatchNorm")[1];
  for (const std::vector<int64_t>& shape :
       {std::vector<int64_t>{3, 70, 4, 5}, std::vector<int64_t>{8, 40, 32, 32}}) {
    c.shape = shape;
    SCOPED_TRACE(c.shape[1]);
    ExpectStoresLikeFloat(c, type(), kChannelsLast, Device::kGPU);
  }
}

TEST_P(GpuChannelsLastTest, Scale) {
  ExpectCasesStoreLikeFloatOnGpu("Scale", type(), kChannelsLast);
}

TEST_P(GpuChannelsLastTest, ElementWiseLayers) {
  ExpectStoresLikeFloat({"type: 'ReLU'"}, type(), kChannelsLast, Device::kGPU);
  ExpectCasesStoreLikeFloatOnGpu("Eltwise", type(), kChannelsLast);
  ExpectCasesStoreLikeFloatOnGpu("Split", type(), kChannelsLast);
}

TEST_P(GpuChannelsLastTest, ConcatAlongChannels) {
  // Each pixel's row holds the three parts' channels side by side; then
  // parts of 16, 1 (the same bytes in either layout) and 8 channels.
  ExpectCasesStoreLikeFloatOnGpu("Concat", type(), kChannelsLast);
  StorageCase c = StorageCasesOf("Concat")[0];
  c.bottom_channels = {16, 1, 8};
  ExpectStoresLikeFloat(c, type(), kChannelsLast, Device::kGPU);
}

TEST_P(GpuChannelsLastTest, Pooling) {
  ExpectCasesStoreLikeFloatOnGpu("Pooling", type(), kChannelsLast);
  // Caffe's ceiled windows (ResNet's pool1).
  StorageCase c = StorageCasesOf("Pooling")[0];
  c.shape = {2, 16, 8, 8};
  ExpectStoresLikeFloat(c, type(), kChannelsLast, Device::kGPU);
  // Into Caffe's layout, for a classifier that reads only it (AlexNet's pool5),
  // and from it.
  c.caffe_layout_tops = true;
  ExpectStoresLikeFloat(c, type(), kChannelsLast, Device::kGPU);
  c.caffe_layout_tops = false;
  c.caffe_layout_bottoms = true;
  ExpectStoresLikeFloat(c, type(), kChannelsLast, Device::kGPU);
  // Padded windows over planes that are not square (9 x 5), where rows and
  // columns mixed up would read other pixels.
  for (const char* pool : {"MAX", "AVE"}) {
    StorageCase padded{StrCat("type: 'Pooling' pooling_param { pool: ", pool,
                              " kernel_size: 3 stride: 2 pad: 1 }"),
                       1,
                       1,
                       {2, 16, 9, 5}};
    SCOPED_TRACE(pool);
    ExpectStoresLikeFloat(padded, type(), kChannelsLast, Device::kGPU);
  }
  // Global pooling: a 1 x 1 top is the same bytes in both layouts (pool5).
  ExpectStoresLikeFloat({"type: 'Pooling' pooling_param { pool: AVE global_pooling: true }"},
                        type(), kChannelsLast, Device::kGPU);
}

TEST_P(GpuChannelsLastTest, ANetStoresTheBlobsBetweenChannelsLastLayersSo) {
  auto net = BlockNet(type(), ARENA, Device::kGPU);
  // pool (6 x 6) feeds the InnerProduct, which reads Caffe's layout only.
  for (const char* name : {"conv1", "conv2a", "conv2b", "sum"}) {
    EXPECT_TRUE(net->blob_by_name(name)->channels_last()) << name;
  }
  for (const char* name : {"data", "pool", "ip"}) {
    EXPECT_FALSE(net->blob_by_name(name)->channels_last()) << name;
  }
  // The reshapes that chose them were trials; the last one measured.
  for (const auto& layer : net->layers()) EXPECT_FALSE(layer->settling());
  auto caffe = BlockNet(type(), ARENA, Device::kGPU, true, /*channels_last=*/false);
  for (const auto& blob : caffe->blobs()) EXPECT_FALSE(blob->channels_last());
  // FLOAT convolutions run in Caffe's layout.
  auto wide = BlockNet(FLOAT, ARENA, Device::kGPU);
  for (const auto& blob : wide->blobs()) EXPECT_FALSE(blob->channels_last());
}

TEST_P(GpuChannelsLastTest, ANetComputesWhatItComputesInCaffeLayout) {
  // Within the bounds of 16 bits against FLOAT (GpuNarrowStorageTest): a
  // wrong transpose misses them by far.
  auto caffe = BlockNet(type(), ARENA, Device::kGPU, true, false);
  auto last = BlockNet(type(), ARENA, Device::kGPU);
  ExpectNetsRunNearInType(type(), caffe.get(), last.get());
}

TEST_P(GpuChannelsLastTest, MeasuredAlgorithmsRunChannelsLastToo) {
  // cudnnFind on channels-last descriptors (GpuMath::kTensorOps, the tools'
  // default), after the trial reshapes that chose the layout.
  auto measured = BlockNet(type(), ARENA, Device::kGPU, true, true, GpuMath::kTensorOps);
  EXPECT_TRUE(measured->blob_by_name("conv2a")->channels_last());
  auto heuristic = BlockNet(type(), ARENA, Device::kGPU);
  ExpectNetsRunNearInType(type(), heuristic.get(), measured.get());
}

TEST_P(GpuChannelsLastTest, UnfusedBatchNormAndScaleRunChannelsLastToo) {
  auto apart = BlockNet(type(), ARENA, Device::kGPU, /*fuse_layers=*/false);
  EXPECT_TRUE(apart->blob_by_name("conv2b")->channels_last());
  auto fused = BlockNet(type(), ARENA, Device::kGPU);
  ExpectNetsRunNearInType(type(), fused.get(), apart.get());
}

INSTANTIATE_TEST_SUITE_P(Gpu, GpuChannelsLastTest, ::testing::Values(FLOAT16, BFLOAT16),
                         [](const ::testing::TestParamInfo<Type>& info) {
                           return Type_Name(info.param);
                         });

}  // namespace
}  // namespace demi
