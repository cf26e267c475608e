"""Images in and out of a net, as pycaffe's caffe.io: load_image,
resize_image and a Transformer with Caffe's preprocessing."""
import numpy as np

from . import _demitasse
from ._files import require_file


def load_image(filename, color=True):
    """An image file as float32 in [0, 1], H x W x 3 in RGB order (or
    H x W x 1 when `color` is false), decoded by OpenCV."""
    return _demitasse.load_image(require_file(filename, "image"), bool(color))


def resize_image(im, new_dims, interp_order=1):
    """`im` (H x W x K) resized to `new_dims` (height, width) by OpenCV:
    interp_order 0 is nearest, 1 bilinear, higher bicubic."""
    height, width = (int(dim) for dim in new_dims)
    return _demitasse.resize_image(np.asarray(im, dtype=np.float32), height, width,
                                   int(interp_order))


def load_blobproto(filename):
    """A BlobProto file (e.g. a mean.binaryproto from compute_image_mean) as
    an array of its shape, usually 1 x C x H x W."""
    return _demitasse.read_blobproto(require_file(filename, "BlobProto file"))


class Transformer:
    """Turns images into a net's input layout and back.

    `inputs` maps each input blob's name to its shape (N x C x H x W), e.g.
    {"data": net.blobs["data"].data.shape}. preprocess(name, image) applies,
    in order: resize to H x W, transpose, channel swap, raw scale, mean
    subtraction, input scale; deprocess undoes them (but the resize).
    """

    def __init__(self, inputs):
        self.inputs = {name: tuple(shape) for name, shape in inputs.items()}
        self.transpose = {}
        self.channel_swap = {}
        self.raw_scale = {}
        self.mean = {}
        self.input_scale = {}

    def _check_input(self, name):
        if name not in self.inputs:
            raise ValueError(f"'{name}' is not an input of this Transformer; its inputs: "
                             f"{', '.join(self.inputs)}")

    def preprocess(self, in_, data):
        """`data`, an H' x W' x K image, as the input blob `in_` takes it
        (a new float32 array; `data` is left alone)."""
        self._check_input(in_)
        blob = np.array(data, dtype=np.float32)
        size = self.inputs[in_][2:]
        if blob.shape[:2] != size:
            blob = resize_image(blob, size)
        if in_ in self.transpose:
            blob = blob.transpose(self.transpose[in_])
        if in_ in self.channel_swap:
            blob = blob[self.channel_swap[in_], :, :]
        if in_ in self.raw_scale:
            blob = blob * self.raw_scale[in_]
        if in_ in self.mean:
            blob = blob - self.mean[in_]
        if in_ in self.input_scale:
            blob = blob * self.input_scale[in_]
        return np.ascontiguousarray(blob, dtype=np.float32)

    def deprocess(self, in_, data):
        """The inverse of preprocess (but the resize) for one item of
        `in_`: back to an H x W x K image."""
        self._check_input(in_)
        image = np.array(data, dtype=np.float32).squeeze()
        if in_ in self.input_scale:
            image = image / self.input_scale[in_]
        if in_ in self.mean:
            image = image + self.mean[in_]
        if in_ in self.raw_scale:
            image = image / self.raw_scale[in_]
        if in_ in self.channel_swap:
            image = image[np.argsort(self.channel_swap[in_]), :, :]
        if in_ in self.transpose:
            image = image.transpose(np.argsort(self.transpose[in_]))
        return image

    def set_transpose(self, in_, order):
        """The axis order taking an image (H x W x K) to the input's
        (K x H x W): usually (2, 0, 1)."""
        self._check_input(in_)
        if len(order) != len(self.inputs[in_]) - 1:
            raise ValueError(f"transpose order {tuple(order)} must have "
                             f"{len(self.inputs[in_]) - 1} axes for input '{in_}'")
        self.transpose[in_] = tuple(order)

    def set_channel_swap(self, in_, order):
        """The channel order after transposing: (2, 1, 0) turns RGB into
        Caffe's BGR."""
        self._check_input(in_)
        channels = self.inputs[in_][1]
        if len(order) != channels:
            raise ValueError(f"channel swap {tuple(order)} must list {channels} channels for "
                             f"input '{in_}'")
        self.channel_swap[in_] = list(order)

    def set_raw_scale(self, in_, scale):
        """The factor applied before the mean: 255 takes load_image's [0, 1]
        to the [0, 255] most Caffe models were trained on."""
        self._check_input(in_)
        self.raw_scale[in_] = scale

    def set_mean(self, in_, mean):
        """The mean to subtract: one value per channel (K,) or a whole image
        (K x H x W, or H x W for one channel)."""
        self._check_input(in_)
        mean = np.asarray(mean, dtype=np.float32)
        channels, size = self.inputs[in_][1], self.inputs[in_][2:]
        if mean.ndim == 1:
            if mean.shape[0] != channels:
                raise ValueError(f"mean has {mean.shape[0]} values but input '{in_}' has "
                                 f"{channels} channels")
            mean = mean[:, np.newaxis, np.newaxis]
        else:
            if mean.ndim == 2:
                mean = mean[np.newaxis, :, :]
            if mean.shape != (channels,) + size:
                raise ValueError(f"mean of shape {mean.shape} does not match input '{in_}' "
                                 f"of shape {(channels,) + size} (C x H x W)")
        self.mean[in_] = mean

    def set_input_scale(self, in_, scale):
        """The factor applied after the mean (e.g. 0.017 for a std)."""
        self._check_input(in_)
        self.input_scale[in_] = scale
