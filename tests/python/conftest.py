"""Shared fixtures of the Python tests: run with PYTHONPATH=python from the
repository root (make runtest does)."""
import pathlib

import numpy as np
import pytest

BATCH = 16  # the train net's batch: enough to learn, quick on 2 cores
REPO = pathlib.Path(__file__).resolve().parents[2]
DEPLOY = REPO / "models" / "lenet_fashion" / "deploy.prototxt"

# LeNet (Caffe's MNIST net) fed through Input layers, so the tests choose
# the data: the pycaffe way of training from Python.
LENET_TRAIN = """
name: "LeNetInput"
layer { name: "data" type: "Input" top: "data" top: "label"
        input_param { shape { dim: %(batch)d dim: 1 dim: 28 dim: 28 } shape { dim: %(batch)d } } }
layer { name: "conv1" type: "Convolution" bottom: "data" top: "conv1"
        convolution_param { num_output: 20 kernel_size: 5 weight_filler { type: "xavier" } } }
layer { name: "pool1" type: "Pooling" bottom: "conv1" top: "pool1"
        pooling_param { pool: MAX kernel_size: 2 stride: 2 } }
layer { name: "conv2" type: "Convolution" bottom: "pool1" top: "conv2"
        convolution_param { num_output: 50 kernel_size: 5 weight_filler { type: "xavier" } } }
layer { name: "pool2" type: "Pooling" bottom: "conv2" top: "pool2"
        pooling_param { pool: MAX kernel_size: 2 stride: 2 } }
layer { name: "ip1" type: "InnerProduct" bottom: "pool2" top: "ip1"
        inner_product_param { num_output: 100 weight_filler { type: "xavier" } } }
layer { name: "relu1" type: "ReLU" bottom: "ip1" top: "ip1" }
layer { name: "ip2" type: "InnerProduct" bottom: "ip1" top: "ip2"
        inner_product_param { num_output: 10 weight_filler { type: "xavier" } } }
layer { name: "loss" type: "SoftmaxWithLoss" bottom: "ip2" bottom: "label" top: "loss" }
layer { name: "accuracy" type: "Accuracy" bottom: "ip2" bottom: "label" top: "accuracy"
        include { phase: TEST } }
"""

SOLVER = """
net: "%(net)s"
test_iter: 1
test_interval: 1000
test_initialization: false
base_lr: 0.01
momentum: 0.9
weight_decay: 0.0005
lr_policy: "inv"
gamma: 0.0001
power: 0.75
display: 0
max_iter: %(max_iter)d
snapshot_prefix: "%(prefix)s"
snapshot_after_train: false
random_seed: 1701
type: "%(type)s"
"""


class Prototypes:
    """A learnable 10-class problem: each class is a fixed random 28x28
    image; a sample is its class's image plus noise."""

    def __init__(self, seed=0):
        self.rng = np.random.default_rng(seed)
        self.images = self.rng.uniform(0, 1, size=(10, 1, 28, 28)).astype(np.float32)

    def batch(self, size):
        labels = self.rng.integers(0, 10, size=size)
        noise = self.rng.normal(0, 0.3, size=(size, 1, 28, 28)).astype(np.float32)
        return self.images[labels] + noise, labels.astype(np.float32)


@pytest.fixture
def prototypes():
    return Prototypes()


@pytest.fixture
def lenet_train(tmp_path):
    """Path of the Input-fed LeNet (batch BATCH)."""
    path = tmp_path / "lenet_train.prototxt"
    path.write_text(LENET_TRAIN % {"batch": BATCH})
    return path


@pytest.fixture
def make_solver_file(tmp_path, lenet_train):
    """Writes a LeNet solver prototxt of the given type; returns its path."""
    def make(solver_type="SGD", max_iter=100):
        path = tmp_path / f"solver_{solver_type}.prototxt"
        path.write_text(SOLVER % {"net": lenet_train, "max_iter": max_iter, "type": solver_type,
                                  "prefix": tmp_path / "lenet"})
        return path
    return make


@pytest.fixture
def deploy():
    return DEPLOY
