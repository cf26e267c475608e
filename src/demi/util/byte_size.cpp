#include "demi/util/byte_size.hpp"

#include "demi/common.hpp"
#include "demi/util/cli.hpp"

namespace demi {

size_t ParseByteSize(const std::string& text, const std::string& what) {
  double value = 0;
  const size_t end = ReadNumber(text, &value);
  if (end == 0) ThrowError(StrCat(what, ": cannot read a size from '", text, "'"));
  const std::string unit = text.substr(end);
  double scale = 1;
  if (unit == "KiB" || unit == "K" || unit == "KB") {
    scale = 1024.0;
  } else if (unit == "MiB" || unit == "M" || unit == "MB") {
    scale = 1024.0 * 1024;
  } else if (unit == "GiB" || unit == "G" || unit == "GB") {
    scale = 1024.0 * 1024 * 1024;
  } else {
    DEMI_CHECK(unit.empty() || unit == "B", what, ": unknown unit '", unit, "' in '", text,
               "' (use B, KiB, MiB or GiB)");
  }
  const double bytes = value * scale;
  DEMI_CHECK(bytes >= 0 && bytes < 0x1p64, what, ": '", text,
             "' is not a size between 0 and 16 EiB");
  return static_cast<size_t>(bytes);
}

}  // namespace demi
