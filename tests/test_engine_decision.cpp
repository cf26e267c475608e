// The engine decision on its own (engine_decision.hpp): which engine and
// types each layer gets from its fields, the net's and the device; then
// that a net hands the decisions to its layers and reports them.
#include <google/protobuf/descriptor.h>

#include <cmath>
#include <string>

#include "demi/engine_decision.hpp"
#include "demi/memory/report.hpp"
#include "demi/net.hpp"
#include "demi/net_schedule.hpp"
#include "demi/util/dnnl.hpp"
#include "log_capture.hpp"
#include "test_util.hpp"

namespace demi {
namespace {

EngineDecision Decide(const std::string& layer, EngineKind net_engine = EngineKind::kDefault,
                      Device device = Device::kCPU) {
  return DecideEngine(ParseText<LayerParameter>("name: 'l' bottom: 'x' " + layer),
                      {net_engine, LayerTypes{}}, device);
}

/// The math a CPU layer asking for BFLOAT16 math runs: BFLOAT16 where oneDNN
/// computes in it here (AVX-512), else FLOAT.
Type Bf16MathHere() { return DnnlComputesBfloat16() ? BFLOAT16 : FLOAT; }

std::string ErrorOf(const std::function<void()>& run) {
  try {
    run();
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

TEST(EngineDecisionTest, DefaultPrefersDnnlOnTheCpuWhereItHasTheLayer) {
  for (const char* type : {"Convolution", "Deconvolution", "InnerProduct", "Pooling", "LRN", "ReLU",
                           "Softmax", "Eltwise", "BatchNorm", "Scale"}) {
    const EngineDecision decision = Decide(StrCat("type: '", type, "'"));
    EXPECT_EQ(EngineName(decision.engine), "DNNL") << type;
    EXPECT_EQ(decision.requested, EngineKind::kDefault) << type;
    EXPECT_EQ(decision.reason, "") << type;
  }
  for (const char* type : {"SoftmaxWithLoss", "Sigmoid", "Dropout", "DummyData", "Concat"}) {
    const EngineDecision decision = Decide(StrCat("type: '", type, "'"));
    EXPECT_EQ(EngineName(decision.engine), "CAFFE") << type;
    EXPECT_EQ(decision.reason, "") << type;
  }
}

TEST(EngineDecisionTest, ParametersAnEngineCannotRunFallBackToCaffeWithTheReason) {
  const EngineDecision stochastic = Decide("type: 'Pooling' pooling_param { pool: STOCHASTIC }");
  EXPECT_EQ(EngineName(stochastic.engine), "CAFFE");
  EXPECT_NE(stochastic.reason.find("STOCHASTIC"), std::string::npos) << stochastic.reason;
  const EngineDecision mask = Decide("type: 'Pooling' top: 'p' top: 'mask'");
  EXPECT_EQ(EngineName(mask.engine), "CAFFE");
  EXPECT_NE(mask.reason.find("argmax"), std::string::npos) << mask.reason;
  EXPECT_EQ(EngineName(Decide("type: 'LRN' lrn_param { norm_region: WITHIN_CHANNEL }").engine),
            "CAFFE");
  EXPECT_EQ(EngineName(Decide("type: 'Eltwise' eltwise_param { operation: PROD }").engine),
            "CAFFE");
  EXPECT_EQ(EngineName(Decide("type: 'ReLU' relu_param { negative_slope: -1 }").engine), "CAFFE");
}

TEST(EngineDecisionTest, TheLayersOwnEngineWinsOverTheNets) {
  const EngineDecision own_caffe =
      Decide("type: 'Convolution' convolution_param { engine: CAFFE }", EngineKind::kDnnl);
  EXPECT_EQ(EngineName(own_caffe.engine), "CAFFE");
  EXPECT_EQ(own_caffe.requested, EngineKind::kCaffe);
  EXPECT_EQ(own_caffe.reason, "");
  const EngineDecision own_dnnl =
      Decide("type: 'Convolution' convolution_param { engine: DNNL }", EngineKind::kCaffe);
  EXPECT_EQ(EngineName(own_dnnl.engine), "DNNL");
  // Layers without an engine field of their own follow the net.
  EXPECT_EQ(EngineName(Decide("type: 'InnerProduct'", EngineKind::kCaffe).engine), "CAFFE");
  EXPECT_EQ(EngineName(Decide("type: 'InnerProduct'", EngineKind::kDnnl).engine), "DNNL");
  // NVCaffe's BatchNorm engine field counts as the others do.
  EXPECT_EQ(EngineName(Decide("type: 'BatchNorm' batch_norm_param { engine: CAFFE }").engine),
            "CAFFE");
}

TEST(EngineDecisionTest, AnEngineTheDeviceLacksRunsCaffeAsCaffeDoes) {
  const EngineDecision cudnn_on_cpu =
      Decide("type: 'Convolution' convolution_param { engine: CUDNN }");
  EXPECT_EQ(EngineName(cudnn_on_cpu.engine), "CAFFE");
  EXPECT_EQ(cudnn_on_cpu.requested, EngineKind::kCudnn);
  EXPECT_NE(cudnn_on_cpu.reason.find("no CUDNN engine on the CPU"), std::string::npos)
      << cudnn_on_cpu.reason;
  EXPECT_NE(
      DescribeDecision(ParseText<LayerParameter>("name: 'c' type: 'Convolution'"), cudnn_on_cpu)
          .find("c (Convolution): CAFFE, FLOAT (CUDNN asked for: "),
      std::string::npos);
  // DNNL has no GPU kernels: a GPU layer asking for it runs CAFFE's, and
  // layers of a DNNL net that have no DNNL engine run CAFFE without a word.
  EXPECT_EQ(EngineName(Decide("type: 'InnerProduct'", EngineKind::kDnnl, Device::kGPU).engine),
            "CAFFE");
  const EngineDecision loss = Decide("type: 'SoftmaxWithLoss'", EngineKind::kDnnl);
  EXPECT_EQ(EngineName(loss.engine), "CAFFE");
  EXPECT_EQ(loss.reason, "");
  EXPECT_NE(Decide("type: 'LRN' lrn_param { norm_region: WITHIN_CHANNEL }", EngineKind::kDnnl)
                .reason.find("WITHIN_CHANNEL"),
            std::string::npos);
}

TEST(EngineDecisionTest, ANetAskingForCudnnOnTheCpuSaysWhatRunsInstead) {
  // Every layer runs CAFFE there, as in Caffe's CPU mode: one warning per
  // net, since DEFAULT would have run oneDNN's kernels.
  LogCapture log;
  Net net(ParseText<NetParameter>(R"(engine: CUDNN name: "asks" state { phase: TRAIN }
    layer { name: "in" type: "Input" top: "x" input_param { shape { dim: 1 dim: 3 } } }
    layer { name: "ip" type: "InnerProduct" bottom: "x" top: "y"
            inner_product_param { num_output: 2 } })"),
          Context());
  EXPECT_EQ(net.layer_by_name("ip")->running_engine(), EngineKind::kCaffe);
  EXPECT_EQ(log.Containing("Net 'asks' asks for engine CUDNN, which runs on GPUs only").size(), 1u)
      << ::testing::PrintToString(log.messages());
}

#ifdef USE_CUDNN
TEST(EngineDecisionTest, DefaultPrefersCudnnOnTheGpuForWhatCudnnRuns) {
  EXPECT_EQ(EngineName(Decide("type: 'Convolution'", EngineKind::kDefault, Device::kGPU).engine),
            "CUDNN");
  EXPECT_EQ(EngineName(Decide("type: 'ReLU'", EngineKind::kDefault, Device::kGPU).engine), "CUDNN");
  const EngineDecision leaky =
      Decide("type: 'ReLU' relu_param { negative_slope: 0.1 }", EngineKind::kDefault, Device::kGPU);
  EXPECT_EQ(EngineName(leaky.engine), "CAFFE");
  EXPECT_NE(leaky.reason.find("negative_slope"), std::string::npos);
  EXPECT_EQ(
      EngineName(Decide("type: 'Pooling' top: 'x'", EngineKind::kDefault, Device::kGPU).engine),
      "CAFFE");
  EXPECT_EQ(EngineName(Decide("type: 'BatchNorm'", EngineKind::kDefault, Device::kGPU).engine),
            "CUDNN");
  EXPECT_EQ(EngineName(Decide("type: 'BatchNorm' batch_norm_param { engine: CAFFE }",
                              EngineKind::kDefault, Device::kGPU)
                           .engine),
            "CAFFE");
  const EngineDecision wide_lrn =
      Decide("type: 'LRN' lrn_param { local_size: 17 }", EngineKind::kDefault, Device::kGPU);
  EXPECT_EQ(EngineName(wide_lrn.engine), "CAFFE");
  EXPECT_NE(wide_lrn.reason.find("local_size 1..16"), std::string::npos) << wide_lrn.reason;
  EXPECT_EQ(EngineName(Decide("type: 'Convolution'", EngineKind::kCaffe, Device::kGPU).engine),
            "CAFFE");
}
#endif

TEST(EngineDecisionTest, TypesComeFromTheLayerElseTheNet) {
  LayerTypes net;
  net.forward_storage = BFLOAT16;
  net.backward_storage = BFLOAT16;
  const LayerTypes own =
      RequestedTypes(ParseText<LayerParameter>("forward_type: FLOAT16 backward_math: DOUBLE"), net);
  EXPECT_EQ(own.forward_storage, FLOAT16);
  EXPECT_EQ(own.forward_math, FLOAT);
  EXPECT_EQ(own.backward_storage, BFLOAT16);
  EXPECT_EQ(own.backward_math, DOUBLE);
  EXPECT_EQ(own.ToString(), "forward FLOAT16 (math FLOAT), backward BFLOAT16 (math DOUBLE)");
  EXPECT_EQ(LayerTypes{}.ToString(), "FLOAT");

  NetParameter param = ParseText<NetParameter>(
      "default_forward_type: FLOAT16 default_forward_math: FLOAT16 engine: CAFFE");
  EXPECT_EQ(NetEngineDefaults(param).types.forward_storage, FLOAT16);
  EXPECT_EQ(NetEngineDefaults(param).engine, EngineKind::kCaffe);
  // --precision replaces the net's default types with its preference.
  ApplyPrecision(BFLOAT16, &param);
  EXPECT_EQ(NetEngineDefaults(param).precision, BFLOAT16);
  EXPECT_EQ(NetEngineDefaults(param).types, LayerTypes{});
}

TEST(EngineDecisionTest, TypesNoEngineRunsAreAnErrorNamingTheLayerAndWhatItsEnginesRun) {
  // No engine of the CPU stores InnerProduct's blobs in 16 bits.
  const std::string error = ErrorOf([] { Decide("type: 'InnerProduct' forward_type: FLOAT16"); });
  EXPECT_NE(error.find("layer 'l' (InnerProduct) asks for forward FLOAT16 (math FLOAT), "
                       "backward FLOAT (math FLOAT)"),
            std::string::npos)
      << error;
  const std::string dnnl_math = DnnlComputesBfloat16() ? "FLOAT/BFLOAT16" : "FLOAT";
  EXPECT_NE(
      error.find(StrCat("DNNL stores FLOAT and computes in ", dnnl_math, "; CAFFE stores FLOAT")),
      std::string::npos)
      << error;
  // 16-bit storage alone is one of the ways oneDNN's convolution runs:
  // BFLOAT16, or FLOAT16 around FLOAT math (a row of its own).
  EXPECT_EQ(Decide("type: 'Convolution' forward_type: BFLOAT16").types.forward_storage, BFLOAT16);
  const EngineDecision half = Decide("type: 'Convolution' forward_type: FLOAT16");
  EXPECT_EQ(EngineName(half.engine), "DNNL");
  EXPECT_EQ(half.types.forward_storage, FLOAT16);
  const char* mixed = "type: 'Convolution' forward_type: FLOAT16 forward_math: BFLOAT16";
  if (DnnlComputesBfloat16()) {
    EXPECT_NE(ErrorOf([mixed] { Decide(mixed); })
                  .find("DNNL stores FLOAT/BFLOAT16 and computes in FLOAT/BFLOAT16; DNNL stores "
                        "FLOAT/FLOAT16 and computes in FLOAT; CAFFE stores FLOAT"),
              std::string::npos);
  } else {
    // Without bfloat16 kernels that math is FLOAT, which FLOAT16 storage runs.
    EXPECT_EQ(Decide(mixed).types, (LayerTypes{FLOAT16, FLOAT, FLOAT, FLOAT}));
  }
  // BFLOAT16 math of a layer oneDNN has no bfloat16 kernel for: refused on
  // any CPU. Convolution's and InnerProduct's runs in FLOAT where oneDNN
  // computes no bfloat16, and a refusal says so.
  EXPECT_NE(ErrorOf([] {
              Decide("type: 'Softmax' forward_math: BFLOAT16");
            }).find("asks for forward FLOAT (math BFLOAT16)"),
            std::string::npos);
  if (!DnnlComputesBfloat16()) {
    const std::string widened = ErrorOf(
        [] { Decide("type: 'InnerProduct' forward_type: BFLOAT16 forward_math: BFLOAT16"); });
    EXPECT_NE(widened.find("(it asks for forward BFLOAT16 (math BFLOAT16), backward FLOAT (math "
                           "FLOAT); BFLOAT16 math runs in FLOAT on this CPU"),
              std::string::npos)
        << widened;
  }
  // A named engine too: CAFFE's Softmax runs FLOAT only; its Sigmoid, a
  // MappedNeuronLayer, stores 16 bits as well.
  EXPECT_NE(ErrorOf([] {
              Decide("type: 'Softmax' softmax_param { engine: CAFFE } backward_type: FLOAT16");
            }).find("CAFFE stores FLOAT"),
            std::string::npos);
  const EngineDecision sigmoid = Decide(
      "type: 'Sigmoid' sigmoid_param { engine: CAFFE } forward_type: FLOAT16 backward_type: "
      "FLOAT16");
  EXPECT_EQ(EngineName(sigmoid.engine), "CAFFE");
  EXPECT_EQ(sigmoid.types.backward_storage, FLOAT16);
}

EngineDecision DecideWithPrecision(const std::string& layer, Type precision) {
  EngineDefaults defaults;
  defaults.precision = precision;
  return DecideEngine(ParseText<LayerParameter>("name: 'l' bottom: 'x' " + layer), defaults,
                      Device::kCPU);
}

TEST(EngineDecisionTest, APrecisionGivesEachLayerTheNarrowestTypesItsEnginesRun) {
  // oneDNN convolves in BFLOAT16 math (FLOAT without AVX-512), and
  // Convolution stores BFLOAT16 either way.
  const Type math = Bf16MathHere();
  const LayerTypes bf16{BFLOAT16, math, BFLOAT16, math};
  const EngineDecision convolution = DecideWithPrecision("type: 'Convolution'", BFLOAT16);
  EXPECT_EQ(EngineName(convolution.engine), "DNNL");
  EXPECT_EQ(convolution.types, bf16);
  const LayerTypes bf16_math{FLOAT, math, FLOAT, math};
  const EngineDecision deconvolution = DecideWithPrecision("type: 'Deconvolution'", BFLOAT16);
  EXPECT_EQ(EngineName(deconvolution.engine), "DNNL");
  EXPECT_EQ(deconvolution.types, bf16_math);
  EXPECT_EQ(
      deconvolution.types.ToString(),
      math == BFLOAT16 ? "forward FLOAT (math BFLOAT16), backward FLOAT (math BFLOAT16)" : "FLOAT");
  // The loops and primitives between convolutions store BFLOAT16 and
  // compute in FLOAT; Split's CAFFE code too.
  const LayerTypes bf16_storage{BFLOAT16, FLOAT, BFLOAT16, FLOAT};
  for (const char* layer : {"type: 'ReLU'", "type: 'BatchNorm'", "type: 'Scale'", "type: 'Eltwise'",
                            "type: 'Pooling'", "type: 'LRN'", "type: 'Split'", "type: 'Concat'"}) {
    const EngineDecision decision = DecideWithPrecision(layer, BFLOAT16);
    EXPECT_EQ(decision.types, bf16_storage) << layer;
  }
  EXPECT_EQ(EngineName(DecideWithPrecision("type: 'Split'", BFLOAT16).engine), "CAFFE");
  // Layers without 16-bit kernels, with kernels slower than FLOAT's
  // (InnerProduct), or asked to run CAFFE, run FLOAT.
  for (const char* layer : {"type: 'Softmax'", "type: 'InnerProduct'", "type: 'DummyData'",
                            "type: 'Eltwise' eltwise_param { operation: MAX }",
                            "type: 'Convolution' convolution_param { engine: CAFFE }"}) {
    const EngineDecision decision = DecideWithPrecision(layer, BFLOAT16);
    EXPECT_EQ(decision.types, LayerTypes{}) << layer;
  }
  // No engine of the CPU computes FLOAT16: the layers that store it do so
  // with FLOAT math (ReLU in the CAFFE engine's loop), the rest run FLOAT.
  const LayerTypes f16_storage{FLOAT16, FLOAT, FLOAT16, FLOAT};
  for (const char* layer :
       {"type: 'Convolution'", "type: 'ReLU'", "type: 'BatchNorm'", "type: 'Scale'",
        "type: 'Eltwise'", "type: 'Pooling'", "type: 'Split'", "type: 'Concat'"}) {
    EXPECT_EQ(DecideWithPrecision(layer, FLOAT16).types, f16_storage) << layer;
  }
  EXPECT_EQ(EngineName(DecideWithPrecision("type: 'ReLU'", FLOAT16).engine), "CAFFE");
  for (const char* layer : {"type: 'LRN'", "type: 'InnerProduct'", "type: 'Deconvolution'"}) {
    EXPECT_EQ(DecideWithPrecision(layer, FLOAT16).types, LayerTypes{}) << layer;
  }
  // A layer's own types are not a preference: they run as asked, or fail.
  const EngineDecision product = DecideWithPrecision(
      "type: 'InnerProduct' forward_math: BFLOAT16 backward_math: BFLOAT16", FLOAT);
  EXPECT_EQ(EngineName(product.engine), "DNNL");
  EXPECT_EQ(product.types, bf16_math);
  EXPECT_EQ(DecideWithPrecision("type: 'Convolution' forward_math: FLOAT", BFLOAT16).types,
            LayerTypes{});
  EXPECT_NE(ErrorOf([] {
              DecideWithPrecision("type: 'InnerProduct' forward_type: FLOAT16", BFLOAT16);
            }).find("asks for forward FLOAT16"),
            std::string::npos);
  // The net's default_* fields, without a precision, are asked first, then
  // narrowed as a precision is (NVCaffe's FLOAT16 files on a CPU).
  EngineDefaults defaults;
  defaults.types = {FLOAT, BFLOAT16, FLOAT, BFLOAT16};
  const auto decide = [&defaults](const char* type) {
    return DecideEngine(
        ParseText<LayerParameter>(StrCat("name: 'c' bottom: 'x' type: '", type, "'")), defaults,
        Device::kCPU);
  };
  EXPECT_EQ(decide("Convolution").types, bf16_math);
  EXPECT_EQ(decide("InnerProduct").types, bf16_math);  // asked for, not a preference
  defaults.types = {FLOAT16, FLOAT16, FLOAT16, FLOAT16};
  EXPECT_EQ(decide("Convolution").types, f16_storage);
  EXPECT_EQ(decide("InnerProduct").types, LayerTypes{});
  // Narrowing goes down to FLOAT, never into a wider type asked for.
  defaults.types.forward_storage = DOUBLE;
  EXPECT_NE(ErrorOf([&] { decide("Convolution"); }).find("asks for forward DOUBLE"),
            std::string::npos);
}

#ifdef USE_CUDNN
TEST(EngineDecisionTest, APrecisionOnTheGpuStoresSixteenBitsBetweenCudnnAndOurKernels) {
  const auto decide = [](const char* layer, Type precision) {
    EngineDefaults defaults;
    defaults.precision = precision;
    return DecideEngine(ParseText<LayerParameter>(StrCat("name: 'l' bottom: 'x' ", layer)),
                        defaults, Device::kGPU);
  };
  for (Type type : {FLOAT16, BFLOAT16}) {
    // Stored in 16 bits, computed in FLOAT (tensor-op products for the
    // convolutions and the inner products): cuDNN's layers and our kernels.
    const LayerTypes storage{type, FLOAT, type, FLOAT};
    for (const char* layer : {"type: 'Convolution'", "type: 'Deconvolution'", "type: 'Pooling'",
                              "type: 'ReLU'", "type: 'BatchNorm'"}) {
      const EngineDecision decision = decide(layer, type);
      EXPECT_EQ(EngineName(decision.engine), "CUDNN") << layer;
      EXPECT_EQ(decision.types, storage) << layer << " " << Type_Name(type);
    }
    for (const char* layer :
         {"type: 'Scale'", "type: 'Eltwise'", "type: 'Split'", "type: 'Concat'", "type: 'Dropout'",
          "type: 'InnerProduct'", "type: 'BatchNorm' batch_norm_param { engine: CAFFE }",
          "type: 'ReLU' relu_param { negative_slope: 0.1 }",
          "type: 'Pooling' pooling_param { engine: CAFFE }", "type: 'LRN'", "type: 'TanH'",
          "type: 'Power' power_param { power: 2 }", "type: 'PReLU'"}) {
      const EngineDecision decision = decide(layer, type);
      EXPECT_EQ(EngineName(decision.engine), "CAFFE") << layer;
      EXPECT_EQ(decision.types, storage) << layer << " " << Type_Name(type);
    }
    // The rest run FLOAT: no 16-bit kernel of theirs on the GPU yet.
    for (const char* layer : {"type: 'Softmax'", "type: 'SoftmaxWithLoss'",
                              "type: 'Eltwise' eltwise_param { operation: MAX }",
                              "type: 'Convolution' convolution_param { engine: CAFFE }"}) {
      EXPECT_EQ(decide(layer, type).types, LayerTypes{}) << layer << " " << Type_Name(type);
    }
  }
  // Asked for 16-bit math, the GPU narrows it to FLOAT math (rule 1), as
  // NVCaffe's default_forward_math: FLOAT16 files ask.
  EngineDefaults nvcaffe;
  nvcaffe.types = {FLOAT16, FLOAT16, FLOAT16, FLOAT16};
  EXPECT_EQ(DecideEngine(ParseText<LayerParameter>("name: 'c' bottom: 'x' type: 'Convolution'"),
                         nvcaffe, Device::kGPU)
                .types,
            (LayerTypes{FLOAT16, FLOAT, FLOAT16, FLOAT}));
}
#endif

TEST(EngineDecisionTest, FlagsParseTheirValues) {
  Type type = FLOAT;
  EXPECT_FALSE(ParsePrecisionFlag("", &type));
  EXPECT_TRUE(ParsePrecisionFlag("BFLOAT16", &type));
  EXPECT_EQ(type, BFLOAT16);
  EXPECT_NE(ErrorOf([&] {
              ParsePrecisionFlag("INT", &type);
            }).find("--precision must be FLOAT, FLOAT16 or BFLOAT16, got 'INT'"),
            std::string::npos);
  Engine engine = DEFAULT;
  EXPECT_TRUE(ParseEngineFlag("DNNL", &engine));
  EXPECT_EQ(engine, DNNL);
  EXPECT_THROW(ParseEngineFlag("MKL", &engine), Error);
}

TEST(EngineDecisionTest, EveryEngineFieldHasTheOneEngineEnum) {
  // Caffe writes an Engine enum inside each param; ours is written once.
  const google::protobuf::FileDescriptor* file = NetParameter::descriptor()->file();
  int engine_fields = 0;
  for (int m = 0; m < file->message_type_count(); ++m) {
    const google::protobuf::Descriptor* message = file->message_type(m);
    EXPECT_EQ(message->FindEnumTypeByName("Engine"), nullptr) << message->name();
    const google::protobuf::FieldDescriptor* field = message->FindFieldByName("engine");
    if (field == nullptr) continue;
    ++engine_fields;
    EXPECT_EQ(field->enum_type(), Engine_descriptor()) << message->name();
  }
  // Net, Solver, and the params of Convolution, LRN, Pooling, ReLU, Sigmoid,
  // Softmax, TanH, SPP and BatchNorm.
  EXPECT_EQ(engine_fields, 11);
}

constexpr char kNet[] = R"(
  name: 'n'
  layer { name: 'data' type: 'DummyData' top: 'data' top: 'label'
          dummy_data_param { shape { dim: 2 dim: 3 dim: 8 dim: 8 } shape { dim: 2 }
                             data_filler { type: 'gaussian' } } }
  layer { name: 'conv' type: 'Convolution' bottom: 'data' top: 'conv'
          convolution_param { num_output: 4 kernel_size: 3 weight_filler { type: 'xavier' } } }
  layer { name: 'pool' type: 'Pooling' bottom: 'conv' top: 'pool' top: 'mask'
          pooling_param { pool: MAX kernel_size: 2 stride: 2 } }
  layer { name: 'ip' type: 'InnerProduct' bottom: 'pool' top: 'ip'
          inner_product_param { num_output: 3 weight_filler { type: 'xavier' } } }
  layer { name: 'loss' type: 'SoftmaxWithLoss' bottom: 'ip' bottom: 'label' top: 'loss' }
)";

TEST(EngineDecisionTest, TheNetHandsEachLayerItsDecisionAndReportsIt) {
  NetParameter param = ParseText<NetParameter>(kNet);
  param.mutable_state()->set_phase(TRAIN);
  Net net(param, Context());
  auto engine_of = [&](const std::string& name) {
    return EngineName(net.layer_by_name(name)->engine().engine);
  };
  EXPECT_EQ(engine_of("conv"), "DNNL");
  EXPECT_EQ(engine_of("pool"), "CAFFE");
  EXPECT_EQ(engine_of("ip"), "DNNL");
  EXPECT_EQ(engine_of("loss"), "CAFFE");
  const std::string report = FormatMemoryReport(ReportNetMemory(net, 2, 0));
  EXPECT_NE(report.find("engines and types"), std::string::npos) << report;
  EXPECT_NE(report.find("DNNL, FLOAT: 2 layers (conv, ip)"), std::string::npos) << report;
  EXPECT_NE(report.find("CAFFE, FLOAT: 3 layers (data, pool, loss)"), std::string::npos) << report;
  EXPECT_NE(MemoryReportJson(ReportNetMemory(net, 2, 0))
                .find(R"({"name":"conv","type":"Convolution","engine":"DNNL","types":"FLOAT"})"),
            std::string::npos);

  param.set_engine(CAFFE);
  Net caffe(param, Context());
  EXPECT_EQ(EngineName(caffe.layer_by_name("conv")->engine().engine), "CAFFE");
}

TEST(EngineDecisionTest, ANetAskingForTypesNoEngineRunsFailsAtInitNamingTheLayer) {
  NetParameter param = ParseText<NetParameter>(kNet);
  ASSERT_EQ(param.layer(0).name(), "data");
  param.mutable_layer(0)->set_forward_type(BFLOAT16);  // its own field: taken as given
  const std::string error = ErrorOf([&] { Net net(param, Context()); });
  EXPECT_NE(error.find("layer 'data' (DummyData) asks for forward BFLOAT16"), std::string::npos)
      << error;
}

TEST(EngineDecisionTest, ANetWithAPrecisionRunsEachLayerInWhatItCan) {
  NetParameter param = ParseText<NetParameter>(kNet);
  param.mutable_state()->set_phase(TRAIN);
  ApplyPrecision(BFLOAT16, &param);
  Net net(param, Context());
  EXPECT_EQ(net.layer_by_name("conv")->engine().types.forward_storage, BFLOAT16);
  EXPECT_EQ(net.layer_by_name("conv")->engine().types.forward_math, Bf16MathHere());
  EXPECT_EQ(net.layer_by_name("ip")->engine().types, LayerTypes{});
  EXPECT_EQ(net.layer_by_name("pool")->engine().types, LayerTypes{});
  net.Forward();
  net.Backward();
  EXPECT_TRUE(std::isfinite(net.output_blobs()[0]->cpu_data()[0]));
}

}  // namespace
}  // namespace demi
