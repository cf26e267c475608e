"""Where nets and solvers built from now on run: pycaffe's set_mode_* calls.

The choice is read when a Net or Solver is built and passed to it
explicitly; changing it later does not move an existing net.
"""
from . import _demitasse

_gpu = False
_device_id = 0


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


def current():
    """(gpu, device_id) for the next net or solver."""
    return _gpu, _device_id


def has_nccl():
    """Whether pycaffe's NCCL class (multi-GPU training driven from Python)
    is here: never, whatever the build. Demitasse replicates a net across
    GPUs in the solver itself: tools/train --gpu=0,1 (NCCL where built)."""
    return False
