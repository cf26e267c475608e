"""Demitasse from Python, with pycaffe's names: ``import demitasse as caffe``.

    net = demitasse.Net("deploy.prototxt", demitasse.TEST, weights="model.caffemodel")
    net.blobs["data"].data[...] = image
    probabilities = net.forward()["prob"]

Every blob of a net built here is kept (keep_blob: "*"): in Caffe's NCHW
layout, with memory of its own, so ``blob.data`` and ``blob.diff`` are numpy
views (no copies) that stay valid and keep their values between passes.
"""
from ._demitasse import Blob
from .device import set_device, set_mode_cpu, set_mode_gpu
from .net import Layer, Net
from .solver import (AdaDeltaSolver, AdaGradSolver, AdamSolver, NesterovSolver, RMSPropSolver,
                     SGDSolver, Solver, get_solver)
from . import io

TRAIN = 0
TEST = 1

__all__ = [
    "Blob", "Layer", "Net", "Solver", "get_solver", "SGDSolver", "NesterovSolver",
    "AdaGradSolver", "RMSPropSolver", "AdaDeltaSolver", "AdamSolver", "set_mode_cpu",
    "set_mode_gpu", "set_device", "io", "TRAIN", "TEST",
]
