"""Images and arrays in and out of a net, as pycaffe's caffe.io: load_image,
resize_image, oversample, a Transformer with Caffe's preprocessing, and
conversions between numpy arrays and the schema's BlobProto and Datum."""
import numpy as np

from . import _demitasse
from ._files import require_file
from .proto import caffe_pb2


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


def blobproto_to_array(blob, return_diff=False):
    """A BlobProto's data (or diff) as a float array of its shape: the legacy
    num x channels x height x width when any of those is set, else
    `shape.dim` (no dims: a 0-d array of its single value). Values stored as
    doubles (double_data) come back as float64. ValueError when the values
    do not fill the shape."""
    values = blob.diff if return_diff else blob.data
    doubles = blob.double_diff if return_diff else blob.double_data
    array = np.array(values, dtype=np.float32) if len(values) or not len(doubles) else \
        np.array(doubles, dtype=np.float64)
    legacy = any(blob.HasField(field) for field in ("num", "channels", "height", "width"))
    shape = (blob.num, blob.channels, blob.height, blob.width) if legacy else \
        tuple(blob.shape.dim)
    if array.size != int(np.prod(shape, dtype=np.int64)):
        raise ValueError(f"BlobProto holds {array.size} values but its shape "
                         f"{'x'.join(map(str, shape)) or '(none)'} needs "
                         f"{int(np.prod(shape, dtype=np.int64))}")
    return array.reshape(shape)


def array_to_blobproto(arr, diff=None):
    """A BlobProto with `arr`'s shape (shape.dim) and values as floats, and
    `diff`'s values as its diff when given (same shape as `arr`)."""
    arr = np.asarray(arr)
    blob = caffe_pb2.BlobProto()
    blob.shape.dim.extend(arr.shape)
    blob.data.extend(arr.astype(np.float32).ravel().tolist())
    if diff is not None:
        diff = np.asarray(diff)
        if diff.shape != arr.shape:
            raise ValueError(f"diff of shape {diff.shape} does not match the data's {arr.shape}")
        blob.diff.extend(diff.astype(np.float32).ravel().tolist())
    return blob


def arraylist_to_blobprotovector_str(arraylist):
    """Arrays as a serialized BlobProtoVector (bytes)."""
    vector = caffe_pb2.BlobProtoVector()
    vector.blobs.extend(array_to_blobproto(arr) for arr in arraylist)
    return vector.SerializeToString()


def blobprotovector_str_to_arraylist(serialized):
    """A serialized BlobProtoVector (bytes) as a list of arrays."""
    vector = caffe_pb2.BlobProtoVector()
    vector.ParseFromString(serialized)
    return [blobproto_to_array(blob) for blob in vector.blobs]


def array_to_datum(arr, label=None):
    """A Datum of a C x H x W array: uint8 arrays as bytes (`data`), any
    other type as floats (`float_data`); `label` is set only when given."""
    arr = np.asarray(arr)
    if arr.ndim != 3:
        raise ValueError(f"array_to_datum takes a C x H x W array, got shape {arr.shape}")
    datum = caffe_pb2.Datum()
    datum.channels, datum.height, datum.width = arr.shape
    if arr.dtype == np.uint8:
        datum.data = arr.tobytes()
    else:
        datum.float_data.extend(arr.astype(np.float32).ravel().tolist())
    if label is not None:
        datum.label = int(label)
    return datum


def datum_to_array(datum):
    """A Datum's values as a C x H x W array: uint8 from `data`, float from
    `float_data`. Only raw Datums: an encoded one (a JPEG or PNG in `data`)
    is a ValueError; decode it with load_image or OpenCV."""
    shape = (datum.channels, datum.height, datum.width)
    if datum.encoded:
        raise ValueError("datum_to_array reads raw Datums; this one holds an encoded image")
    if len(datum.data):
        return np.frombuffer(datum.data, dtype=np.uint8).reshape(shape)
    return np.array(datum.float_data, dtype=np.float32).reshape(shape)


def oversample(images, crop_dims):
    """Ten crops of each H x W x K image, as Caffe's 10-view testing takes
    them: the four corners (top-left, top-right, bottom-left, bottom-right)
    and the centre, then those five mirrored left to right. Returns a
    (10 N) x h x w x K float32 array for crop_dims (h, w)."""
    images = [np.asarray(image) for image in images]
    crop_h, crop_w = (int(dim) for dim in crop_dims)
    height, width, channels = images[0].shape
    if crop_h > height or crop_w > width:
        raise ValueError(f"crop {crop_h} x {crop_w} is larger than the images "
                         f"({height} x {width})")
    corners = [(top, left) for top in (0, height - crop_h) for left in (0, width - crop_w)]
    corners.append(((height - crop_h) // 2, (width - crop_w) // 2))
    crops = np.empty((10 * len(images), crop_h, crop_w, channels), dtype=np.float32)
    for i, image in enumerate(images):
        if image.shape != (height, width, channels):
            raise ValueError(f"image {i} is {image.shape}; oversample takes images of one "
                             f"shape, here {(height, width, channels)}")
        views = [image[top:top + crop_h, left:left + crop_w] for top, left in corners]
        crops[10 * i:10 * i + 5] = views
        crops[10 * i + 5:10 * i + 10] = [view[:, ::-1] for view in views]
    return crops


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
        (K x H x W, or H x W for one channel). An image larger than the input
        gives its centre, as Caffe's data layer crops a mean_file for its
        centre crop: the 256 x 256 ImageNet mean (ilsvrc_2012_mean.npy) for a
        227 x 227 input, which BVLC's classify.py passes and BVLC's own
        Transformer refuses."""
        self._check_input(in_)
        mean = np.asarray(mean, dtype=np.float32)
        channels, size = self.inputs[in_][1], tuple(self.inputs[in_][2:])
        if mean.ndim == 1:
            if mean.shape[0] != channels:
                raise ValueError(f"mean has {mean.shape[0]} values but input '{in_}' has "
                                 f"{channels} channels")
            mean = mean[:, np.newaxis, np.newaxis]
        else:
            if mean.ndim == 2:
                mean = mean[np.newaxis, :, :]
            if (mean.ndim == 3 and len(size) == 2 and mean.shape[0] == channels
                    and all(m >= s for m, s in zip(mean.shape[1:], size))):
                top, left = ((m - s) // 2 for m, s in zip(mean.shape[1:], size))
                mean = mean[:, top:top + size[0], left:left + size[1]]
            if mean.shape != (channels,) + size:
                raise ValueError(f"mean of shape {mean.shape} does not match input '{in_}' "
                                 f"of shape {(channels,) + size} (C x H x W)")
        self.mean[in_] = mean

    def set_input_scale(self, in_, scale):
        """The factor applied after the mean (e.g. 0.017 for a std)."""
        self._check_input(in_)
        self.input_scale[in_] = scale


def image_input_transformer(name, shape, mean=None, input_scale=None, raw_scale=None,
                            channel_swap=None):
    """The Transformer pycaffe's Classifier and Detector give their input blob
    `name` of `shape`: H x W x K images to K x H x W, then whichever of
    channel_swap, raw_scale, mean and input_scale are given."""
    transformer = Transformer({name: shape})
    transformer.set_transpose(name, (2, 0, 1))
    if mean is not None:
        transformer.set_mean(name, mean)
    if input_scale is not None:
        transformer.set_input_scale(name, input_scale)
    if raw_scale is not None:
        transformer.set_raw_scale(name, raw_scale)
    if channel_swap is not None:
        transformer.set_channel_swap(name, channel_swap)
    return transformer
