#include "demi/common.hpp"

namespace demi {

void ThrowError(const std::string& message) { throw Error(message); }

}  // namespace demi
