"""Layer: the base of Python layers (pycaffe's caffe.Layer).

A prototxt layer `type: "Python"` with
`python_param { module: "my_layers" layer: "MyLayer" param_str: "..." }`
imports `my_layers` from PYTHONPATH and builds `MyLayer()`, which derives
this class and overrides its methods. Each method gets lists of Blob
(`.data`, `.diff`, `.reshape(*shape)`, `.count`, `.num`, ...); backward gets
the top blobs, one bool per bottom saying whether its gradient is wanted,
then the bottom blobs. Before setup the layer holds:

    self.param_str   python_param's param_str ("" when absent)
    self.phase       demitasse.TRAIN (0) or demitasse.TEST (1)
    self.name        the layer's name in the prototxt
    self.blobs       its learnable params: self.blobs.add_blob(*shape) in setup

Planned memory: bottom and top arrays point into memory other tensors reuse
between calls, so an array kept across calls (self.saved = bottom[0].data)
must be a copy (np.copy(...)).
"""


class Layer:
    """Override setup, reshape, forward and backward (pycaffe's Layer)."""

    type = "Python"

    def setup(self, bottom, top):
        """Once, before the first reshape: read self.param_str, add params."""

    def reshape(self, bottom, top):
        """Shape the tops (top[i].reshape(...)) from the bottoms' shapes."""

    def forward(self, bottom, top):
        """Write every element of the tops from the bottoms."""

    def backward(self, top, propagate_down, bottom):
        """Write bottom[i].diff where propagate_down[i]; add param gradients
        to self.blobs[j].diff."""
