#ifndef DEMI_MEMORY_TIMELINE_SVG_HPP_
#define DEMI_MEMORY_TIMELINE_SVG_HPP_

#include <string>
#include <vector>

#include "demi/memory/report.hpp"

namespace demi {

/// An SVG chart of each report's timeline (`memory --timeline`): the
/// schedule's steps across (numbered, with the layer each runs; in TRAIN a
/// dashed line where backward begins), MiB up; every tensor of the ARENA plan
/// a rectangle over the steps it lives at its offset, with a hover <title>
/// (name, shape, bytes, steps live); the live bytes' curve (its peak is the
/// lower bound), the arena's size and NONE's total. A report with
/// recomputation adds a chart of the recomputed schedule: replayed forward
/// steps marked, the dropped tensors in red.
std::string MemoryTimelineSvg(const std::vector<NetMemoryReport>& reports);

}  // namespace demi

#endif  // DEMI_MEMORY_TIMELINE_SVG_HPP_
