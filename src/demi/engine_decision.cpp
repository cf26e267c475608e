#include "demi/engine_decision.hpp"

#include <algorithm>
#include <initializer_list>
#include <set>
#include <string>

#include "demi/util/dnnl.hpp"

#ifdef USE_CUDNN
#include <cudnn.h>
#endif

namespace demi {

namespace {

/// Why an engine cannot run a layer's parameters, or "" when it can.
using ParamCheck = std::string (*)(const LayerParameter& param);

/// One row of the table: an engine that computes layers of `layer_type` on
/// `device`, in these storage and math types, for the parameters `check`
/// accepts (every parameter when null).
struct EngineRow {
  const char* layer_type;
  Device device;
  EngineKind engine;
  std::vector<Type> storage;
  std::vector<Type> math;
  ParamCheck check = nullptr;
  /// Whether a precision preference takes this row's 16-bit math; false
  /// where it was measured slower than FLOAT: it runs when a layer or the
  /// net's default_* fields ask for it.
  bool preferred = true;
};

std::string DnnlPooling(const LayerParameter& param) {
  const PoolingParameter::PoolMethod method = param.pooling_param().pool();
  if (method != PoolingParameter::MAX && method != PoolingParameter::AVE) {
    return "oneDNN has no STOCHASTIC pooling";
  }
  return param.top_size() > 1 ? "oneDNN gives no argmax mask top" : "";
}

std::string DnnlLrn(const LayerParameter& param) {
  return param.lrn_param().norm_region() == LRNParameter::WITHIN_CHANNEL
             ? "oneDNN's WITHIN_CHANNEL uses k where Caffe uses 1"
             : "";
}

std::string DnnlRelu(const LayerParameter& param) {
  // CAFFE then refuses the slope with its own message.
  return param.relu_param().negative_slope() < 0 ? "a negative negative_slope" : "";
}

std::string DnnlEltwise(const LayerParameter& param) {
  return param.eltwise_param().operation() == EltwiseParameter::SUM
             ? ""
             : "oneDNN sums only (not PROD or MAX)";
}

#ifdef USE_CUDNN
std::string CudnnPooling(const LayerParameter& param) {
  if (param.top_size() > 1) return "cuDNN gives no argmax mask top";
  // As in Caffe, cuDNN pooling does not run in place.
  const bool in_place =
      param.bottom_size() > 0 && param.top_size() > 0 && param.bottom(0) == param.top(0);
  return in_place ? "cuDNN pooling does not run in place" : "";
}

std::string CudnnLrn(const LayerParameter& param) {
  const LRNParameter& lrn = param.lrn_param();
  const bool fits = lrn.norm_region() == LRNParameter::ACROSS_CHANNELS &&
                    lrn.local_size() >= CUDNN_LRN_MIN_N && lrn.local_size() <= CUDNN_LRN_MAX_N &&
                    lrn.k() >= CUDNN_LRN_MIN_K && lrn.beta() >= CUDNN_LRN_MIN_BETA;
  return fits ? ""
              : "cuDNN's LRN runs ACROSS_CHANNELS with local_size 1..16, k >= 1e-5 and "
                "beta >= 0.01 only";
}

std::string CudnnRelu(const LayerParameter& param) {
  return param.relu_param().negative_slope() == 0 ? "" : "cuDNN's ReLU has no negative_slope";
}

std::string CudnnBatchNorm(const LayerParameter& param) {
  return param.batch_norm_param().eps() >= CUDNN_BN_MIN_EPSILON
             ? ""
             : StrCat("cuDNN needs eps >= ", CUDNN_BN_MIN_EPSILON);
}
#endif

/// Every engine but CAFFE, in the order DEFAULT prefers them. BatchNorm's
/// and Scale's DNNL engine is our own loops over oneDNN's channel-blocked
/// layouts, so a DNNL net keeps its blobs blocked through them.
const std::vector<EngineRow>& EngineTable() {
  static const std::vector<EngineRow> table = [] {
    std::vector<EngineRow> rows;
    auto add = [&rows](Device device, EngineKind engine, std::initializer_list<const char*> types,
                       ParamCheck check = nullptr, std::vector<Type> math = {FLOAT},
                       bool preferred = true, std::vector<Type> storage = {FLOAT}) {
      for (const char* type : types) {
        rows.push_back({type, device, engine, storage, math, check, preferred});
      }
    };
    const std::vector<Type> narrow = {FLOAT, BFLOAT16};
    const std::vector<Type> narrow_storage = {FLOAT, BFLOAT16, FLOAT16};
    // oneDNN's bfloat16 kernels: inputs rounded to bfloat16, sums in FLOAT
    // (AVX512_BF16's dot products; emulated on older AVX-512 cores);
    // Convolution also reads and writes bfloat16 blobs. Without AVX-512
    // oneDNN has none: BFLOAT16 is a storage type there, as FLOAT16 is
    // (DnnlWidens), and its math FLOAT.
    const std::vector<Type> dnnl_bf16 = DnnlComputesBfloat16() ? narrow : std::vector<Type>{FLOAT};
    add(Device::kCPU, EngineKind::kDnnl, {"Convolution"}, nullptr, dnnl_bf16, true, narrow);
    // oneDNN 2.x computes FLOAT16 on the CPU only where AVX512_FP16 exists
    // (not in the cores we run on): FLOAT16 blobs are reordered into FLOAT
    // and back around a FLOAT convolution (and pooling), and Eltwise SUM's
    // sum reads them.
    add(Device::kCPU, EngineKind::kDnnl, {"Convolution"}, nullptr, {FLOAT}, true, {FLOAT, FLOAT16});
    add(Device::kCPU, EngineKind::kDnnl, {"Deconvolution"}, nullptr, dnnl_bf16);
    // InnerProduct's too, but at the batches a CPU trains (M = 32 to 128
    // rows: AlexNet's fc6 to fc8) converting W to bfloat16 on each pass
    // costs more than the bf16 product saves: 1.5-2x slower than FLOAT, so
    // a precision preference leaves it in FLOAT.
    add(Device::kCPU, EngineKind::kDnnl, {"InnerProduct"}, nullptr, dnnl_bf16,
        /*preferred=*/false);
    add(Device::kCPU, EngineKind::kDnnl, {"Softmax"});
    // Loops and primitives that store bfloat16 and compute in FLOAT.
    add(Device::kCPU, EngineKind::kDnnl, {"BatchNorm", "Scale"}, nullptr, {FLOAT}, true,
        narrow_storage);
    add(Device::kCPU, EngineKind::kDnnl, {"Pooling"}, DnnlPooling, {FLOAT}, true, narrow_storage);
    add(Device::kCPU, EngineKind::kDnnl, {"LRN"}, DnnlLrn, {FLOAT}, true, narrow);
    // oneDNN's eltwise has no bfloat16 kernel without AVX-512: CAFFE's
    // ReLU stores BFLOAT16 there.
    add(Device::kCPU, EngineKind::kDnnl, {"ReLU"}, DnnlRelu, {FLOAT}, true, dnnl_bf16);
    add(Device::kCPU, EngineKind::kDnnl, {"Eltwise"}, DnnlEltwise, {FLOAT}, true, narrow_storage);
#ifdef USE_CUDNN
    // cuDNN stores FLOAT16 and BFLOAT16 where it takes them, and sums in
    // FLOAT (convolutions in tensor-op math); Convolution and Pooling
    // convert a FLOAT neighbour's blob through scratch (NarrowStaging).
    add(Device::kGPU, EngineKind::kCudnn, {"Convolution", "Deconvolution"}, nullptr, {FLOAT}, true,
        narrow_storage);
    add(Device::kGPU, EngineKind::kCudnn, {"Sigmoid", "TanH", "Softmax"});
    add(Device::kGPU, EngineKind::kCudnn, {"Pooling"}, CudnnPooling, {FLOAT}, true, narrow_storage);
    add(Device::kGPU, EngineKind::kCudnn, {"LRN"}, CudnnLrn);
    add(Device::kGPU, EngineKind::kCudnn, {"ReLU"}, CudnnRelu, {FLOAT}, true, narrow_storage);
    add(Device::kGPU, EngineKind::kCudnn, {"BatchNorm"}, CudnnBatchNorm, {FLOAT}, true,
        narrow_storage);
#endif
    return rows;
  }();
  return table;
}

/// CAFFE: the reference code, on both devices (CUDA kernels on the GPU).
/// Split's, Concat's and ReLU's CPU code also stores 16 bits (Split sums
/// gradients in FLOAT; Concat copies; ReLU maps in FLOAT a chunk at a time),
/// so a branch or a join does not end a 16-bit stretch of a net, and ReLU
/// stores FLOAT16 (BFLOAT16 too without AVX-512), which oneDNN's eltwise does
/// not on these CPUs. On the GPU, Split's, Scale's, BatchNorm's, ReLU's,
/// Pooling's, Concat's, Dropout's and Eltwise SUM's kernels store 16 bits (in
/// FLOAT arithmetic),
/// and InnerProduct's cuBLAS products take 16-bit inputs with FLOAT sums, so
/// a net stays 16-bit from its first cuDNN convolution up to its loss
/// (Softmax and the losses stay FLOAT; LRN stores 16 bits in our kernels,
/// cuDNN's LRN FLOAT only); where cuDNN takes no BFLOAT16
/// pooling or activation, ours run instead. On both devices the neuron
/// layers written as formulas (layers/elementwise.hpp's maps: Sigmoid, ELU,
/// BNLL, Clip, Exp, Log, TanH, AbsVal, Power, Swish, Threshold) and PReLU
/// map 16-bit blobs in FLOAT arithmetic.
EngineRow ReferenceRow(const LayerParameter& param, Device device) {
  static const std::set<std::string> mapped = {"Sigmoid", "ELU",   "BNLL",      "Clip",
                                               "Exp",     "Log",   "TanH",      "AbsVal",
                                               "Power",   "Swish", "Threshold", "PReLU"};
  static const std::set<std::string> cpu_narrow = {"Split", "Concat", "ReLU"};
  static const std::set<std::string> gpu_narrow = {
      "Split",   "Concat",  "ReLU",         "Scale",   "BatchNorm",
      "Pooling", "Dropout", "InnerProduct", "Eltwise", "LRN"};
  const std::string& layer_type = param.type();
  const bool sum =
      layer_type != "Eltwise" || param.eltwise_param().operation() == EltwiseParameter::SUM;
  const bool narrow =
      mapped.count(layer_type) > 0 ||
      (sum && (device == Device::kCPU ? cpu_narrow : gpu_narrow).count(layer_type) > 0);
  return {"",
          device,
          EngineKind::kCaffe,
          narrow ? std::vector<Type>{FLOAT, BFLOAT16, FLOAT16} : std::vector<Type>{FLOAT},
          {FLOAT}};
}

bool Contains(const std::vector<Type>& types, Type type) {
  return std::find(types.begin(), types.end(), type) != types.end();
}

/// Whether `row` runs `types` (for a precision `preference`: and prefers
/// to). A layer without bottoms (data layers) stores no bottom gradient, so
/// its backward storage type does not matter.
bool RunsTypes(const EngineRow& row, const LayerTypes& types, bool has_bottoms, bool preference) {
  const bool float_math = types.forward_math == FLOAT && types.backward_math == FLOAT;
  return Contains(row.storage, types.forward_storage) &&
         (!has_bottoms || Contains(row.storage, types.backward_storage)) &&
         Contains(row.math, types.forward_math) && Contains(row.math, types.backward_math) &&
         (!preference || row.preferred || float_math);
}

std::string TypeList(const std::vector<Type>& types) {
  std::string list;
  for (Type type : types) list += (list.empty() ? "" : "/") + Type_Name(type);
  return list;
}

/// Why `row` cannot run the layer of `param` in `types` (for a precision
/// `preference`): its check's reason, or the types it runs; "" when it can.
std::string WhyNot(const EngineRow& row, const LayerParameter& param, const LayerTypes& types,
                   bool preference = false) {
  const std::string refused = row.check ? row.check(param) : "";
  if (!refused.empty()) return refused;
  return RunsTypes(row, types, param.bottom_size() > 0, preference)
             ? ""
             : StrCat(EngineName(row.engine), " runs ", TypeList(row.storage), " only");
}

std::string DeviceName(Device device) { return device == Device::kCPU ? "the CPU" : "a GPU"; }

/// The engines for a layer on a device, CAFFE last.
std::vector<EngineRow> RowsFor(const LayerParameter& param, Device device) {
  std::vector<EngineRow> rows;
  for (const EngineRow& row : EngineTable()) {
    if (row.layer_type == param.type() && row.device == device) rows.push_back(row);
  }
  rows.push_back(ReferenceRow(param, device));
  return rows;
}

std::string RefusedTypesMessage(const LayerParameter& param, const LayerTypes& types, Device device,
                                const std::vector<EngineRow>& rows) {
  std::string engines;
  for (const EngineRow& row : rows) {
    engines += StrCat(engines.empty() ? "" : "; ", EngineName(row.engine), " stores ",
                      TypeList(row.storage), " and computes in ", TypeList(row.math));
  }
  return StrCat("layer '", param.name(), "' (", param.type(), ") asks for ", types.ToString(),
                ", which no engine of this build runs on ", DeviceName(device), ": ", engines,
                ". Give it types those run (its forward_type, backward_type, forward_math, "
                "backward_math, the net's default_* fields, or --precision)");
}

}  // namespace

bool LayerTypes::operator==(const LayerTypes& other) const {
  return forward_storage == other.forward_storage && forward_math == other.forward_math &&
         backward_storage == other.backward_storage && backward_math == other.backward_math;
}

std::string LayerTypes::ToString() const {
  if (*this == LayerTypes{}) return "FLOAT";
  return StrCat("forward ", Type_Name(forward_storage), " (math ", Type_Name(forward_math),
                "), backward ", Type_Name(backward_storage), " (math ", Type_Name(backward_math),
                ")");
}

EngineKind LayerOwnEngine(const LayerParameter& param) {
  const std::string& type = param.type();
  Engine engine = DEFAULT;
  if (type == "Convolution" || type == "Deconvolution") engine = param.convolution_param().engine();
  if (type == "Pooling") engine = param.pooling_param().engine();
  if (type == "LRN") engine = param.lrn_param().engine();
  if (type == "ReLU") engine = param.relu_param().engine();
  if (type == "Sigmoid") engine = param.sigmoid_param().engine();
  if (type == "TanH") engine = param.tanh_param().engine();
  if (type == "Softmax" || type == "SoftmaxWithLoss") engine = param.softmax_param().engine();
  if (type == "SPP") engine = param.spp_param().engine();
  if (type == "BatchNorm") engine = param.batch_norm_param().engine();
  return static_cast<EngineKind>(engine);
}

LayerTypes RequestedTypes(const LayerParameter& param, const LayerTypes& net_types) {
  LayerTypes types = net_types;
  if (param.has_forward_type()) types.forward_storage = param.forward_type();
  if (param.has_forward_math()) types.forward_math = param.forward_math();
  if (param.has_backward_type()) types.backward_storage = param.backward_type();
  if (param.has_backward_math()) types.backward_math = param.backward_math();
  return types;
}

EngineDefaults NetEngineDefaults(const NetParameter& param) {
  EngineDefaults defaults;
  defaults.engine = static_cast<EngineKind>(param.engine());
  defaults.types.forward_storage = param.default_forward_type();
  defaults.types.forward_math = param.default_forward_math();
  defaults.types.backward_storage = param.default_backward_type();
  defaults.types.backward_math = param.default_backward_math();
  defaults.precision = param.precision();
  return defaults;
}

namespace {

/// The decision for `types` (a candidate of a precision `preference`, or
/// asked for), or "" and the reason in `refusal` when no engine runs them
/// (see DecideEngine).
EngineDecision DecideForTypes(const LayerParameter& param, EngineKind requested,
                              const LayerTypes& types, bool preference, Device device,
                              std::string* refusal) {
  EngineDecision decision;
  decision.requested = requested;
  decision.types = types;
  const EngineKind own = LayerOwnEngine(param);
  const std::vector<EngineRow> rows = RowsFor(param, device);
  if (decision.requested != EngineKind::kDefault) {
    // The engine's row that runs the types, else its first (for the reason).
    const auto of_engine = [&](const EngineRow& row) { return row.engine == decision.requested; };
    auto asked = std::find_if(rows.begin(), rows.end(), [&](const EngineRow& row) {
      return of_engine(row) && WhyNot(row, param, types, preference).empty();
    });
    if (asked == rows.end()) asked = std::find_if(rows.begin(), rows.end(), of_engine);
    const std::string why_not = asked != rows.end() ? WhyNot(*asked, param, types, preference) : "";
    if (asked != rows.end() && why_not.empty()) {
      decision.engine = asked->engine;
      return decision;
    }
    // A named engine that cannot run the layer: CAFFE, as Caffe does.
    if (!WhyNot(rows.back(), param, types).empty()) {
      *refusal = RefusedTypesMessage(param, types, device, rows);
      return decision;
    }
    decision.engine = EngineKind::kCaffe;
    // The net's engine is asked of every layer: one without that engine
    // runs CAFFE as expected, and only the layer's own field is worth a word.
    if (asked != rows.end()) {
      decision.reason = why_not;
    } else if (own != EngineKind::kDefault) {
      decision.reason = StrCat(param.type(), " has no ", EngineName(decision.requested),
                               " engine on ", DeviceName(device));
    }
    return decision;
  }
  std::string passed_over;  // why DEFAULT passed the preferred engine over, for the log
  for (const EngineRow& row : rows) {
    const std::string why_not = WhyNot(row, param, types, preference);
    if (why_not.empty()) {
      decision.engine = row.engine;
      decision.reason = passed_over;
      return decision;
    }
    passed_over = why_not;
  }
  *refusal = RefusedTypesMessage(param, types, device, rows);
  return decision;
}

bool GivesOwnTypes(const LayerParameter& param) {
  return param.has_forward_type() || param.has_forward_math() || param.has_backward_type() ||
         param.has_backward_math();
}

/// The types a layer is asked for by its net (`precision` or default_*
/// fields), narrowest first (rule 1): as asked, then FLOAT math, then FLOAT
/// storage, then FLOAT.
std::vector<LayerTypes> NarrowestFirst(const LayerTypes& asked) {
  LayerTypes float_math = asked;
  float_math.forward_math = float_math.backward_math = FLOAT;
  LayerTypes float_storage = asked;
  float_storage.forward_storage = float_storage.backward_storage = FLOAT;
  return {asked, float_math, float_storage, LayerTypes{}};
}

/// Whether `types` are FLOAT and 16-bit types only, not all FLOAT: what a
/// net's default_* fields may ask of layers that run narrower than FLOAT
/// only where they can.
bool NarrowerThanFloat(const LayerTypes& types) {
  const auto fits = [](Type type) { return type == FLOAT || type == FLOAT16 || type == BFLOAT16; };
  return types != LayerTypes{} && fits(types.forward_storage) && fits(types.forward_math) &&
         fits(types.backward_storage) && fits(types.backward_math);
}

}  // namespace

namespace {

/// Whether the net's `precision` decides the layer's types: it gives none.
bool PrecisionApplies(const LayerParameter& param, const EngineDefaults& defaults) {
  return defaults.precision != FLOAT && !GivesOwnTypes(param);
}

/// What the net asks of the layer: its precision's types, or its default_*
/// fields.
LayerTypes NetTypesFor(const LayerParameter& param, const EngineDefaults& defaults) {
  const Type p = defaults.precision;
  return PrecisionApplies(param, defaults) ? LayerTypes{p, p, p, p} : defaults.types;
}

/// The layers whose DNNL rows compute in BFLOAT16 where oneDNN does (the
/// table's dnnl_bf16 math).
bool HasOnednnBfloat16Math(const std::string& layer_type) {
  return layer_type == "Convolution" || layer_type == "Deconvolution" ||
         layer_type == "InnerProduct";
}

/// `types`, with BFLOAT16 math FLOAT on a CPU that oneDNN computes no
/// bfloat16 on (no AVX-512) for a layer that computes it where oneDNN does:
/// its own forward_math: BFLOAT16 (a prototxt written for another CPU) runs
/// there in the wider type, as the log's "wider types" line says, rather
/// than not at all. Other layers' BFLOAT16 math is refused on any CPU.
LayerTypes WithMathThisCpuRuns(LayerTypes types, const LayerParameter& param, Device device) {
  if (device != Device::kCPU || DnnlComputesBfloat16() || !HasOnednnBfloat16Math(param.type())) {
    return types;
  }
  for (Type* math : {&types.forward_math, &types.backward_math}) {
    if (*math == BFLOAT16) *math = FLOAT;
  }
  return types;
}

}  // namespace

LayerTypes AskedTypes(const LayerParameter& param, const EngineDefaults& defaults) {
  return RequestedTypes(param, NetTypesFor(param, defaults));
}

EngineDecision DecideEngine(const LayerParameter& param, const EngineDefaults& defaults,
                            Device device) {
  const EngineKind own = LayerOwnEngine(param);
  const EngineKind requested = own != EngineKind::kDefault ? own : defaults.engine;
  const bool preference = PrecisionApplies(param, defaults);
  // The net's 16-bit types narrow; the layer's own fields stay as given.
  const LayerTypes net = NetTypesFor(param, defaults);
  std::vector<LayerTypes> candidates;
  for (const LayerTypes& types : NarrowerThanFloat(net) ? NarrowestFirst(net) : std::vector{net}) {
    candidates.push_back(RequestedTypes(param, types));
  }
  std::string refusal;
  for (const LayerTypes& asked : candidates) {
    refusal.clear();
    const LayerTypes types = WithMathThisCpuRuns(asked, param, device);
    EngineDecision decision = DecideForTypes(param, requested, types, preference, device, &refusal);
    if (refusal.empty()) return decision;
    if (types != asked) {
      refusal += StrCat(" (it asks for ", asked.ToString(),
                        "; BFLOAT16 math runs in FLOAT on this CPU, where oneDNN has no bfloat16 "
                        "kernels without AVX-512)");
    }
  }
  ThrowError(refusal);
}

std::string EngineName(EngineKind engine) {
  // EngineKind takes the proto's numbers.
  return Engine_Name(static_cast<Engine>(engine));
}

std::string DescribeDecision(const LayerParameter& param, const EngineDecision& decision) {
  std::string line = StrCat(param.name(), " (", param.type(), "): ", EngineName(decision.engine),
                            ", ", decision.types.ToString());
  if (!decision.reason.empty()) {
    line += StrCat(" (", EngineName(decision.requested), " asked for: ", decision.reason, ")");
  }
  return line;
}

bool ParseEngineFlag(const std::string& value, Engine* engine) {
  if (value.empty()) return false;
  DEMI_CHECK(Engine_Parse(value, engine), "--engine must be DEFAULT, CAFFE, CUDNN or DNNL, got '",
             value, "'");
  return true;
}

bool ParsePrecisionFlag(const std::string& value, Type* type) {
  if (value.empty()) return false;
  DEMI_CHECK(Type_Parse(value, type) && (*type == FLOAT || *type == FLOAT16 || *type == BFLOAT16),
             "--precision must be FLOAT, FLOAT16 or BFLOAT16, got '", value, "'");
  return true;
}

void ApplyPrecision(Type type, NetParameter* param) {
  param->set_precision(type);
  param->set_default_forward_type(FLOAT);
  param->set_default_backward_type(FLOAT);
  param->set_default_forward_math(FLOAT);
  param->set_default_backward_math(FLOAT);
}

}  // namespace demi
