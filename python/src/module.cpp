// The `_demitasse` extension module that python3 imports.
#include "bindings.hpp"

PYBIND11_MODULE(_demitasse, module) { demi::python::DefineModule(module); }
