"""Solver: pycaffe's solver API over the C++ Solver (python/src/solver_binding.cpp)."""
from . import _demitasse, device, parallel
from ._files import require_file
from .net import Net
from .proto import caffe_pb2


class Solver:
    """Trains the nets a solver prototxt names, with the update rule its
    `type` gives. solver.net and solver.test_nets are Nets sharing the
    solver's params: what step() changes, they see, and views taken of their
    blobs stay valid across steps. Ctrl-C during step() or solve() stops at
    the end of the iteration and raises KeyboardInterrupt."""

    _forced_type = ""  # the typed subclasses (SGDSolver, ...) set it

    def __init__(self, solver_file, precision=None):
        solver_file = require_file(solver_file, "solver prototxt")
        gpu, device_id = device.current()
        self._solver = _demitasse._Solver(solver_file, self._forced_type, gpu, device_id,
                                          device.random_seed(), precision or "",
                                          parallel.solver_rank(), parallel.solver_count())
        self._net = Net._wrap(self._solver.net)
        self._test_nets = [Net._wrap(net) for net in self._solver.test_nets]
        self._nccl = None  # the NCCL attached by add_callback

    @property
    def net(self):
        return self._net

    @property
    def test_nets(self):
        return self._test_nets

    @property
    def param(self):
        """The solver's parameters as it runs them (a caffe_pb2.SolverParameter
        copy: changing it changes nothing)."""
        param = caffe_pb2.SolverParameter()
        param.ParseFromString(self._solver.param_bytes)
        return param

    @property
    def iter(self):
        return self._solver.iter

    @property
    def type(self):
        return self._solver.type

    @property
    def max_iter(self):
        return self._solver.max_iter

    @property
    def smoothed_loss(self):
        """The training loss averaged over the last `average_loss` iterations."""
        return self._solver.smoothed_loss

    def step(self, iters):
        """Runs `iters` iterations (testing and snapshotting when due)."""
        self._solver.step(int(iters))

    def add_callback(self, on_start, on_gradients_ready=None):
        """pycaffe's hooks: add_callback(on_start, on_gradients_ready) calls
        on_start() at the start of every iteration and on_gradients_ready()
        once its gradients are complete, before the update. An object with
        both methods may be passed alone.

        add_callback(nccl), with the NCCL built for this solver, makes every
        iteration average the gradients of all ranks, reducing them while
        backward runs; on_gradients_ready hooks added after it see the
        average. Adding it again changes nothing."""
        if isinstance(on_start, parallel.NCCL) and on_gradients_ready is None:
            on_start._attach(self)
            self._nccl = on_start  # lives as long as the solver it reduces for
            return
        if on_gradients_ready is None:
            on_start, on_gradients_ready = on_start.on_start, on_start.on_gradients_ready
        self._solver.add_callback(_demitasse._SolverCallback(on_start, on_gradients_ready))

    def apply_update(self):
        """Updates the params from the gradients they hold, as step() would
        after its backward pass, without advancing the iteration (pycaffe)."""
        self._solver.apply_update()

    def solve(self, resume_file=None):
        """Trains to max_iter, resuming from a .solverstate when given."""
        self._solver.solve("" if resume_file is None else
                           require_file(resume_file, "solver state"))

    def test_all(self):
        """Runs every test net; returns each one's mean outputs."""
        return self._solver.test_all()

    def snapshot(self):
        """Writes <snapshot_prefix>_iter_<iter>.caffemodel and .solverstate
        (.caffemodel.h5 and .solverstate.h5 with snapshot_format: HDF5)."""
        self._solver.snapshot()

    def restore(self, state_file):
        """Loads a .solverstate (binary or HDF5) and the weights it names."""
        self._solver.restore(require_file(state_file, "solver state"))

    def __repr__(self):
        return f"<demitasse.{type(self).__name__} {self.type} at iteration {self.iter}>"


def get_solver(solver_file):
    """The solver of the type the file gives, as an instance of its typed
    class (pycaffe's caffe.get_solver: an Adam file gives an AdamSolver)."""
    solver = Solver(solver_file)
    # The typed classes differ only in what their constructor forces.
    solver.__class__ = _TYPED_SOLVERS.get(solver.type, Solver)
    return solver


def _typed_solver(type_name):
    class TypedSolver(Solver):
        __doc__ = (f"A {type_name} solver, whatever type the prototxt gives "
                   "(pycaffe's typed solver classes).")
        _forced_type = type_name

    TypedSolver.__name__ = TypedSolver.__qualname__ = f"{type_name}Solver"
    return TypedSolver


SGDSolver = _typed_solver("SGD")
NesterovSolver = _typed_solver("Nesterov")
AdaGradSolver = _typed_solver("AdaGrad")
RMSPropSolver = _typed_solver("RMSProp")
AdaDeltaSolver = _typed_solver("AdaDelta")
AdamSolver = _typed_solver("Adam")
_TYPED_SOLVERS = {cls._forced_type: cls for cls in (SGDSolver, NesterovSolver, AdaGradSolver,
                                                     RMSPropSolver, AdaDeltaSolver, AdamSolver)}
