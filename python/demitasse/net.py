"""Net: pycaffe's net API over the C++ Net (python/src/net_binding.cpp)."""
import os
from collections import OrderedDict, namedtuple

import numpy as np

from . import _demitasse, device, parallel
from ._files import require_file

LayerEntry = namedtuple("LayerEntry", ["name", "type", "blobs"])
LayerEntry.__doc__ = ("A layer of a net (an entry of net.layers): its name, its type "
                      "(\"Convolution\") and its learnable blobs.")


def _h5py():
    try:
        import h5py
    except ImportError as error:
        raise ImportError("save_hdf5 and load_hdf5 need h5py: install Debian's python3-h5py "
                          "(scripts/install_deps.sh does)") from error
    return h5py


def _hdf5_layer_groups(group, h5py, prefix=""):
    """(layer name, group) for every group under `group`: a layer named with
    '/' (GoogLeNet's inception_3a/1x1) is a nested group."""
    if prefix:
        yield prefix, group
    for key, item in group.items():
        if isinstance(item, h5py.Group):
            yield from _hdf5_layer_groups(item, h5py, f"{prefix}/{key}" if prefix else key)


def _is_path(value):
    return isinstance(value, (str, bytes, os.PathLike))


def _state_and_weights(args, phase, weights, level):
    """Accepts pycaffe's call forms: Net(file, phase, level), Net(file, phase,
    weights) and the older Net(file, weights, phase)."""
    if len(args) > 2:
        raise TypeError(f"Net takes at most 3 positional arguments, got {len(args) + 1}")
    if args and _is_path(args[0]):
        if len(args) != 2:
            raise TypeError("Net(network_file, weights, phase) needs the phase too")
        weights, phase = args
    elif args:
        phase = args[0]
        if len(args) == 2:
            if _is_path(args[1]):
                weights = args[1]
            else:
                level = args[1]
    if phase is None:
        raise TypeError("Net needs a phase: demitasse.TRAIN or demitasse.TEST")
    return int(phase), weights, int(level)


class Net:
    """A net built from a prototxt, as pycaffe's Net:

        Net(network_file, phase, weights=None, level=0, stages=None, precision=None)
        Net(network_file, phase, level)       (pycaffe's positional level)
        Net(network_file, weights, phase)     (pycaffe's older form)

    `precision` ("FLOAT", "FLOAT16", "BFLOAT16"; None keeps the file's
    types) is train's --precision: the net's default storage types.

    `blobs` and `params` are ordered dicts of Blob (blob.data and blob.diff are
    zero-copy numpy views); forward() and backward() take and return dicts of
    arrays keyed by blob name.
    """

    def __init__(self, network_file, *args, phase=None, weights=None, level=0, stages=None,
                 precision=None):
        phase, weights, level = _state_and_weights(args, phase, weights, level)
        network_file = require_file(network_file, "net prototxt")
        if isinstance(stages, str):
            stages = [stages]
        gpu, device_id = device.current()
        self._attach(_demitasse._Net(network_file, phase, level, list(stages or []), gpu,
                                     device_id, device.random_seed(), precision or ""))
        if weights is not None:
            self.copy_from(weights)

    @classmethod
    def _wrap(cls, cpp_net):
        """A Net over a C++ net built elsewhere (a solver's)."""
        net = cls.__new__(cls)
        net._attach(cpp_net)
        return net

    def _attach(self, cpp_net):
        self._net = cpp_net
        self._cache = {}
        self._shared_with = None
        self._input_shapes = self._current_input_shapes()

    def _current_input_shapes(self):
        return [self.blobs[name].shape for name in self._net.input_names]

    def _cached(self, key, build):
        if key not in self._cache:
            self._cache[key] = build()
        return self._cache[key]

    # ---- structure ----
    @property
    def name(self):
        return self._net.name

    @property
    def phase(self):
        return self._net.phase

    @property
    def blobs(self):
        """Every blob by name, in the order layers produce them (the blobs of
        auto-inserted Split layers included, as in pycaffe)."""
        return self._cached("blobs", lambda: OrderedDict(self._net.blobs()))

    @property
    def blob_loss_weights(self):
        """Each blob's weight in the loss, by name (0 for blobs that are not
        losses), in the order of `blobs`."""
        return OrderedDict(zip(self._net.blob_names, self._net.blob_loss_weights))

    @property
    def params(self):
        """Each layer with learnable blobs, by name: [weights, bias, ...]."""
        def build():
            params = OrderedDict()
            for i, name in enumerate(self._net.layer_names):
                blobs = self._net.layer_blobs(i)
                if blobs:
                    params[name] = blobs
            return params
        return self._cached("params", build)

    @property
    def layers(self):
        def build():
            # A Python layer is its own object, as in pycaffe (its methods
            # and attributes reachable: net.layers[0].set_roidb(...)).
            names, types = self._net.layer_names, self._net.layer_types

            def entry(i):
                instance = self._net.layer_instance(i)
                if instance is not None:
                    return instance
                return LayerEntry(names[i], types[i], self._net.layer_blobs(i))
            return [entry(i) for i in range(len(names))]
        return self._cached("layers", build)

    @property
    def layer_dict(self):
        return OrderedDict((layer.name, layer) for layer in self.layers)

    @property
    def _layer_names(self):
        return self._net.layer_names

    @property
    def _blob_names(self):
        return self._net.blob_names

    @property
    def _inputs(self):
        """pycaffe's: the input blobs' indices in _blob_names."""
        names = list(self._blob_names)
        return [names.index(name) for name in self.inputs]

    @property
    def _outputs(self):
        """pycaffe's: the output blobs' indices in _blob_names."""
        names = list(self._blob_names)
        return [names.index(name) for name in self.outputs]

    @property
    def inputs(self):
        return self._net.input_names

    @property
    def outputs(self):
        return self._net.output_names

    @property
    def bottom_names(self):
        return OrderedDict(zip(self._net.layer_names, self._net.bottom_names))

    @property
    def top_names(self):
        return OrderedDict(zip(self._net.layer_names, self._net.top_names))

    def _layer_index(self, name):
        try:
            return self._net.layer_names.index(name)
        except ValueError:
            raise ValueError(f"net '{self.name}' has no layer '{name}'; its layers: "
                             f"{', '.join(self._net.layer_names)}") from None

    def _check_blob_names(self, names, allowed, what):
        unknown = [name for name in names if name not in allowed]
        if unknown:
            raise ValueError(f"{', '.join(unknown)}: not {what} of net '{self.name}' "
                             f"(those are: {', '.join(allowed) or 'none'})")

    # ---- passes ----
    def forward(self, blobs=None, start=None, end=None, **inputs):
        """Copies each keyword array into the input blob of that name, runs
        layers `start` to `end` (names; default: all), and returns a dict of
        the outputs (or `end`'s tops) and of `blobs`: views of their data."""
        self._check_blob_names(inputs, self.inputs, "inputs")
        for name, values in inputs.items():
            blob = self.blobs[name]
            if len(values) != blob.shape[0]:
                raise ValueError(f"input '{name}' has {len(values)} items but the blob's batch "
                                 f"is {blob.shape[0]}; reshape the blob and call net.reshape()")
            blob.data[...] = values
        # An input reshaped without net.reshape(): reshape the layers first,
        # as Caffe's forward does (each layer reshapes before it runs).
        if self._current_input_shapes() != self._input_shapes:
            self.reshape()
        first = 0 if start is None else self._layer_index(start)
        last = len(self.layers) - 1 if end is None else self._layer_index(end)
        self._net.forward(first, last)
        wanted = list(self.outputs if end is None else self.top_names[end]) + list(blobs or [])
        self._check_blob_names(wanted, self.blobs, "blobs")
        return {name: self.blobs[name].data for name in wanted}

    def backward(self, diffs=None, start=None, end=None, **top_diffs):
        """Copies each keyword array into the diff of the output blob of that
        name, runs layers `start` (default: the last) back to `end` (default:
        the first), and returns the diffs of the inputs and of `diffs`."""
        self._check_blob_names(top_diffs, self.outputs, "outputs")
        for name, values in top_diffs.items():
            self.blobs[name].diff[...] = values
        first = len(self.layers) - 1 if start is None else self._layer_index(start)
        last = 0 if end is None else self._layer_index(end)
        self._net.backward(first, last)
        wanted = list(self.inputs if end is None else self.bottom_names[end]) + list(diffs or [])
        self._check_blob_names(wanted, self.blobs, "blobs")
        return {name: self.blobs[name].diff for name in wanted}

    def forward_all(self, blobs=None, **inputs):
        """forward() over inputs of any length: each keyword array is cut
        into batches of its blob's batch size (the last one padded), and the
        outputs and `blobs` of every batch are joined, padding dropped."""
        outputs, _ = self._all_batches(blobs, None, inputs, backward=False)
        return outputs

    def backward_all(self, diffs=None, **top_diffs):
        """backward() over top diffs of any length (pycaffe): each keyword
        array, named by an output, is cut into batches of its blob's batch
        size (the last one padded with zeros); returns the diffs of the
        inputs and of `diffs`, joined, padding dropped. Backward reads what
        the last forward left in the blobs, as pycaffe's does."""
        self._check_blob_names(top_diffs, self.outputs, "outputs")
        lengths = {len(values) for values in top_diffs.values()}
        if len(lengths) > 1:
            raise ValueError(f"arrays of different lengths: "
                             f"{', '.join(f'{k}: {len(v)}' for k, v in top_diffs.items())}")
        count = lengths.pop() if lengths else None
        batch = self.blobs[next(iter(top_diffs))].shape[0] if top_diffs else 1
        result = {}
        for start in range(0, count or 1, batch):
            chunk = {}
            for name, values in top_diffs.items():
                values = np.asarray(values)[start:start + batch]
                if len(values) < batch:
                    padding = np.zeros((batch - len(values),) + values.shape[1:], values.dtype)
                    values = np.concatenate([values, padding])
                chunk[name] = values
            for name, values in self.backward(diffs=diffs, **chunk).items():
                result.setdefault(name, []).append(np.array(values))
        return {name: parts[0] if count is None else np.concatenate(parts)[:count]
                for name, parts in result.items()}

    def forward_backward_all(self, blobs=None, diffs=None, **arrays):
        """forward() then backward() batch by batch, as forward_all: keywords
        naming inputs are data, those naming outputs are top diffs. Returns
        (outputs and `blobs`, diffs of the inputs and of `diffs`)."""
        return self._all_batches(blobs, diffs, arrays, backward=True)

    def _all_batches(self, blobs, diffs, arrays, backward):
        inputs = {name: values for name, values in arrays.items() if name in self.inputs}
        top_diffs = {name: values for name, values in arrays.items() if name not in inputs}
        if not backward:
            self._check_blob_names(top_diffs, self.inputs, "inputs")
        lengths = {len(values) for values in arrays.values()}
        if len(lengths) > 1:
            raise ValueError(f"arrays of different lengths: "
                             f"{', '.join(f'{k}: {len(v)}' for k, v in arrays.items())}")
        # No arrays: one pass over whatever the net's inputs hold.
        count = lengths.pop() if lengths else None
        batch = self.blobs[next(iter(arrays))].shape[0] if arrays else 1
        results = ({}, {})
        for start in range(0, count or 1, batch):
            chunk = {}
            for name, values in arrays.items():
                values = np.asarray(values)[start:start + batch]
                if len(values) < batch:  # the last batch, padded with zeros
                    padding = np.zeros((batch - len(values),) + values.shape[1:], values.dtype)
                    values = np.concatenate([values, padding])
                chunk[name] = values
            passes = [self.forward(blobs=blobs, **{k: chunk[k] for k in inputs})]
            if backward:
                passes.append(self.backward(diffs=diffs, **{k: chunk[k] for k in top_diffs}))
            for result, out in zip(results, passes):
                for name, values in out.items():
                    result.setdefault(name, []).append(np.array(values))
        return tuple({name: parts[0] if count is None else np.concatenate(parts)[:count]
                      for name, parts in result.items()} for result in results)

    def reshape(self):
        """Re-runs every layer's reshape after an input blob changed shape
        (forward() does it too when an input's shape changed since)."""
        self._net.reshape()
        self._input_shapes = self._current_input_shapes()

    def clear_param_diffs(self):
        self._net.clear_param_diffs()

    def after_backward(self, callback):
        """pycaffe's per-layer hook, which train.py gives an NCCL object when
        solver.param.layer_wise_reduce is set: Caffe then reduces each
        layer's gradients as backward finishes it. Here the NCCL object
        added with solver.add_callback already reduces buckets of layers
        while backward runs, so passing it is accepted and does nothing.
        Other per-layer hooks are not supported."""
        if not isinstance(callback, parallel.NCCL):
            raise NotImplementedError(
                "net.after_backward takes only an NCCL object (a no-op: solver.add_callback(nccl) "
                "already reduces gradients while backward runs); per-layer Python hooks are not "
                "supported")

    # ---- weights ----
    def copy_from(self, weights_file):
        """Copies params from a .caffemodel into the layers of the same name."""
        self._net.copy_from(require_file(weights_file, "weights file"))

    def share_with(self, other):
        """Makes this net's params those of `other` (same layer names)."""
        self._net.share_with(other._net)
        self._shared_with = other  # their memory now belongs to `other`
        self._cache.clear()

    def save(self, filename):
        """Writes the params as a .caffemodel."""
        self._net.save(str(filename))

    def save_hdf5(self, filename):
        """Writes the params as Caffe's HDF5 weights: group data/<layer>
        (every layer, as Caffe writes it) with datasets "0", "1", ... of
        float32. A param shared by several layers is written once, under the
        first of them. Needs h5py (Debian's python3-h5py)."""
        h5py = _h5py()
        seen = set()
        with h5py.File(os.fspath(filename), "w") as hdf5:
            data = hdf5.create_group("data")
            for layer in self.layers:
                # A name with '/' nests (inception_3a/1x1 under inception_3a),
                # whichever of the two comes first.
                group = data.require_group(layer.name)
                for i, blob in enumerate(layer.blobs):
                    values = blob.data
                    address = values.__array_interface__["data"][0]
                    if values.size and address in seen:
                        continue
                    seen.add(address)
                    group.create_dataset(str(i), data=values, dtype="float32")

    def load_hdf5(self, filename):
        """Copies params from Caffe's HDF5 weights (save_hdf5's format) into
        the layers of the same name; layers the net lacks are skipped. A
        layer's datasets must match its params in number and shape, but a
        dataset may be missing for a param the layer shares with another."""
        h5py = _h5py()
        filename = require_file(filename, "HDF5 weights file")
        layers = self.layer_dict
        with h5py.File(filename, "r") as hdf5:
            if "data" not in hdf5:
                raise ValueError(f"{filename} has no 'data' group: not HDF5 weights as Caffe "
                                 "and save_hdf5 write them")
            for name, group in _hdf5_layer_groups(hdf5["data"], h5py):
                if name not in layers:
                    continue
                blobs = layers[name].blobs
                held = sum(isinstance(item, h5py.Dataset) for item in group.values())
                if held > len(blobs):
                    raise ValueError(f"layer '{name}' has {len(blobs)} params but {filename} "
                                     f"holds {held} for it")
                for i, blob in enumerate(blobs):
                    if str(i) not in group:
                        if self._is_shared(name, i):
                            continue
                        raise ValueError(f"{filename} lacks param {i} of layer '{name}'")
                    values = group[str(i)]
                    if tuple(values.shape) != tuple(blob.shape):
                        raise ValueError(f"param {i} of layer '{name}' is "
                                         f"{'x'.join(map(str, blob.shape))} in the net but "
                                         f"{'x'.join(map(str, values.shape))} in {filename}")
                    blob.data[...] = values[...]

    def _is_shared(self, layer_name, index):
        """Whether param `index` of the layer is another layer's memory too."""
        address = self.layer_dict[layer_name].blobs[index].data.__array_interface__["data"][0]
        return any(blob.data.__array_interface__["data"][0] == address
                   for layer in self.layers if layer.name != layer_name for blob in layer.blobs)

    def memory_report(self):
        """What the net takes under each memory plan (the `memory` tool's
        figures) as a dict; `held` is what this net, every blob kept, holds."""
        return self._net.memory_report()

    def __repr__(self):
        phase = "TRAIN" if self.phase == 0 else "TEST"
        return f"<demitasse.Net '{self.name}' {phase}, {len(self.layers)} layers>"
