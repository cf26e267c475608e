#ifndef DEMI_UTIL_LAZY_LIBRARY_HPP_
#define DEMI_UTIL_LAZY_LIBRARY_HPP_

// A shared library that Demitasse does not link but loads (dlopen) the first
// time one of its functions is called: a process that never needs it maps none
// of it, and a machine without it still runs everything else. cuBLAS, cuDNN
// and NCCL are loaded so (util/cuda_libraries.hpp), and OpenCV's image codecs
// (util/lazy_imgcodecs.cpp), whose dependencies (GDAL, GDCM, ICU...) are most
// of what `make bundle` would otherwise have to carry.

namespace demi {

/// A shared library loaded on first use.
struct LazyLibrary {
  const char* name;        ///< what messages call it: "cuBLAS"
  const char* soname;      ///< the file dlopen looks for: "libcublas.so.13"
  const char* needed_for;  ///< what needs it, for the error message: "running on a GPU"
  const char* install;     ///< how a user gets it, for the error message
};

/// The address of `symbol` in `library`, which is loaded (once per process,
/// thread-safely) on the first call. Throws Error naming the library, the
/// loader's reason and how to install it when it cannot be loaded, or naming
/// the symbol when the installed version lacks it.
void* LazySymbol(const LazyLibrary& library, const char* symbol);

/// LazySymbol as a pointer to the function type `Fn`.
template <typename Fn>
Fn LazyFunction(const LazyLibrary& library, const char* symbol) {
  return reinterpret_cast<Fn>(LazySymbol(library, symbol));
}

}  // namespace demi

#endif  // DEMI_UTIL_LAZY_LIBRARY_HPP_
