// Solver: built from a solver prototxt whose nets keep every blob, so that
// solver.net.blobs can be read and written between steps.
#include <pybind11/stl.h>

#include <string>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "demi/engine_decision.hpp"
#include "demi/solver.hpp"
#include "demi/solver_param.hpp"
#include "demi/solver_registry.hpp"

namespace demi {
namespace python {

namespace {

using SolverPtr = std::shared_ptr<Solver>;

/// `type`, when not empty, replaces the file's solver type (SGDSolver(path)
/// trains with SGD whatever the file says, as in pycaffe). `seed`, when not
/// -1, is the random_seed of a file that gives none (set_random_seed).
/// `replica` of `num_replicas`: set_solver_rank and set_solver_count (a
/// rank of a multi-process run reads its shard of the training data; rank 0
/// alone tests, displays and snapshots).
SolverPtr LoadSolver(const std::string& path, const std::string& type, bool gpu, int device_id,
                     int64_t seed, const std::string& precision, int replica, int num_replicas) {
  Context context = MakeContext(gpu, device_id);
  DEMI_CHECK(num_replicas >= 1 && replica >= 0 && replica < num_replicas, "solver rank ", replica,
             " is outside 0 to ", num_replicas - 1, " (set_solver_count first)");
  context.replica = replica;
  context.num_replicas = num_replicas;
  SolverParameter param;
  ReadSolverParamsFromTextFile(path, &param);
  if (seed >= 0 && param.random_seed() < 0) param.set_random_seed(seed);
  // Ranks shuffle, skip and augment their data by the seed: they must share
  // one, and each builds its solver before any rank can tell it one (as
  // Replicas::AgreeOnRandomSeed does): a fixed seed, the nets' default.
  if (num_replicas > 1 && param.random_seed() < 0) {
    param.set_random_seed(Context().seed);
    LOG_IF(INFO, replica == 0) << "Solver ranks: no random_seed given, so every rank uses "
                               << param.random_seed()
                               << " (set random_seed or set_random_seed to vary runs)";
  }
  Type precision_type;
  if (ParsePrecisionFlag(precision, &precision_type)) param.set_precision(precision_type);
  if (!type.empty()) {
    param.set_type(type);
    param.clear_solver_type();
  }
  SolverRegistry::CheckType(param.type(), path);  // names the file, as train does
  param.add_keep_blob("*");
  // Its nets' forward(start, end) take layer indices: run them as written.
  param.set_schedule(PROTOTXT);
  return SolverRegistry::Create(param, context);
}

/// A net of the solver, sharing ownership of the solver that holds it.
std::shared_ptr<Net> NetOf(const SolverPtr& solver, Net* net) {
  return std::shared_ptr<Net>(solver, net);
}

/// Runs `body` without the GIL. Meanwhile the solver polls for Ctrl-C once
/// an iteration: a pending KeyboardInterrupt (or an exception a signal
/// handler raised) stops it cleanly, as SIGINT stops tools/train, and is
/// raised once it returns.
template <typename Body>
void RunInterruptibly(Solver& solver, Body body) {
  bool interrupted = false;
  solver.SetActionFunction([&interrupted] {
    py::gil_scoped_acquire acquire;
    if (PyErr_CheckSignals() != 0) {
      interrupted = true;
      return SolverAction::kStop;
    }
    return SolverAction::kNone;
  });
  try {
    py::gil_scoped_release release;
    body();
  } catch (...) {
    solver.SetActionFunction(nullptr);
    throw;
  }
  solver.SetActionFunction(nullptr);
  if (interrupted) throw py::error_already_set();
}

/// pycaffe's add_callback(on_start, on_gradients_ready): Python functions
/// called at the start of each iteration and once its gradients are summed,
/// before the update, under the GIL. An exception they raise stops the step
/// with an Error naming the hook.
class PyCallback : public Solver::Callback {
 public:
  PyCallback(py::function on_start, py::function on_gradients_ready)
      : on_start_(std::move(on_start)), on_gradients_ready_(std::move(on_gradients_ready)) {}
  void OnStart() override { Run("on_start", on_start_); }
  void OnGradientsReady() override { Run("on_gradients_ready", on_gradients_ready_); }

 private:
  static void Run(const char* hook, const py::function& function) {
    std::string failure;
    {
      py::gil_scoped_acquire gil;
      try {
        function();
      } catch (py::error_already_set& error) {
        failure = StrCat("solver callback ", hook, " raised ",
                         py::handle(error.type()).attr("__name__").cast<std::string>(), ": ",
                         std::string(py::str(error.value())));
      }
    }
    if (!failure.empty()) ThrowError(failure);
  }

  py::function on_start_;
  py::function on_gradients_ready_;
};

}  // namespace

void DefineSolver(py::module_& module) {
  py::class_<PyCallback>(module, "_SolverCallback")
      .def(py::init<py::function, py::function>(), py::arg("on_start"),
           py::arg("on_gradients_ready"));
  py::class_<Solver, SolverPtr>(module, "_Solver", "The C++ solver; demitasse.Solver wraps it.")
      .def(py::init(&LoadSolver), py::arg("path"), py::arg("type"), py::arg("gpu"),
           py::arg("device_id"), py::arg("seed"), py::arg("precision"), py::arg("replica"),
           py::arg("num_replicas"))
      .def_property_readonly("type", [](const Solver& solver) { return solver.type(); })
      .def_property_readonly(
          "param_bytes",
          [](const Solver& solver) { return py::bytes(solver.param().SerializeAsString()); })
      .def_property_readonly("iter", &Solver::iter)
      .def_property_readonly("max_iter",
                             [](const Solver& solver) { return solver.param().max_iter(); })
      .def_property_readonly("smoothed_loss", &Solver::smoothed_loss)
      .def_property_readonly("net",
                             [](const SolverPtr& solver) { return NetOf(solver, &solver->net()); })
      .def_property_readonly("test_nets",
                             [](const SolverPtr& solver) {
                               std::vector<std::shared_ptr<Net>> nets;
                               for (const auto& net : solver->test_nets()) {
                                 nets.push_back(NetOf(solver, net.get()));
                               }
                               return nets;
                             })
      .def(
          "step",
          [](Solver& solver, int iters) {
            DEMI_CHECK(iters >= 0, "solver.step: iterations must not be negative, got ", iters);
            RunInterruptibly(solver, [&] { solver.Step(iters); });
          },
          py::arg("iters"))
      .def(
          "solve",
          [](Solver& solver, const std::string& resume_file) {
            RunInterruptibly(solver, [&] { solver.Solve(resume_file); });
          },
          py::arg("resume_file") = "")
      .def(
          "add_callback",
          [](Solver& solver, PyCallback& callback) { solver.AddCallback(&callback); },
          py::arg("callback"), py::keep_alive<1, 2>())
      .def("apply_update", &Solver::ApplyUpdate, py::call_guard<py::gil_scoped_release>())
      .def("test_all", &Solver::TestAll, py::call_guard<py::gil_scoped_release>())
      .def("snapshot", &Solver::Snapshot, py::call_guard<py::gil_scoped_release>())
      .def("restore", &Solver::Restore, py::arg("path"), py::call_guard<py::gil_scoped_release>());
}

}  // namespace python
}  // namespace demi
