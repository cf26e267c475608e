// Fuzz target: a database record as the Data layer handles it: the bytes
// parsed in place as a Datum (raw or encoded; ParseDatumInPlace), then
// transformed. A record the in-place parse takes must parse the same with
// protobuf (else abort: a finding). The first byte picks one of a few
// transform_param settings and the phase; the rest is the record.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "demi/data/datum_view.hpp"
#include "demi/data/transformer.hpp"
#include "demi/util/io.hpp"
#include "fuzz_util.hpp"

namespace demi {
namespace {

struct Setting {
  const char* text;
  Phase phase;
};

// Each step of the transformer at least once: crops, mirror, mean values,
// resizes, the random resized crop, color jitter, forced channels.
const Setting kSettings[] = {
    {"", TEST},
    {"crop_size: 3 mirror: true scale: 0.5 mean_value: 10", TRAIN},
    {"crop_size: 8 random_resized_crop: true rrc_min_area: 0.2 brightness: 0.4 contrast: 0.4 "
     "saturation: 0.4",
     TRAIN},
    {"resize_shorter_side: 6 crop_size: 4 mean_value: 1 mean_value: 2 mean_value: 3", TEST},
    {"force_gray: true mirror: true", TRAIN},
    {"force_color: true mean_value: 100 mean_value: 110 mean_value: 120", TEST},
};
constexpr int kNumSettings = sizeof(kSettings) / sizeof(kSettings[0]);

/// Outputs past this many floats are not worth a fuzz run's time.
constexpr int64_t kMaxOutput = int64_t{1} << 24;

/// Aborts unless protobuf parses `record` to `fields` with `data` as its data
/// (a record that repeats the data field leaves it in `fields` too).
void ExpectProtobufAgrees(std::string_view record, Datum fields, std::string_view data) {
  Datum whole;
  if (!whole.ParseFromArray(record.data(), static_cast<int>(record.size()))) std::abort();
  if (whole.data() != data) std::abort();
  whole.clear_data();
  fields.clear_data();
  if (whole.SerializeAsString() != fields.SerializeAsString()) std::abort();
}

void TransformOnce(const Transformer& transformer, const DatumView& datum, uint32_t seed) {
  const std::vector<int64_t> shape = transformer.OutputShape(datum);
  int64_t count = 1;
  for (int64_t dim : shape) {
    if (dim <= 0 || dim > kMaxOutput || count > kMaxOutput / dim) return;
    count *= dim;
  }
  std::vector<float> out(static_cast<size_t>(count));
  RandomEngine engine = RecordEngine(seed, 0, 0);
  transformer.Transform(datum, shape, &engine, out.data());
}

}  // namespace
}  // namespace demi

extern "C" int LLVMFuzzerInitialize(int*, char*** argv) {
  demi::fuzz::SetUp(*argv);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace demi;
  if (size == 0) return 0;
  const Setting& setting = kSettings[data[0] % kNumSettings];
  TransformationParameter param;
  ParseProtoText(setting.text, "kSettings", &param);
  const std::string_view record(reinterpret_cast<const char*>(data) + 1, size - 1);
  Datum fields;
  std::string_view pixels;
  if (!ParseDatumInPlace(record, &fields, &pixels)) return 0;
  ExpectProtobufAgrees(record, fields, pixels);
  try {
    const Transformer transformer(param, setting.phase, "fuzz Data layer");
    TransformOnce(transformer, DatumView(fields, pixels), data[0]);
  } catch (const Error&) {  // BadRecordError included
  }
  return 0;
}
