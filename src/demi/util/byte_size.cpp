#include "demi/util/byte_size.hpp"

#include "demi/common.hpp"
#include "demi/util/cli.hpp"

namespace demi {

size_t ParseByteSize(const std::string& text, const std::string& what) {
  double value = 0;
  const size_t end = ReadNumber(text, &value);
  if (end == 0) ThrowError(StrCat(what, ": cannot read a size from '", text, "'"));
  const std::string unit = text.substr(end);
  // As GNU coreutils: K, M, G and KiB, MiB, GiB are powers of 1024; KB, MB
  // and GB, as disk makers use them, powers of 1000.
  double scale = 1;
  if (unit == "KiB" || unit == "K") {
    scale = 1024.0;
  } else if (unit == "MiB" || unit == "M") {
    scale = 1024.0 * 1024;
  } else if (unit == "GiB" || unit == "G") {
    scale = 1024.0 * 1024 * 1024;
  } else if (unit == "KB") {
    scale = 1e3;
  } else if (unit == "MB") {
    scale = 1e6;
  } else if (unit == "GB") {
    scale = 1e9;
  } else {
    DEMI_CHECK(unit.empty() || unit == "B", what, ": unknown unit '", unit, "' in '", text,
               "' (use B, KiB, MiB, GiB or KB, MB, GB)");
  }
  const double bytes = value * scale;
  DEMI_CHECK(bytes >= 0 && bytes < 0x1p64, what, ": '", text,
             "' is not a size between 0 and 16 EiB");
  return static_cast<size_t>(bytes);
}

}  // namespace demi
