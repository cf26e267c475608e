#ifndef DEMI_UTIL_STRINGS_HPP_
#define DEMI_UTIL_STRINGS_HPP_

// What C++20's std::string_view has and C++17's lacks.
#include <string_view>

namespace demi {

inline bool StartsWith(std::string_view text, std::string_view prefix) {
  return text.size() >= prefix.size() && text.compare(0, prefix.size(), prefix) == 0;
}

inline bool EndsWith(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace demi

#endif  // DEMI_UTIL_STRINGS_HPP_
