"""Where nets and solvers built from now on run, and their random seed:
pycaffe's set_mode_* and set_random_seed calls.

The choice is read when a Net or Solver is built and passed to it
explicitly; changing it later does not move an existing net.
"""
from . import _demitasse

_gpu = False
_device_id = 0
_seed = -1  # the library's default


def set_mode_cpu():
    """Build later nets and solvers on the CPU (the default)."""
    global _gpu
    _gpu = False


def set_mode_gpu():
    """Build later nets and solvers on the GPU chosen by set_device (0 by
    default). Raises RuntimeError on a CPU_ONLY build or without that GPU."""
    global _gpu
    _demitasse.check_device(_device_id)
    _gpu = True


def set_device(device_id):
    """Choose the GPU for GPU mode. Raises RuntimeError on a CPU_ONLY build
    or when the GPU does not exist."""
    global _device_id
    _demitasse.check_device(int(device_id))
    _device_id = int(device_id)


def set_random_seed(seed):
    """The seed of the random streams (fillers, dropout, shuffling) of nets
    built from now on, and of solvers whose prototxt sets no random_seed
    (one that does keeps its own). None goes back to the default: a fixed
    seed for nets, the clock for such solvers."""
    global _seed
    if seed is not None and not 0 <= int(seed) < 2**32:
        raise ValueError(f"random seed {seed} is outside 0 to 2^32 - 1")
    _seed = -1 if seed is None else int(seed)


def random_seed():
    """The seed set_random_seed gave, or -1."""
    return _seed


def current():
    """(gpu, device_id) for the next net or solver."""
    return _gpu, _device_id


def has_nccl():
    """Whether pycaffe's NCCL class (multi-process training driven from
    Python, as Caffe's python/train.py) works: always here, whatever the
    build. Its gradients go through NCCL between GPUs where the build has
    NCCL, through Gloo otherwise (nccl.backend says which)."""
    return True
