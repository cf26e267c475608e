// A training iteration of a net on the DNNL engine allocates no tensor-sized
// memory: oneDNN's layouts, reorder buffers and scratchpads are planned
// layer buffers. Proven by counting, while an iteration runs, every heap
// allocation of 128 KiB or more the process makes (this file replaces the
// allocator's entry points of the test binary and forwards to glibc's); every
// activation and oneDNN buffer of the test net is at least that large.
// Smaller allocations remain: oneDNN's GEMM-based kernels (its sgemm, and the
// GEMM convolution it runs for 1x1 kernels on Caffe's layout) take a packing
// buffer of about 72 KiB per thread in each call, outside the scratchpad.
#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <string>
#include <vector>

#include "demi/net.hpp"
#include "demi/util/dnnl.hpp"
#include "test_util.hpp"

// ASan and TSan own the allocator's entry points: under them this file counts
// nothing and its tests skip (the plain build runs them).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define DEMI_ALLOCATIONS_COUNTED 0
#else
#define DEMI_ALLOCATIONS_COUNTED 1
#endif

extern "C" {
void* __libc_malloc(size_t size);
void* __libc_calloc(size_t count, size_t size);
void* __libc_realloc(void* pointer, size_t size);
void* __libc_memalign(size_t alignment, size_t size);
}

namespace {

constexpr size_t kTensorSized = size_t{128} << 10;
std::atomic<bool> counting{false};
std::atomic<int64_t> large_allocations{0};

[[maybe_unused]] void Note(size_t bytes) {
  if (bytes >= kTensorSized && counting.load(std::memory_order_relaxed)) {
    ++large_allocations;
  }
}

}  // namespace

#if DEMI_ALLOCATIONS_COUNTED
extern "C" {
void* malloc(size_t size) {
  Note(size);
  return __libc_malloc(size);
}
void* calloc(size_t count, size_t size) {
  Note(count * size);
  return __libc_calloc(count, size);
}
void* realloc(void* pointer, size_t size) {
  Note(size);
  return __libc_realloc(pointer, size);
}
void* memalign(size_t alignment, size_t size) {
  Note(size);
  return __libc_memalign(alignment, size);
}
void* aligned_alloc(size_t alignment, size_t size) {
  Note(size);
  return __libc_memalign(alignment, size);
}
int posix_memalign(void** out, size_t alignment, size_t size) {
  Note(size);
  void* pointer = __libc_memalign(alignment, size);
  if (pointer == nullptr) return ENOMEM;
  *out = pointer;
  return 0;
}
}
#endif  // DEMI_ALLOCATIONS_COUNTED

namespace demi {
namespace {

/// Large allocations made while `body` runs.
template <typename Body>
int64_t LargeAllocationsDuring(const Body& body) {
  large_allocations = 0;
  counting = true;
  body();
  counting = false;
  return large_allocations;
}

TEST(DnnlAllocationTest, TheCounterSeesALargeAllocation) {
  if (!DEMI_ALLOCATIONS_COUNTED) GTEST_SKIP() << "a sanitizer owns the allocator";
  EXPECT_GE(LargeAllocationsDuring([] {
              std::vector<float> tensor(size_t{1} << 20);
              tensor[1] = 1;
            }),
            1);
}

// Convolutions (3x3 from Caffe's layout into blocked channels, 1x1 between
// blocked blobs), BatchNorm, Scale and ReLU in place on blocked channels, LRN,
// pooling, an inner product from blocked channels and a softmax loss, with
// the net-wide engine DNNL, planned (ARENA) and unplanned.
constexpr char kNet[] = R"(
  name: "dnnl_net" force_backward: true engine: DNNL
  layer { name: "data" type: "DummyData" top: "data" top: "label"
    dummy_data_param { shape { dim: 8 dim: 3 dim: 32 dim: 32 } shape { dim: 8 }
                       data_filler { type: "gaussian" }
                       data_filler { type: "constant" value: 1 } } }
  layer { name: "conv1" type: "Convolution" bottom: "data" top: "conv1"
    convolution_param { num_output: 32 kernel_size: 3 pad: 1 weight_filler { type: "xavier" } } }
  layer { name: "bn1" type: "BatchNorm" bottom: "conv1" top: "conv1" }
  layer { name: "scale1" type: "Scale" bottom: "conv1" top: "conv1" scale_param { bias_term: true } }
  layer { name: "relu1" type: "ReLU" bottom: "conv1" top: "conv1" }
  layer { name: "norm1" type: "LRN" bottom: "conv1" top: "norm1" lrn_param { local_size: 5 } }
  layer { name: "pool1" type: "Pooling" bottom: "norm1" top: "pool1"
    pooling_param { pool: MAX kernel_size: 3 stride: 2 } }
  layer { name: "conv2" type: "Convolution" bottom: "pool1" top: "conv2"
    convolution_param { num_output: 64 kernel_size: 1 weight_filler { type: "xavier" } } }
  layer { name: "pool2" type: "Pooling" bottom: "conv2" top: "pool2"
    pooling_param { pool: AVE kernel_size: 2 stride: 2 } }
  layer { name: "ip" type: "InnerProduct" bottom: "pool2" top: "ip"
    inner_product_param { num_output: 10 weight_filler { type: "xavier" } } }
  layer { name: "loss" type: "SoftmaxWithLoss" bottom: "ip" bottom: "label" top: "loss" }
)";

TEST(DnnlAllocationTest, TrainingIterationsAllocateNoTensors) {
  if (!DEMI_ALLOCATIONS_COUNTED) GTEST_SKIP() << "a sanitizer owns the allocator";
  for (MemoryOptimization strategy : {ARENA, NONE}) {
    NetParameter param = ParseText<NetParameter>(kNet);
    param.set_memory_optimization(strategy);
    param.mutable_state()->set_phase(TRAIN);
    Net net(param, Context());
    for (const auto& layer : net.layers()) {
      const std::string type = layer->type();
      if (type == "Convolution" || type == "LRN" || type == "Pooling" || type == "ReLU" ||
          type == "InnerProduct") {
        EXPECT_TRUE(layer->running_engine() == EngineKind::kDnnl) << layer->layer_param().name();
      }
    }
    EXPECT_EQ(net.blob_by_name("conv1")->channel_block(), DnnlChannelBlock());
    EXPECT_EQ(net.blob_by_name("pool2")->channel_block(), DnnlChannelBlock());
    // The first iteration may touch memory for the first time (NONE).
    net.ClearParamDiffs();
    net.ForwardBackward();
    net.Update();
    EXPECT_EQ(LargeAllocationsDuring([&] {
                for (int i = 0; i < 3; ++i) {
                  net.ClearParamDiffs();
                  net.ForwardBackward();
                  net.Update();
                }
              }),
              0)
        << MemoryOptimization_Name(strategy);
  }
}

}  // namespace
}  // namespace demi
