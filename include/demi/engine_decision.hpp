#ifndef DEMI_ENGINE_DECISION_HPP_
#define DEMI_ENGINE_DECISION_HPP_

// Which engine computes each layer, and in which types: decided in one place.
//
// The rule, for a layer of type T on device D:
//  1. Types. Each of forward_type, backward_type, forward_math and
//     backward_math is the layer's own field when it gives one, else the
//     net's default_* field (NVCaffe's names). The types a net asks for
//     narrow where the layer's engines cannot run them, in this order: as
//     asked; the storage asked, math FLOAT; storage FLOAT, the math asked;
//     FLOAT (as PyTorch's autocast runs each operation in the type it has
//     kernels for, and as NVCaffe's fp16 model files expect of a CPU). They
//     are the net's default_* fields when those ask for 16-bit types
//     (FLOAT16, BFLOAT16, FLOAT only), a layer's own fields staying as
//     given; or, for a layer without types of its own, a `precision` P
//     (--precision, the solver's `precision`: storage and math P), which
//     also passes over 16-bit math a row runs only when asked (measured
//     slower than FLOAT: oneDNN's bfloat16 InnerProduct).
//  2. The engine asked for: the layer param's own `engine` field unless it is
//     DEFAULT (or T's param has none), else the net's `engine` (--engine,
//     the solver's `engine`).
//  3. The engines that can run it: the rows of the table in
//     engine_decision.cpp for T and D whose check accepts the layer's
//     parameters, in their order, then CAFFE (the reference code, every
//     type, both devices). DEFAULT takes the first that also runs the
//     types; a named engine is taken when it can run the layer, and CAFFE
//     runs instead (with the reason) when it cannot — as Caffe runs its own
//     code for `engine: CUDNN` on a CPU.
//  4. No engine runs the types: an Error naming the layer, the types asked
//     for, and the types each of its engines runs (for the net's types,
//     only when not even FLOAT runs). (A layer without
//     bottoms stores no bottom gradient: its backward_type is not checked.)
// A shape the chosen engine has no kernel for (found at Reshape, e.g. a
// window oneDNN counts differently) runs CAFFE at that shape, logged once;
// Layer::running_engine() says which ran.
//
// Storage is per blob: a layer that stores BFLOAT16 or FLOAT16 (and whose
// kernels run at the shape: Layer::narrow_blobs()) gets 16-bit blobs where
// every other layer touching them stores that type too, FLOAT ones
// elsewhere; the net chooses (Net::SettleLayouts), and such a layer reads
// and writes both. No CPU kernel of ours computes in FLOAT16: FLOAT16 there
// is storage, with FLOAT math. On a GPU both 16-bit types are storage too:
// cuDNN's convolutions multiply the 16-bit numbers on tensor cores and sum
// in FLOAT, and every other GPU kernel computes in FLOAT.
//
// Adding an engine or a type: a row (or its types) in the table, and the
// layer's kernels. Nothing else decides.
#include <string>
#include <vector>

#include "demi/common.hpp"
#include "demi/proto/demi.pb.h"

namespace demi {

/// The numeric types of one layer: what its tops and bottom gradients are
/// stored as (storage) and what its arithmetic runs in (math), forward and
/// backward.
struct LayerTypes {
  Type forward_storage = FLOAT;
  Type forward_math = FLOAT;
  Type backward_storage = FLOAT;
  Type backward_math = FLOAT;

  bool operator==(const LayerTypes& other) const;
  bool operator!=(const LayerTypes& other) const { return !(*this == other); }
  /// "FLOAT" when all four are FLOAT, else e.g.
  /// "forward BFLOAT16 (math FLOAT), backward BFLOAT16 (math FLOAT)".
  std::string ToString() const;
};

/// The net-wide inputs of the decision: the engine and types of layers
/// that give none of their own.
struct EngineDefaults {
  EngineKind engine = EngineKind::kDefault;
  LayerTypes types;
  /// The net's `precision`: FLOAT leaves `types` in charge (rule 1).
  Type precision = FLOAT;
};

/// What a layer runs: decided at Net init and handed to the layer.
struct EngineDecision {
  EngineKind requested = EngineKind::kDefault;  ///< what the files and flags asked for
  EngineKind engine = EngineKind::kCaffe;       ///< what runs
  LayerTypes types;
  /// Why `engine` is not the one asked for: the engine's check refused the
  /// layer's parameters or types, or the layer's own field named an engine
  /// its type lacks on the device. Empty otherwise (a net-wide engine the
  /// layer's type lacks simply leaves it CAFFE).
  std::string reason;
};

/// The decision for the layer of `param` on `device` (see the rule above).
/// `param` names the layer's bottoms and tops as it is wired (their count,
/// and in place where a top is named as its bottom).
/// Throws Error when no engine runs the layer's types there.
EngineDecision DecideEngine(const LayerParameter& param, const EngineDefaults& defaults,
                            Device device);

/// The defaults of a net's fields (engine, default_* types).
EngineDefaults NetEngineDefaults(const NetParameter& param);

/// The types a layer of `param` asks for, given the net's.
LayerTypes RequestedTypes(const LayerParameter& param, const LayerTypes& net_types);

/// The types the net and the layer's own fields ask of a layer, before rule
/// 1 narrows them to what its engines run: the precision's (storage and
/// math) for a layer without types of its own, else RequestedTypes.
LayerTypes AskedTypes(const LayerParameter& param, const EngineDefaults& defaults);

/// The engine named by a layer param's own `engine` field, DEFAULT when its
/// type has none.
EngineKind LayerOwnEngine(const LayerParameter& param);

/// "DEFAULT", "CAFFE", "CUDNN" or "DNNL".
std::string EngineName(EngineKind engine);

/// One line for the log: "conv1 (Convolution): DNNL, FLOAT" plus the reason
/// when the engine is not the one asked for.
std::string DescribeDecision(const LayerParameter& param, const EngineDecision& decision);

/// Parses an --engine flag value (DEFAULT, CAFFE, CUDNN or DNNL); "" leaves
/// `engine` untouched and returns false.
bool ParseEngineFlag(const std::string& value, Engine* engine);

/// Parses a --precision flag value (FLOAT, FLOAT16 or BFLOAT16); "" leaves
/// `type` untouched and returns false.
bool ParsePrecisionFlag(const std::string& value, Type* type);

/// --precision applied to a net: its `precision` becomes `type` and its
/// default_* types FLOAT, so each layer without types of its own runs the
/// narrowest types down to `type` that it can (rule 1); layers' own types
/// stay.
void ApplyPrecision(Type type, NetParameter* param);

}  // namespace demi

#endif  // DEMI_ENGINE_DECISION_HPP_
