// Nets and solvers written in NVCaffe's form: its precision fields, loss
// scale, BatchNorm scale_bias and lr warm-up parse and train, in FLOAT and
// with its FLOAT16 defaults (stored in 16 bits where a layer's engine can,
// computed in FLOAT on the CPU); a layer's own types are taken as given.
#include <google/protobuf/text_format.h>

#include <cmath>
#include <string>
#include <vector>

#include "demi/engine_decision.hpp"
#include "solver_test_util.hpp"

namespace demi {
namespace {

// ResNet-like, as NVCaffe's models/resnet50/train_val_fp16.prototxt writes
// it: net-wide types and scale, BatchNorm with its own scale and bias, a
// layer with types of its own, NVCaffe-only tuning fields.
std::string NvcaffeNet(const std::string& type, const std::string& math) {
  return R"(
    name: "nv"
    default_forward_type: )" +
         type + R"(
    default_backward_type: )" +
         type + R"(
    default_forward_math: )" +
         math + R"(
    default_backward_math: )" +
         math + R"(
    global_grad_scale: 1000
    global_grad_scale_adaptive: false
    eltwise_mem_sharing: true
    reduce_buckets: 2
    default_cudnn_math_override: 0
    default_conv_algos_override: "-1,-1,-1"
    layer { name: "data" type: "DummyData" top: "data" top: "label" forward_type: FLOAT
            dummy_data_param { shape { dim: 8 dim: 3 dim: 6 dim: 6 } shape { dim: 8 }
                               data_filler { type: "gaussian" }
                               data_filler { type: "constant" value: 1 } } }
    layer { name: "conv1" type: "Convolution" bottom: "data" top: "conv1" cudnn_math_override: 1
            convolution_param { num_output: 8 kernel_size: 3 pad: 1 bias_term: false
                                weight_filler { type: "msra" } } }
    layer { name: "conv1/bn" type: "BatchNorm" bottom: "conv1" top: "conv1"
            batch_norm_param { moving_average_fraction: 0.9 eps: 0.0001 scale_bias: true } }
    layer { name: "conv1/relu" type: "ReLU" bottom: "conv1" top: "conv1" }
    layer { name: "conv2" type: "Convolution" bottom: "conv1" top: "conv2"
            convolution_param { num_output: 8 kernel_size: 3 pad: 1 bias_term: false
                                weight_filler { type: "msra" } } }
    layer { name: "conv2/bn" type: "BatchNorm" bottom: "conv2" top: "conv2"
            batch_norm_param { scale_bias: true } }
    layer { name: "sum" type: "Eltwise" bottom: "conv1" bottom: "conv2" top: "sum" }
    layer { name: "pool" type: "Pooling" bottom: "sum" top: "pool"
            pooling_param { pool: AVE global_pooling: true } }
    layer { name: "fc" type: "InnerProduct" bottom: "pool" top: "fc"
            inner_product_param { num_output: 4 weight_filler { type: "xavier" } } }
    layer { name: "loss" type: "SoftmaxWithLoss" bottom: "fc" bottom: "label" top: "loss"
            forward_type: FLOAT backward_type: FLOAT }
  )";
}

std::string NvcaffeSolver(const std::string& type, const std::string& math = "FLOAT") {
  SolverParameter solver = ParseText<SolverParameter>(R"(
    base_lr: 0.05 lr_policy: "poly" power: 2 max_iter: 30 min_lr: 0.001
    rampup_interval: 5 rampup_lr: 0.01 momentum: 0.9 weight_decay: 0.0001
    solver_data_type: FLOAT random_seed: 1 display: 0)");
  *solver.mutable_net_param() = ParseText<NetParameter>(NvcaffeNet(type, math));
  std::string text;
  google::protobuf::TextFormat::PrintToString(solver, &text);
  return text;
}

/// Trains `solver` for 30 steps: the losses, each finite.
std::vector<float> TrainedLosses(Solver* solver) {
  std::vector<float> losses;
  for (int i = 0; i < 30; ++i) {
    solver->Step(1);
    losses.push_back(solver->net().output_blobs()[0]->cpu_data()[0]);
    EXPECT_TRUE(std::isfinite(losses.back())) << "step " << i;
  }
  return losses;
}

TEST(NvcaffeFormTest, AResNetBlockInNvcaffesFormTrainsInFloat) {
  auto solver = MakeSolver(NvcaffeSolver("FLOAT"));
  const Net& net = solver->net();
  // NVCaffe's BatchNorm carries its own gamma and beta, learned.
  ASSERT_EQ(net.layer_by_name("conv1/bn")->blobs().size(), 5u);
  const std::vector<float> gamma_before = DataOf(*net.layer_by_name("conv1/bn")->blobs()[3]);
  const std::vector<float> losses = TrainedLosses(solver.get());
  // The labels are all 1: the net learns them.
  EXPECT_LT(losses.back(), 0.5f * losses.front());
  EXPECT_NE(DataOf(*net.layer_by_name("conv1/bn")->blobs()[3]), gamma_before);
  EXPECT_EQ(EngineName(net.layer_by_name("conv1")->engine().engine), "DNNL");
  // Its global_grad_scale scales the gradients (static: no overflow here).
  EXPECT_EQ(solver->loss_scaler().scale(), 1000.0f);
}

TEST(NvcaffeFormTest, Float16DefaultsTrainOnTheCpuStoredInSixteenBits) {
  for (const char* math : {"FLOAT", "FLOAT16"}) {  // resnet50's form, and alexnet_owt's
    SCOPED_TRACE(StrCat("default math ", math));
    auto solver = MakeSolver(NvcaffeSolver("FLOAT16", math));
    const Net& net = solver->net();
    // The convolutions store FLOAT16 and compute in FLOAT (no CPU kernel of
    // ours computes FLOAT16); so do BatchNorm, ReLU, Eltwise and Pooling.
    const LayerTypes conv = net.layer_by_name("conv1")->engine().types;
    EXPECT_EQ(conv.forward_storage, FLOAT16);
    EXPECT_EQ(conv.backward_storage, FLOAT16);
    EXPECT_EQ(conv.forward_math, FLOAT);
    for (const char* name : {"conv1", "conv2", "sum"}) {
      EXPECT_EQ(net.blob_by_name(name)->storage_type(), FLOAT16) << name;
    }
    // InnerProduct has no 16-bit storage: it runs FLOAT, and so do the
    // blobs it reads and writes; the data layer's own FLOAT stands.
    EXPECT_EQ(net.layer_by_name("fc")->engine().types, LayerTypes{});
    EXPECT_EQ(net.blob_by_name("pool")->storage_type(), FLOAT);
    EXPECT_EQ(net.blob_by_name("data")->storage_type(), FLOAT);
    const std::vector<float> losses = TrainedLosses(solver.get());
    EXPECT_LT(losses.back(), 0.5f * losses.front());
  }
}

TEST(NvcaffeFormTest, ALayersOwnTypesAreTakenAsGiven) {
  // The net's defaults narrow where engines can; a layer's own fields are
  // what its author asked for, and InnerProduct stores no FLOAT16.
  SolverParameter param = ParseText<SolverParameter>(NvcaffeSolver("FLOAT16"));
  for (LayerParameter& layer : *param.mutable_net_param()->mutable_layer()) {
    if (layer.name() == "fc") layer.set_forward_type(FLOAT16);
  }
  ExpectErrorContaining([&] { SolverRegistry::Create(param); },
                        {"layer 'fc' (InnerProduct) asks for forward FLOAT16 (math FLOAT)",
                         "DNNL stores FLOAT", "--precision"});
  // Nor do the net's defaults narrow into a type wider than FLOAT.
  ExpectErrorContaining([] { MakeSolver(NvcaffeSolver("DOUBLE")); },
                        {"layer 'conv1' (Convolution) asks for forward DOUBLE"});
  // --precision=FLOAT (the solver's precision) trains the FLOAT16 net in
  // FLOAT throughout.
  param = ParseText<SolverParameter>(NvcaffeSolver("FLOAT16"));
  param.set_precision(FLOAT);
  param.set_snapshot_after_train(false);
  auto solver = SolverRegistry::Create(param);
  EXPECT_EQ(solver->net().blob_by_name("conv2")->storage_type(), FLOAT);
  solver->Step(2);
  EXPECT_TRUE(std::isfinite(solver->net().output_blobs()[0]->cpu_data()[0]));
}

}  // namespace
}  // namespace demi
