"""Demitasse from Python, with pycaffe's names: ``import demitasse as caffe``.

    net = demitasse.Net("deploy.prototxt", demitasse.TEST, weights="model.caffemodel")
    net.blobs["data"].data[...] = image
    probabilities = net.forward()["prob"]

Every blob of a net built here is kept (keep_blob: "*"): in Caffe's NCHW
layout, with memory of its own, so ``blob.data`` and ``blob.diff`` are numpy
views (no copies) that stay valid and keep their values between passes.
"""
import os as _os

# libgomp reads how idle threads wait when it loads (importing _demitasse):
# passively, as the command-line tools choose (src/demi/util/cli.cpp, where
# the measurements are), unless the environment says otherwise.
if "OMP_WAIT_POLICY" not in _os.environ and "GOMP_SPINCOUNT" not in _os.environ:
    _os.environ["OMP_WAIT_POLICY"] = "PASSIVE"

from ._demitasse import Blob, layer_type_list  # noqa: E402
from .device import has_nccl, set_device, set_mode_cpu, set_mode_gpu, set_random_seed
from .layer import Layer
from .net import Net
from .solver import (AdaDeltaSolver, AdaGradSolver, AdamSolver, NesterovSolver, RMSPropSolver,
                     SGDSolver, Solver, get_solver)
from . import coord_map, draw, io, net_spec, proto
from .classifier import Classifier
from .detector import Detector
from .parallel import (NCCL, set_multiprocess, set_solver_count, set_solver_rank, solver_count,
                       solver_rank)
from .net_spec import NetSpec, layers, params, to_proto
from .proto.caffe_pb2 import TEST, TRAIN

__all__ = [
    "Blob", "Layer", "Net", "Classifier", "Detector", "NCCL", "set_solver_count",
    "set_solver_rank", "set_multiprocess", "solver_count", "solver_rank", "Solver", "get_solver",
    "SGDSolver", "NesterovSolver", "AdaGradSolver", "RMSPropSolver", "AdaDeltaSolver",
    "AdamSolver", "set_mode_cpu", "set_mode_gpu", "set_device", "set_random_seed", "has_nccl",
    "layer_type_list", "io", "proto", "net_spec", "coord_map", "draw", "NetSpec", "layers",
    "params", "to_proto", "TRAIN", "TEST",
]
