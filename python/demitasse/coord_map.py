"""How the spatial coordinates of two NetSpec tops relate, as pycaffe's
caffe.coord_map: to align and crop feature maps (FCN's skip connections).

A map is (axis, a, b): coordinate x of a layer's input lands at a * x + b of
its output, on every axis from `axis` on (a and b are arrays, one value per
spatial axis, or scalars that hold for all; axis None when the layer maps
every axis alike, as pointwise layers do).

    ax, a, b = coord_map_from_to(n.score, n.data)   # n.score's coords -> n.data's
    n.score_crop = crop(n.score, n.data)            # a Crop layer aligning them
"""
from collections import deque

import numpy as np

from .net_spec import layers as L

# Layers that keep every coordinate where it is.
PASS_THROUGH_LAYERS = {
    "AbsVal", "BatchNorm", "Bias", "BNLL", "Clip", "Dropout", "Eltwise", "ELU", "Exp", "Log",
    "LRN", "MVN", "Power", "PReLU", "ReLU", "Scale", "Sigmoid", "Split", "Swish", "TanH",
    "Threshold",
}


class UndefinedMapException(Exception):
    """The layer has no coordinate map (InnerProduct, global pooling, ...)."""


class AxisMismatchException(Exception):
    """Two maps composed act on different axes."""


def _options(fn, field):
    """The layer's options, whether written flat (kernel_size=3) or inside
    its message (convolution_param=dict(kernel_size=3))."""
    options = {key: value for key, value in fn.params.items() if key != field}
    options.update(fn.params.get(field, {}))
    return options


def _axis_values(options, name, legacy, default):
    """A per-axis parameter as an array: `name`, or the legacy
    `<legacy>_h` / `<legacy>_w` pair."""
    if f"{legacy}_h" in options or f"{legacy}_w" in options:
        return np.array([options.get(f"{legacy}_h", default),
                         options.get(f"{legacy}_w", default)], ndmin=1)
    return np.array(options.get(name, default), ndmin=1)


def conv_params(fn):
    """(axis, stride, extent of the dilated kernel, pad) of a Convolution,
    Deconvolution, Im2col or Pooling layer."""
    field = "pooling_param" if fn.type_name == "Pooling" else "convolution_param"
    options = _options(fn, field)
    if options.get("global_pooling"):
        raise UndefinedMapException
    kernel = _axis_values(options, "kernel_size", "kernel", 1)
    dilation = np.array(options.get("dilation", 1), ndmin=1)
    return (options.get("axis", 1), _axis_values(options, "stride", "stride", 1),
            (kernel - 1) * dilation + 1, _axis_values(options, "pad", "pad", 0))


def crop_params(fn):
    """(axis, offset) of a Crop layer, with Caffe's defaults (axis 2)."""
    options = _options(fn, "crop_param")
    return options.get("axis", 2), np.array(options.get("offset", 0), ndmin=1)


def coord_map(fn):
    """The map (axis, a, b) of layer `fn`, from its input to its output."""
    if fn.type_name in ("Convolution", "Pooling", "Im2col"):
        axis, stride, kernel, pad = conv_params(fn)
        return axis, 1 / stride, (pad - (kernel - 1) / 2) / stride
    if fn.type_name == "Deconvolution":
        axis, stride, kernel, pad = conv_params(fn)
        return axis, stride, (kernel - 1) / 2 - pad
    if fn.type_name in PASS_THROUGH_LAYERS:
        return None, 1, 0
    if fn.type_name == "Crop":
        axis, offset = crop_params(fn)
        # The map's axis is the last one before the cropped ones.
        return axis - 1, 1, -offset
    raise UndefinedMapException


def compose(base_map, next_map):
    """`base_map` followed by `next_map`."""
    axis1, a1, b1 = base_map
    axis2, a2, b2 = next_map
    if axis1 is None:
        axis = axis2
    elif axis2 is None or axis1 == axis2:
        axis = axis1
    else:
        raise AxisMismatchException
    return axis, a1 * a2, a1 * b2 + b1


def inverse(coord_map):
    """The map that undoes `coord_map`."""
    axis, a, b = coord_map
    return axis, 1 / a, -b / a


def _mapped_bottoms(top):
    """The bottoms whose coordinates reach `top`: all of them, but only the
    first of a Crop (its second only gives the size)."""
    bottoms = top.fn.inputs
    return bottoms[:1] if top.fn.type_name == "Crop" else bottoms


def _ancestors(top):
    """`top` and every top it depends on through mapped layers, nearest
    first, each with the map from its coordinates to `top`'s."""
    maps = {top: (None, 1, 0)}
    queue = deque([top])
    while queue:
        current = queue.popleft()
        yield current, maps[current]
        try:
            layer_map = coord_map(current.fn)
        except UndefinedMapException:
            continue
        for bottom in _mapped_bottoms(current):
            if bottom not in maps:
                maps[bottom] = compose(maps[current], layer_map)
                queue.append(bottom)


def coord_map_from_to(top_from, top_to):
    """The map (axis, a, b) taking coordinates of `top_from` to those of
    `top_to`, through their nearest common ancestor. RuntimeError when
    spatial layers do not connect them."""
    from_maps = dict(_ancestors(top_from))
    for top, to_map in _ancestors(top_to):
        if top in from_maps:
            return compose(to_map, inverse(from_maps[top]))
    raise RuntimeError("could not map the coordinates of one top to the other: spatial layers "
                       "do not connect them to a common input")


def _require(condition, message):
    if not condition:
        raise AssertionError(message)


def crop(top_from, top_to):
    """A Crop layer cutting `top_from` to the region of `top_to` (the same
    scale, `top_from` at least as large). AssertionError when the scales
    differ or the offset would be negative or fractional."""
    axis, a, b = coord_map_from_to(top_from, top_to)
    _require(np.all(a == 1), f"scale mismatch on crop (a = {a})")
    _require(np.all(b <= 0), f"cannot crop a negative offset (b = {b})")
    _require(np.all(np.round(b) == b), f"cannot crop a fractional offset (b = {b})")
    offsets = [int(offset) for offset in np.atleast_1d(-np.round(b))]
    return L.Crop(top_from, top_to,
                  crop_param=dict(axis=2 if axis is None else axis + 1, offset=offsets))
