// Fuzz target: the --rendezvous value Gloo ranks meet through
// (file:///dir or redis://host:port), parsed as GlooCommunicator does before
// it touches any store.
#include <cstddef>
#include <cstdint>
#include <string>

#include "demi/parallel/rendezvous.hpp"
#include "fuzz_util.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char*** argv) {
  demi::fuzz::SetUp(*argv);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace demi;
  const std::string url(reinterpret_cast<const char*>(data), size);
  try {
    const Rendezvous rendezvous = ParseRendezvous(url);
    // What a parse promises: an absolute directory for file://, a host and a
    // port in range for redis://.
    const bool valid =
        rendezvous.kind == Rendezvous::kFile
            ? !rendezvous.path.empty() && rendezvous.path.front() == '/'
            : !rendezvous.host.empty() && rendezvous.port > 0 && rendezvous.port < 65536;
    if (!valid) __builtin_trap();
  } catch (const Error&) {
  }
  return 0;
}
