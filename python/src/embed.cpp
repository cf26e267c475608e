// The `_demitasse` module built into the tools, for the interpreter they
// start when a net holds a Python layer (python_layer.cpp): the layer's
// `import caffe` then binds to the tool's own library, not to a second copy
// in the extension module.
#include <pybind11/embed.h>

#include "bindings.hpp"

PYBIND11_EMBEDDED_MODULE(_demitasse, module) { demi::python::DefineModule(module); }
