// The "Python" layer: a layer whose setup, reshape, forward and backward are
// the methods of a Python class deriving demitasse.Layer (caffe.Layer), named
// by python_param { module layer param_str }, as in Caffe. Built when
// WITH_PYTHON_LAYER=1; the Python module links it, and so do the tools, which
// start an interpreter the first time a net holds such a layer.
#ifndef DEMI_PYTHON_PYTHON_LAYER_HPP_
#define DEMI_PYTHON_PYTHON_LAYER_HPP_

#include <string>
#include <vector>

#include "bindings.hpp"
#include "demi/layer.hpp"

namespace demi {
namespace python {

/// The blobs of a Python layer as its `self.blobs` sees them: pycaffe's
/// BlobVec, whose add_blob(*shape) appends a learnable param during setup.
/// The net registers those params like any layer's (saved in .caffemodel,
/// shared by share_with, updated by the solver).
struct LayerBlobs {
  Layer* layer;  ///< nullptr once the layer is gone: access then raises
  std::vector<std::shared_ptr<Blob>>& blobs() const;
};

/// @brief Runs a Python class's methods as a layer.
///
/// Bottom and top: any number (a Python data layer has no bottoms). Each
/// call takes the GIL (the bindings release it around forward, backward,
/// step and solve); an exception raised in Python becomes a demi::Error
/// naming the layer, the method and the exception's type and message.
///
/// Memory planner: Backward is opaque, so it is declared to read every
/// bottom and top (they stay live until it ran); tops are planned as any
/// layer's. Arrays Python keeps across calls (self.x = bottom[0].data) point
/// into planned memory that other tensors reuse: copy them (np.copy).
///
/// Replication: every replica builds its own instance of the class (CPU
/// replicas call them from their threads, one at a time under the GIL);
/// share_in_parallel is accepted and has no effect (a data layer that must
/// give each replica its own shard reads the replica's rank itself).
class PythonLayer : public Layer {
 public:
  explicit PythonLayer(const LayerParameter& param);
  ~PythonLayer() override;

  void LayerSetUp(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Reshape(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  const char* type() const override { return "Python"; }
  /// Python may draw random numbers or read a file: keep its prototxt order.
  bool ForwardDraws() const override { return true; }
  /// The net calls reshape() before each forward(), as Caffe's
  /// Layer::Forward does, and either may give the tops new shapes (a data
  /// layer loading an image of another size): the layers after it follow.
  bool ForwardReshapesTops() const override { return true; }

  /// The instance of the Python class (None before construction finished).
  py::object instance() const { return self_; }

 protected:
  void Forward_cpu(const std::vector<Blob*>& bottom, const std::vector<Blob*>& top) override;
  void Backward_cpu(const std::vector<Blob*>& top, const std::vector<bool>& propagate_down,
                    const std::vector<Blob*>& bottom) override;

 private:
  /// Runs `body` under the GIL, turning a Python exception into an Error.
  template <typename Body>
  void Call(const char* method, Body body);

  py::object self_;
  std::shared_ptr<LayerBlobs> blobs_view_;
};

/// Binds LayerBlobs (the module's `_LayerBlobs`).
void DefinePythonLayer(py::module_& module);

}  // namespace python
}  // namespace demi

#endif  // DEMI_PYTHON_PYTHON_LAYER_HPP_
