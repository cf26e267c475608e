// FLOAT16 and BFLOAT16 blobs on a GPU (engine_decision.cpp's GPU rows):
// cuDNN's convolution, pooling, ReLU and batch normalization and the CUDA
// kernels of Scale, Eltwise SUM, Split, BatchNorm and LRN against the same
// layers in FLOAT on the GPU, on the same 16-bit numbers, within
// storage_compare_util.hpp's tolerance; a FLOAT bottom or top of a 16-bit
// convolution converted through scratch; and the ResNet block net trained
// on the GPU in 16 bits against FLOAT, planned against unplanned. The CPU
// twins are test_bf16_storage.cpp's and test_f16_storage.cpp's. Skipped
// without a CUDA device.
#include <string>

#include "demi/solver_registry.hpp"
#include "demi/util/device.hpp"
#include "gpu_test_util.hpp"
#include "storage_compare_util.hpp"

namespace demi {
namespace {

class GpuNarrowStorageTest : public GpuSixteenBitTest {};

TEST_P(GpuNarrowStorageTest, Convolution) {
  for (const char* geometry :
       {"num_output: 16 kernel_size: 3 pad: 1", "num_output: 32 kernel_size: 1 bias_term: false",
        "num_output: 8 kernel_size: 3 stride: 2"}) {
    SCOPED_TRACE(geometry);
    ExpectStoresLikeFloat(
        {StrCat("type: 'Convolution' convolution_param { ", geometry, kStorageFillers, " }")},
        type(), 1, Device::kGPU);
  }
}

TEST_P(GpuNarrowStorageTest, Deconvolution) {
  // cuDNN's adjoint convolution, in Caffe's layout only.
  for (const char* geometry :
       {"num_output: 8 kernel_size: 4 stride: 2 pad: 1", "num_output: 16 kernel_size: 1"}) {
    SCOPED_TRACE(geometry);
    ExpectStoresLikeFloat(
        {StrCat("type: 'Deconvolution' convolution_param { ", geometry, kStorageFillers, " }")},
        type(), 1, Device::kGPU);
  }
}

TEST_P(GpuNarrowStorageTest, ConvolutionConvertsAFloatBottomOrTopThroughScratch) {
  // As a net's first convolution reads its FLOAT input, and its last writes
  // what a FLOAT InnerProduct reads.
  for (bool float_bottom : {true, false}) {
    SCOPED_TRACE(float_bottom ? "FLOAT bottom" : "FLOAT top");
    StorageCase c{
        StrCat("type: 'Convolution' convolution_param { num_output: 16 kernel_size: 3 "
               "pad: 1",
               kStorageFillers, " }")};
    c.float_bottoms = float_bottom;
    c.float_tops = !float_bottom;
    ExpectStoresLikeFloat(c, type(), 1, Device::kGPU);
  }
}

TEST_P(GpuNarrowStorageTest, BatchNorm) { ExpectCasesStoreLikeFloatOnGpu("BatchNorm", type()); }

TEST_P(GpuNarrowStorageTest, Scale) { ExpectCasesStoreLikeFloatOnGpu("Scale", type()); }

TEST_P(GpuNarrowStorageTest, ReLU) {
  // cuDNN's (ours where cuDNN takes no such type), then ours.
  ExpectStoresLikeFloat({"type: 'ReLU'"}, type(), 1, Device::kGPU);
  ExpectStoresLikeFloat({"type: 'ReLU' relu_param { negative_slope: 0.1 }"}, type(), 1,
                        Device::kGPU);
}

TEST_P(GpuNarrowStorageTest, MappedNeuronLayers) {
  // Sigmoid's FLOAT reference is cuDNN's; its 16-bit layer, ours.
  ExpectMappedNeuronsStoreLikeFloat(type(), Device::kGPU);
}

TEST_P(GpuNarrowStorageTest, EltwiseSum) { ExpectCasesStoreLikeFloatOnGpu("Eltwise", type()); }

TEST_P(GpuNarrowStorageTest, Pooling) {
  ExpectCasesStoreLikeFloatOnGpu("Pooling", type());
  StorageCase c = StorageCasesOf("Pooling")[0];
  c.float_tops = true;  // the last pooling before a FLOAT classifier
  ExpectStoresLikeFloat(c, type(), 1, Device::kGPU);
  // Caffe's ceiled windows, which cuDNN does not count (ResNet's pool1):
  // our kernels, from a FLOAT bottom.
  c.shape = {2, 16, 8, 8};
  c.float_tops = false;
  c.float_bottoms = true;
  ExpectStoresLikeFloat(c, type(), 1, Device::kGPU);
}

TEST_P(GpuNarrowStorageTest, Split) {
  ExpectCasesStoreLikeFloatOnGpu("Split", type());
  // Past the kernel's four gradients a pass.
  ExpectStoresLikeFloat({"type: 'Split'", 1, 6}, type(), 1, Device::kGPU);
}

TEST_P(GpuNarrowStorageTest, Concat) { ExpectCasesStoreLikeFloatOnGpu("Concat", type()); }

TEST_P(GpuNarrowStorageTest, InnerProduct) {
  StorageCase c{
      StrCat("type: 'InnerProduct' inner_product_param { num_output: 10", kStorageFillers, " }")};
  ExpectStoresLikeFloat(c, type(), 1, Device::kGPU);
  c.float_tops = true;  // as a classifier feeding a FLOAT loss
  ExpectStoresLikeFloat(c, type(), 1, Device::kGPU);
  c.layer = StrCat("type: 'InnerProduct' inner_product_param { num_output: 7 transpose: true",
                   kStorageFillers, " }");
  c.float_tops = false;
  c.float_bottoms = true;
  ExpectStoresLikeFloat(c, type(), 1, Device::kGPU);
}

TEST_P(GpuNarrowStorageTest, Lrn) {
  // Our kernels in 16 bits against cuDNN's (across) and ours (within) in FLOAT.
  for (const char* param : {"local_size: 5 alpha: 0.5 beta: 0.75",
                            "local_size: 3 alpha: 0.5 beta: 0.75 norm_region: WITHIN_CHANNEL"}) {
    SCOPED_TRACE(param);
    ExpectStoresLikeFloat({StrCat("type: 'LRN' lrn_param { ", param, " }")}, type(), 1,
                          Device::kGPU);
  }
}

TEST_P(GpuNarrowStorageTest, Dropout) {
  // Both layers draw the same mask from their fresh random streams.
  ExpectStoresLikeFloat({"type: 'Dropout' dropout_param { dropout_ratio: 0.3 }"}, type(), 1,
                        Device::kGPU);
}

TEST_P(GpuNarrowStorageTest, ANetStoresTheBlobsBetweenSixteenBitLayersInSixteenBits) {
  auto narrow = BlockNet(type(), ARENA, Device::kGPU);
  ExpectBlockNetStores(*narrow, type(), Device::kGPU);
  auto wide = BlockNet(FLOAT, ARENA, Device::kGPU);
  EXPECT_LT(narrow->memory_plan().arena_bytes, wide->memory_plan().arena_bytes);
}

TEST_P(GpuNarrowStorageTest, ANetComputesWhatItComputesInFloat) {
  auto narrow = BlockNet(type(), ARENA, Device::kGPU);
  auto wide = BlockNet(FLOAT, ARENA, Device::kGPU);
  ExpectNetsRunNearInType(type(), wide.get(), narrow.get());
}

TEST_P(GpuNarrowStorageTest, PlannedAndUnplannedNetsAreBitIdentical) {
  auto planned = BlockNet(type(), ARENA, Device::kGPU);
  auto unplanned = BlockNet(type(), NONE, Device::kGPU);
  ExpectPlannedMatchesUnplanned(planned.get(), unplanned.get());
}

TEST_P(GpuNarrowStorageTest, ResumeWithDynamicLossScalingIsBitIdentical) {
  ExpectSixteenBitResumeIsBitIdentical(type(), [](const std::string& text) {
    SolverParameter param = ParseText<SolverParameter>(text);
    if (!param.has_snapshot_after_train()) param.set_snapshot_after_train(false);
    Context context;
    context.device = Device::kGPU;
    SetCurrentDevice(0);
    return SolverRegistry::Create(param, context);
  });
}

INSTANTIATE_TEST_SUITE_P(Gpu, GpuNarrowStorageTest, ::testing::Values(FLOAT16, BFLOAT16),
                         [](const ::testing::TestParamInfo<Type>& info) {
                           return Type_Name(info.param);
                         });

}  // namespace
}  // namespace demi
