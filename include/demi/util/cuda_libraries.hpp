#ifndef DEMI_UTIL_CUDA_LIBRARIES_HPP_
#define DEMI_UTIL_CUDA_LIBRARIES_HPP_

// cuBLAS, cuDNN and NCCL, loaded when a GPU first needs them rather than when
// the process starts. The CUDA build does not link them (ldd lists none): a
// CPU run maps none of their ~1.3 GB and starts like a CPU_ONLY build, and a
// machine without them still runs nets on the CPU. The CUDA runtime is linked
// statically (libcudart_static), which loads the driver on its first call.
//
// lazy_cublas.cpp, lazy_cudnn.cpp and lazy_nccl.cpp define each vendor
// function Demitasse calls, with the vendor's signature, as a call through a
// pointer that LazySymbol resolves on the function's first call; call sites
// include the vendor headers and stay unchanged. Calling a vendor function
// not defined there fails to link: add it to its library's file. The loading
// itself is util/lazy_library.
#ifndef CPU_ONLY

#include "demi/util/lazy_library.hpp"

#define DEMI_LAZY_STRING_(x) #x
#define DEMI_LAZY_STRING(x) DEMI_LAZY_STRING_(x)

/// Defines the vendor function `name`, returning `ret`, with the parameter
/// list `params` (as the vendor header declares it) and the argument names
/// `args`, as a call through the pointer resolved from `library` the first
/// time. `name` may be a vendor macro (cublasSgemm is cublasSgemm_v2): it is
/// expanded before it is spelled. Hidden: a shared library of ours (libdemi.so,
/// the Python module) must not export these names, or the vendor library it
/// loads could bind its own internal calls to them and call itself forever.
/// The pointer's type is spelled from `ret` and `params`, not decltype(&name):
/// a vendor header may overload the name (cublasGemmEx has an inline C++
/// wrapper beside the C function).
#define DEMI_LAZY_FUNCTION(library, ret, name, params, args)                  \
  extern "C" __attribute__((visibility("hidden"))) ret name params {          \
    static const auto function =                                              \
        ::demi::LazyFunction<ret(*) params>(library, DEMI_LAZY_STRING(name)); \
    return function args;                                                     \
  }

#endif  // CPU_ONLY
#endif  // DEMI_UTIL_CUDA_LIBRARIES_HPP_
