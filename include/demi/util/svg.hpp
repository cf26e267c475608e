#ifndef DEMI_UTIL_SVG_HPP_
#define DEMI_UTIL_SVG_HPP_

#include <string>

namespace demi {

// What the SVG pictures (memory/timeline_svg, tools/training_plot) share.

/// `text` with XML's five special characters as entities, for SVG text.
std::string XmlEscaped(const std::string& text);

/// A round tick spacing (1, 2 or 5 times a power of ten) giving about five
/// ticks over `span`.
double TickStep(double span);

}  // namespace demi

#endif  // DEMI_UTIL_SVG_HPP_
