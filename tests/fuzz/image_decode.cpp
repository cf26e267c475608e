// Fuzz target: an image file as convert_imageset and ImageData read it
// (OpenCV's decoders behind ReadImageToDatum), then the Datum it makes
// through a transformer. The first byte picks color or gray, a resize, and
// the stored encoding; the rest is the file.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "demi/data/convert.hpp"
#include "demi/data/transformer.hpp"
#include "fuzz_util.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char*** argv) {
  demi::fuzz::SetUp(*argv);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace demi;
  if (size == 0) return 0;
  static fuzz::MemoryFile file;
  const uint8_t options = data[0];
  const bool is_color = options & 1;
  const char* const kEncodings[] = {"", "png", "jpg", "bmp"};
  const std::string encoding = kEncodings[(options >> 1) & 3];
  const bool resize = options & 8;
  const std::string& path = file.Write(data + 1, size - 1);
  try {
    Datum datum;
    const std::vector<int64_t> shape =
        ReadImageToDatum(path, 1, resize ? 7 : 0, resize ? 5 : 0, is_color, encoding, &datum);
    const Transformer transformer(TransformationParameter(), TEST, "fuzz ImageData layer");
    std::vector<float> out(static_cast<size_t>(shape[0] * shape[1] * shape[2]));
    RandomEngine engine = RecordEngine(1, 0, 0);
    transformer.Transform(datum, shape, &engine, out.data());
  } catch (const Error&) {  // BadRecordError included
  }
  return 0;
}
