// The headers nearly every object of the library, tools and tests reads, compiled once per
// build directory (the Makefile's USE_PCH) and read by the compiler before each source file.
// The schema's generated classes alone were about 60 % of a small layer's compile time.
// Nothing includes this file: each source still includes what it uses, and builds without
// the precompiled header (USE_PCH := 0, as under ccache) check that it does.
#ifndef DEMI_PRECOMPILED_HPP_
#define DEMI_PRECOMPILED_HPP_

#include <glog/logging.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "demi/proto/demi.pb.h"

#endif  // DEMI_PRECOMPILED_HPP_
