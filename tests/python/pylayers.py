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


# Image sizes a variable-size data layer cycles through: it grows, shrinks and
# grows again past every size before it.
SIZES = [(8, 8), (16, 12), (6, 20), (32, 32), (10, 10)]


def image(i):
    """The i-th image of SIZES (1 x 3 x h x w), a fixed function of i."""
    h, w = SIZES[i % len(SIZES)]
    return np.random.default_rng(i).normal(size=(1, 3, h, w)).astype(np.float32)


class ImagesInReshape(caffe.Layer):
    """FCN's data layers: reshape() loads the next image and sizes the top to
    it, forward() copies it and moves on. Counts its calls."""

    def setup(self, bottom, top):
        self.index = 0
        self.calls = {"reshape": 0, "forward": 0}

    def reshape(self, bottom, top):
        self.calls["reshape"] += 1
        self.data = image(self.index)
        top[0].reshape(*self.data.shape)

    def forward(self, bottom, top):
        self.calls["forward"] += 1
        top[0].data[...] = self.data
        self.index += 1


class ImagesInForward(caffe.Layer):
    """py-faster-rcnn's RoI data layer: the top takes each image's shape in
    forward() itself."""

    def setup(self, bottom, top):
        self.index = 0
        top[0].reshape(1, 3, 4, 4)

    def reshape(self, bottom, top):
        pass

    def forward(self, bottom, top):
        data = image(self.index)
        top[0].reshape(*data.shape)
        top[0].data[...] = data
        self.index += 1


class LabelsInForward(caffe.Layer):
    """A second layer that sizes its top in forward(): one label plane the
    size of the i-th image (a data and a label layer of their own, as some
    detection code has). Counts its reshape() calls."""

    def setup(self, bottom, top):
        self.index = 0
        self.reshapes = 0
        top[0].reshape(1, 1, 4, 4)

    def reshape(self, bottom, top):
        self.reshapes += 1

    def forward(self, bottom, top):
        h, w = image(self.index).shape[2:]
        top[0].reshape(1, 1, h, w)
        top[0].data[...] = np.arange(h * w).reshape(1, 1, h, w) % 4
        self.index += 1


class GrowingLoss(caffe.Layer):
    """A loss with no bottoms whose top (all ones) takes a new length each
    pass: 1, 3, 2, 5, ...; its weighted loss is loss_weight x the length."""

    LENGTHS = [1, 3, 2, 5]

    def setup(self, bottom, top):
        self.index = 0

    def reshape(self, bottom, top):
        top[0].reshape(self.LENGTHS[self.index % len(self.LENGTHS)])

    def forward(self, bottom, top):
        top[0].data[...] = 1
        self.index += 1

    def backward(self, top, propagate_down, bottom):
        pass
