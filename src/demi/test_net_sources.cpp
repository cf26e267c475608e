#include "demi/test_net_sources.hpp"

#include "demi/common.hpp"
#include "demi/solver_param.hpp"
#include "demi/util/upgrade_proto.hpp"

namespace demi {

namespace {

/// Test net `index`'s state: phase TEST, then the net's own state, then the
/// solver's test_state for it.
void SetTestState(const SolverParameter& solver, int index, NetParameter* net) {
  NetState state;
  state.set_phase(TEST);
  state.MergeFrom(net->state());
  if (solver.test_state_size() > 0) state.MergeFrom(solver.test_state(index));
  net->mutable_state()->CopyFrom(state);
}

}  // namespace

std::vector<TestNetSource> SolverTestNets(const SolverParameter& solver) {
  const int num_instances = solver.test_iter_size();
  std::vector<TestNetSource> sources;
  for (const NetParameter& test_param : solver.test_net_param()) {
    sources.push_back({test_param, "test_net_param", ""});
  }
  for (const std::string& path : solver.test_net()) {
    sources.push_back({NetParameter(), StrCat("test_net file ", path), path});
    ReadNetParamsFromTextFile(path, &sources.back().param);
  }
  if (num_instances > static_cast<int>(sources.size())) {
    TestNetSource generic;
    if (solver.has_net_param()) {
      generic = {solver.net_param(), "net_param", ""};
    } else {
      generic = {NetParameter(), StrCat("net file ", solver.net()), solver.net()};
      ReadNetParamsFromTextFile(solver.net(), &generic.param);
    }
    sources.resize(num_instances, generic);
  }
  for (int i = 0; i < static_cast<int>(sources.size()); ++i) {
    SetTestState(solver, i, &sources[i].param);
    ApplySolverOverrides(solver, &sources[i].param);
  }
  return sources;
}

}  // namespace demi
