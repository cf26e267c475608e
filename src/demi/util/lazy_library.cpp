#include "demi/util/lazy_library.hpp"

#include <dlfcn.h>

#include <map>
#include <mutex>
#include <string>

#include "demi/common.hpp"

namespace demi {

namespace {

/// The handle of `library`, opened on first use. Never closed: resolved
/// function pointers outlive every caller. A failed load is not remembered, so
/// a later call (after the user fixed LD_LIBRARY_PATH, say) tries again.
void* Open(const LazyLibrary& library) {
  static std::mutex mutex;
  static std::map<std::string, void*> handles;
  std::lock_guard<std::mutex> lock(mutex);
  auto found = handles.find(library.soname);
  if (found != handles.end()) return found->second;
  // RTLD_LOCAL: its symbols stay out of the global scope, where they could
  // interpose on another copy a user's code loaded.
  void* handle = dlopen(library.soname, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    ThrowError(StrCat("cannot load ", library.name, " (", library.soname, "), which ",
                      library.needed_for, " needs: ", why ? why : "unknown reason",
                      ". Install it (", library.install,
                      ") or add its directory to LD_LIBRARY_PATH"));
  }
  handles.emplace(library.soname, handle);
  return handle;
}

}  // namespace

void* LazySymbol(const LazyLibrary& library, const char* symbol) {
  void* handle = Open(library);
  dlerror();  // clear any earlier error, so that the one below is ours
  void* address = dlsym(handle, symbol);
  if (address == nullptr) {
    const char* why = dlerror();
    ThrowError(StrCat(library.name, " (", library.soname, ") has no function ", symbol, ": ",
                      why ? why : "it resolves to null",
                      ". This build needs the version it was compiled against (", library.install,
                      ")"));
  }
  return address;
}

}  // namespace demi
