#ifndef DEMI_TEST_NET_SOURCES_HPP_
#define DEMI_TEST_NET_SOURCES_HPP_

// The test nets a solver prototxt gives, as the Solver builds them and as
// the memory tools size them.
#include <string>
#include <vector>

#include "demi/proto/demi.pb.h"

namespace demi {

/// One test net's parameters (its state set, the solver's overrides
/// applied), where they come from (for the log) and the prototxt they were
/// read from ("" when given inline).
struct TestNetSource {
  NetParameter param;
  std::string source;
  std::string path;
};

/// The solver's test nets in the order it builds them: every
/// test_net_param, every test_net file, then one instance of the generic net
/// (net_param or net) per test_iter beyond those. Each has phase TEST, then
/// its own state, then the solver's test_state for it.
std::vector<TestNetSource> SolverTestNets(const SolverParameter& solver);

}  // namespace demi

#endif  // DEMI_TEST_NET_SOURCES_HPP_
