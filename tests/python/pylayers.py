"""Python layers the tests' prototxts name (python_param { module: "pylayers" }):
importable from tests/python, which pytest and the tools' PYTHONPATH put on
the path."""
import numpy as np

import caffe


class EuclideanLoss(caffe.Layer):
    """sum((a - b)^2) / (2 N), as the built-in EuclideanLoss, in numpy."""

    def setup(self, bottom, top):
        if len(bottom) != 2:
            raise ValueError("EuclideanLoss takes two bottoms")

    def reshape(self, bottom, top):
        top[0].reshape(1)

    def forward(self, bottom, top):
        # Kept across calls, so a copy (planned memory is reused).
        self.difference = np.copy(bottom[0].data - bottom[1].data)
        top[0].data[...] = np.sum(self.difference ** 2) / bottom[0].num / 2.0

    def backward(self, top, propagate_down, bottom):
        weight = top[0].diff[0]  # the loss weight
        for i, sign in enumerate((1.0, -1.0)):
            if propagate_down[i]:
                bottom[i].diff[...] = sign * weight * self.difference / bottom[i].num


class Scale(caffe.Layer):
    """Multiplies by float(param_str)."""

    def setup(self, bottom, top):
        self.factor = float(self.param_str)

    def reshape(self, bottom, top):
        top[0].reshape(*bottom[0].data.shape)

    def forward(self, bottom, top):
        top[0].data[...] = self.factor * bottom[0].data

    def backward(self, top, propagate_down, bottom):
        bottom[0].diff[...] = self.factor * top[0].diff


class Phase(caffe.Layer):
    def reshape(self, bottom, top):
        top[0].reshape(1)

    def forward(self, bottom, top):
        top[0].data[...] = self.phase


class FailsInForward(caffe.Layer):
    def reshape(self, bottom, top):
        top[0].reshape(*bottom[0].data.shape)

    def forward(self, bottom, top):
        raise ValueError("no batch of " + str(bottom[0].num) + " today")
