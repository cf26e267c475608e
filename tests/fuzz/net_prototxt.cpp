// Fuzz target: a net prototxt, parsed as the tools read it and built for
// TRAIN and for TEST. An Error is a clean rejection; a crash, an abort (a
// glog CHECK), a leak or undefined behaviour is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "demi/net.hpp"
#include "demi/util/io.hpp"
#include "fuzz_util.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char*** argv) {
  demi::fuzz::SetUp(*argv);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace demi;
  NetParameter param;
  try {
    ParseProtoText(std::string(reinterpret_cast<const char*>(data), size), "fuzz.prototxt", &param);
  } catch (const Error&) {
    return 0;
  }
  for (Phase phase : {TRAIN, TEST}) {
    NetParameter for_phase(param);
    for_phase.mutable_state()->set_phase(phase);
    try {
      Net net(for_phase);
    } catch (const Error&) {
    }
  }
  return 0;
}
