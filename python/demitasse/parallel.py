"""pycaffe's multi-process training: set_solver_count, set_solver_rank,
set_multiprocess and the NCCL class, as Caffe's python/train.py uses them:

    uid = caffe.NCCL.new_uid()                  # in the parent
    # in each child process, rank r of n:
    caffe.set_mode_cpu()                        # or set_device(gpu); set_mode_gpu()
    caffe.set_solver_count(n); caffe.set_solver_rank(r); caffe.set_multiprocess(True)
    solver = caffe.SGDSolver(solver_file)
    nccl = caffe.NCCL(solver, uid)              # joins the other ranks
    nccl.bcast()                                # rank 0's weights to all
    solver.add_callback(nccl)                   # gradients averaged every iteration
    solver.step(solver.max_iter)

A solver built after set_solver_count(n) and set_solver_rank(r) is replica r
of n: its TRAIN data layers (Data, ImageData, HDF5Data) read shard r of the
data, so the ranks' batches together are one global batch, and only rank 0
builds test nets, tests, displays and writes snapshots (and locks
snapshot_prefix). Ranks must share a random seed (data order and
augmentation follow it): a solver of several ranks whose file gives no
random_seed and that set_random_seed did not set uses a fixed one.

The NCCL object is the solver's ReplicaSync (the C++ replication of
tools/train, python/src/replica_binding.cpp) over a Gloo communicator: on
CPUs, and on GPUs of a build without NCCL, gradients are all-reduced through
Gloo; GPUs of a build with NCCL use an NCCL clique. Either way each rank's
loss is scaled by 1/n and gradients are summed in buckets while backward
runs. tools/train does the same from the command line (--cpu_replicas,
--gpu=0,1, --rank/--world_size).
"""
import os
import tempfile

from . import _demitasse

_solver_count = 1
_solver_rank = 0
_multiprocess = False

# How many NCCL objects this process made per (uid, run_id): each gets a
# run id of its own, and every rank makes them in the same order.
_joins = {}

# tools/train's --comm_timeout.
DEFAULT_TIMEOUT = 1800.0


def set_solver_count(count):
    """How many solvers (ranks) train together; solvers built from now on
    are replicas of that many."""
    global _solver_count
    if int(count) < 1:
        raise ValueError(f"solver count must be at least 1, got {count}")
    _solver_count = int(count)


def solver_count():
    return _solver_count


def set_solver_rank(rank):
    """This process's rank among them, for solvers built from now on."""
    global _solver_rank
    if not 0 <= int(rank) < _solver_count:
        raise ValueError(f"solver rank {rank} is outside 0 to {_solver_count - 1} "
                         "(set_solver_count first)")
    _solver_rank = int(rank)


def solver_rank():
    return _solver_rank


def set_multiprocess(multiprocess):
    """Whether the solvers are processes rather than threads (pycaffe).
    Recorded only: ranks here are always processes."""
    global _multiprocess
    _multiprocess = bool(multiprocess)


def multiprocess():
    return _multiprocess


def _uid_text(uid):
    if isinstance(uid, bytes):
        return uid.decode("utf-8")
    if isinstance(uid, str):
        return uid
    raise TypeError(f"NCCL's uid is bytes or str (from NCCL.new_uid()), got {type(uid).__name__}")


class NCCL:
    """pycaffe's NCCL(solver, uid): joins this rank's solver to the solvers
    of the other ranks meeting at `uid`, and once passed to
    solver.add_callback, all-reduces (averages) their gradients every
    iteration. Without add_callback the solver trains alone, as in Caffe.

    Construction waits (up to `timeout` seconds, also the limit of every
    collective later) for all solver_count() ranks to join, then checks that
    they agree on the build, the solver and the net (a rank whose net
    differs raises RuntimeError naming the first difference, on every rank).
    A rank that does not join in time, a bad uid or a peer that dies raise
    RuntimeError naming this rank and the uid. Ctrl-C while waiting raises
    KeyboardInterrupt.

    `run_id` separates runs sharing one rendezvous store: a Redis server or
    a directory used by an earlier run needs a new one (or a new directory).
    """

    def __init__(self, solver, uid, timeout=DEFAULT_TIMEOUT, run_id="pycaffe"):
        if not isinstance(getattr(solver, "_solver", None), _demitasse._Solver):
            raise TypeError(f"NCCL(solver, uid) takes a demitasse Solver, got "
                            f"{type(solver).__name__}")
        uid = _uid_text(uid)
        if float(timeout) <= 0:
            raise ValueError(f"NCCL's timeout must be positive, got {timeout}")
        key = (uid, run_id)
        joined = _joins.get(key, 0)
        _joins[key] = joined + 1
        self._uid = uid
        self._rank, self._count = solver_rank(), solver_count()
        self._replica = _demitasse._ProcessReplica(solver._solver, uid, solver_rank(),
                                                   solver_count(), float(timeout),
                                                   f"{run_id}-{joined}")

    @staticmethod
    def new_uid():
        """A fresh rendezvous for ranks on this host: b"file:///tmp/demitasse-uid-..."
        (a new directory; all ranks must reach the same path). Call it once,
        in the parent, and hand the bytes to every rank.

        For ranks on several hosts, make the uid yourself: b"file:///dir" (a
        directory every host can read and write, created if missing; a new
        one per run) or b"redis://host:port" (a Redis server all reach)."""
        directory = tempfile.mkdtemp(prefix="demitasse-uid-")
        return ("file://" + os.path.abspath(directory)).encode("utf-8")

    def bcast(self):
        """Copies rank 0's params and update history to every rank (each
        rank calls it), after checking that all are at one iteration."""
        self._replica.broadcast()

    def _attach(self, solver):
        self._replica.attach(solver._solver)

    @property
    def uid(self):
        return self._uid.encode("utf-8")

    @property
    def backend(self):
        """"gloo" or "nccl": what all-reduces the gradients."""
        return self._replica.backend

    def __repr__(self):
        return (f"<demitasse.NCCL {self.backend}, rank {self._rank} of {self._count}, "
                f"uid {self.uid!r}>")
