#include "demi/util/engine.hpp"

namespace demi {

EngineKind RequestedEngine(int layer_engine, const Context& context) {
  const auto own = static_cast<EngineKind>(layer_engine);
  return own != EngineKind::kDefault ? own : context.engine;
}

bool WantsDnnl(int layer_engine, const Context& context) {
  if (context.device != Device::kCPU) return false;
  const EngineKind engine = RequestedEngine(layer_engine, context);
  return engine == EngineKind::kDnnl || engine == EngineKind::kDefault;
}

void LogDnnlFallback(const LayerParameter& param, const std::string& reason) {
  LOG(INFO) << param.type() << " layer '" << param.name() << "' runs the CAFFE engine: " << reason;
}

bool ParseEngineFlag(const std::string& value, Engine* engine) {
  if (value.empty()) return false;
  DEMI_CHECK(Engine_Parse(value, engine), "--engine must be DEFAULT, CAFFE, CUDNN or DNNL, got '",
             value, "'");
  return true;
}

}  // namespace demi
