#ifndef DEMI_UTIL_ENGINE_HPP_
#define DEMI_UTIL_ENGINE_HPP_

#include <string>

#include "demi/common.hpp"
#include "demi/proto/demi.pb.h"

namespace demi {

/// The engine a layer asked for: its own engine field (`layer_engine`, a
/// value of its param's Engine enum, which all share the numbers of
/// EngineKind) unless DEFAULT, else the net's (context.engine).
EngineKind RequestedEngine(int layer_engine, const Context& context);

/// Whether a layer on the CPU should run oneDNN: DNNL was asked for, or
/// DEFAULT (oneDNN is the default CPU engine). The layer still checks that
/// oneDNN supports its parameters and logs a fallback when not.
bool WantsDnnl(int layer_engine, const Context& context);

/// Logs, once per layer, that the DNNL engine cannot run it and why; the
/// CAFFE engine runs instead.
void LogDnnlFallback(const LayerParameter& param, const std::string& reason);

/// Parses an --engine flag value (DEFAULT, CAFFE, CUDNN or DNNL); "" leaves
/// `engine` untouched and returns false.
bool ParseEngineFlag(const std::string& value, Engine* engine);

}  // namespace demi

#endif  // DEMI_UTIL_ENGINE_HPP_
