"""pycaffe's multi-GPU pieces: set_solver_count, set_solver_rank,
set_multiprocess and the NCCL class of Caffe's python/train.py.

Demitasse replicates a net in the solver itself: tools/train --gpu=0,1 (or
--gpu=all) runs one replica per GPU with NCCL all-reduce, --cpu_replicas=N
runs N CPU replicas in threads, and --rank/--world_size (or mpirun and
Slurm's variables) run one process per host. A Solver built from Python is
one replica: the counts set here are recorded for code that reads them back,
and NCCL, which needs GPUs and a build with NCCL, raises where it cannot run.
"""
_solver_count = 1
_solver_rank = 0
_multiprocess = False

_NO_NCCL = ("caffe.NCCL needs GPUs and a build with NCCL (has_nccl() is False here); "
            "train on several devices with tools/train --gpu=0,1 (or --cpu_replicas=N on "
            "CPUs), which replicates the solver itself")


def set_solver_count(count):
    """How many solvers train together (pycaffe); recorded only."""
    global _solver_count
    if int(count) < 1:
        raise ValueError(f"solver count must be at least 1, got {count}")
    _solver_count = int(count)


def solver_count():
    return _solver_count


def set_solver_rank(rank):
    """This process's solver among them (pycaffe); recorded only."""
    global _solver_rank
    if not 0 <= int(rank) < _solver_count:
        raise ValueError(f"solver rank {rank} is outside 0 to {_solver_count - 1} "
                         "(set_solver_count first)")
    _solver_rank = int(rank)


def solver_rank():
    return _solver_rank


def set_multiprocess(multiprocess):
    """Whether the solvers are processes rather than threads (pycaffe)."""
    global _multiprocess
    _multiprocess = bool(multiprocess)


def multiprocess():
    return _multiprocess


class NCCL:
    """pycaffe's NCCL(solver, uid): all-reduces a solver's gradients with
    the solvers of the other ranks. Where has_nccl() is False (every CPU
    machine, and every build without NCCL) it raises RuntimeError naming
    what to use instead."""

    def __init__(self, solver, uid):
        raise RuntimeError(_NO_NCCL)

    @staticmethod
    def new_uid():
        """The id ranks share to find each other (bytes)."""
        raise RuntimeError(_NO_NCCL)

    def bcast(self):
        raise RuntimeError(_NO_NCCL)

