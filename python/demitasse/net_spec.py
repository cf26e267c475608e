"""Nets written in Python, as pycaffe's caffe.net_spec:

    from demitasse import layers as L, params as P
    n = demitasse.NetSpec()
    n.data, n.label = L.DummyData(shape=[dict(dim=[64, 1, 28, 28]), dict(dim=[64])], ntop=2)
    n.conv1 = L.Convolution(n.data, kernel_size=5, num_output=20,
                            weight_filler=dict(type="xavier"))
    n.pool1 = L.Pooling(n.conv1, kernel_size=2, stride=2, pool=P.Pooling.MAX)
    n.relu1 = L.ReLU(n.pool1, in_place=True)
    print(n.to_proto())          # a caffe_pb2.NetParameter; str() is its prototxt

A call `L.<Type>(*bottoms, **options)` describes one layer of that type;
it returns its top (a Top), a tuple of `ntop` Tops, or, with ntop=0, the
layer itself. Assigning a top to a NetSpec attribute names the blob and the
layer that makes it; unnamed ones get the type and a count ("Convolution1").
`in_place=True` writes the tops over the bottoms. An option goes to the
type's own message (`kernel_size` of a Convolution into convolution_param)
when that message has such a field, else to the LayerParameter itself
(`loss_weight`, `include`, `param`); options ending in `param` always go to
the LayerParameter. Dicts fill messages, lists fill repeated fields (a
single value becomes a one-element list), enum fields take the constant
(`P.Pooling.MAX`) or its name ("MAX").
"""
from collections import Counter, OrderedDict

import numpy as np
from google.protobuf import message as _message
from google.protobuf.descriptor import FieldDescriptor

from .proto import caffe_pb2

# Layer types whose options Caffe reads from another type's message.
_SHARED_PARAM_FIELDS = {"Deconvolution": "convolution_param"}


def _param_fields():
    """Each layer type's options field of LayerParameter, from the schema:
    the message type `<Type>Parameter` of field `<type>_param`
    ("InnerProduct" -> "inner_product_param", "LRN" -> "lrn_param")."""
    fields = {}
    for field in caffe_pb2.LayerParameter.DESCRIPTOR.fields:
        message = field.message_type
        if field.name.endswith("_param") and message is not None and \
                message.name.endswith("Parameter"):
            fields[message.name[:-len("Parameter")]] = field.name
    fields.update(_SHARED_PARAM_FIELDS)
    return fields


_PARAM_FIELDS = _param_fields()


def _plain(value):
    """numpy scalars as Python numbers, which protobuf takes."""
    return value.item() if isinstance(value, np.generic) else value


def _scalar(field, value):
    """`value` as field `field` stores it: an enum's name becomes its number."""
    value = _plain(value)
    if field.enum_type is not None and isinstance(value, str):
        if value not in field.enum_type.values_by_name:
            raise ValueError(f"'{value}' is not a value of {field.enum_type.name} (field "
                             f"'{field.name}'); its values: "
                             f"{', '.join(field.enum_type.values_by_name)}")
        return field.enum_type.values_by_name[value].number
    return value


def _fill(message, values, where):
    """Sets each field of `message` named in the dict `values`."""
    for name, value in values.items():
        assign_proto(message, name, value, where)


def assign_proto(proto, name, value, where=None):
    """Sets field `name` of the message `proto` from a Python value: a dict
    fills a message field, a message is copied in, a list, tuple or numpy
    array (or a single value, made a one-element list) fills a repeated
    field, anything else is set as is. `where` names the field's place in error messages."""
    where = where or type(proto).__name__
    field = proto.DESCRIPTOR.fields_by_name.get(name)
    if field is None:
        raise AttributeError(f"{where} has no field '{name}'")
    path = f"{where}.{name}"
    is_message = field.type == FieldDescriptor.TYPE_MESSAGE
    if field.label == FieldDescriptor.LABEL_REPEATED:
        container = getattr(proto, name)
        items = list(value) if isinstance(value, (list, tuple, np.ndarray)) else [value]
        for item in items:
            if not is_message:
                container.append(_scalar(field, item))
            elif isinstance(item, _message.Message):
                container.add().CopyFrom(item)
            elif isinstance(item, dict):
                _fill(container.add(), item, path)
            else:
                raise TypeError(f"{path} holds {field.message_type.name} messages: give dicts, "
                                f"not {type(item).__name__}")
    elif is_message:
        if isinstance(value, _message.Message):
            getattr(proto, name).CopyFrom(value)
        elif isinstance(value, dict):
            _fill(getattr(proto, name), value, path)
        else:
            raise TypeError(f"{path} is a {field.message_type.name} message: give a dict, "
                            f"not {type(value).__name__}")
    else:
        setattr(proto, name, _scalar(field, value))


class Top:
    """One output blob of a layer: top `n` of the layer `fn`."""

    def __init__(self, fn, n):
        self.fn = fn
        self.n = n

    def to_proto(self):
        """A NetParameter with every layer this top needs, names generated."""
        return to_proto(self)

    def _to_proto(self, layers, names, autonames):
        return self.fn._to_proto(layers, names, autonames)


class Function:
    """A layer not yet written out: its type, bottoms (Tops) and options.
    `ntop` (default 1) and `in_place` are taken from the options."""

    def __init__(self, type_name, inputs, params):
        for index, bottom in enumerate(inputs):
            if not isinstance(bottom, Top):
                raise TypeError(f"{type_name} input {index} is not a Top (type is "
                                f"{type(bottom)})")
        self.type_name = type_name
        self.inputs = tuple(inputs)
        self.params = dict(params)
        self.ntop = self.params.pop("ntop", 1)
        self.in_place = self.params.pop("in_place", False)
        if self.in_place and self.ntop != len(self.inputs):
            raise ValueError(f"{type_name} in place needs as many tops as bottoms "
                             f"({len(self.inputs)}), not ntop={self.ntop}")
        self.tops = tuple(Top(self, n) for n in range(self.ntop))

    @staticmethod
    def _autoname(type_name, autonames):
        autonames[type_name] += 1
        return f"{type_name}{autonames[type_name]}"

    def _top_name(self, top, names, autonames):
        if top not in names:
            names[top] = self._autoname(top.fn.type_name, autonames)
        return names[top]

    def _layer_name(self, names, autonames):
        """The name given to the layer itself (a NetSpec attribute holding a
        top-less layer), else its first top's, else a generated one."""
        if self not in names:
            names[self] = self._top_name(self.tops[0], names, autonames) if self.tops else \
                self._autoname(self.type_name, autonames)
        return names[self]

    def _options_field(self, key, layer):
        """Where option `key` goes: the type's message when it has such a
        field, else the LayerParameter."""
        field = _PARAM_FIELDS.get(self.type_name)
        if key.endswith("param") or field is None:
            return None
        if key in getattr(layer, field).DESCRIPTOR.fields_by_name:
            return field
        return None

    def _to_proto(self, layers, names, autonames):
        """Adds this layer, after the layers its bottoms need, to the ordered
        dict `layers`; names come from `names` or are generated."""
        if self in layers:
            return
        bottoms = []
        for bottom in self.inputs:
            bottom._to_proto(layers, names, autonames)
            bottoms.append(layers[bottom.fn].top[bottom.n])
        layer = caffe_pb2.LayerParameter()
        layer.type = self.type_name
        layer.bottom.extend(bottoms)
        if self.in_place:
            layer.top.extend(bottoms)
        else:
            layer.top.extend(self._top_name(top, names, autonames) for top in self.tops)
        layer.name = self._layer_name(names, autonames)
        for key, value in self.params.items():
            field = self._options_field(key, layer)
            if field is None:
                assign_proto(layer, key, value, f"{self.type_name} layer '{layer.name}'")
            else:
                assign_proto(getattr(layer, field), key, value,
                             f"{self.type_name} layer '{layer.name}' {field}")
        layers[self] = layer


def to_proto(*tops):
    """A NetParameter with every layer `tops` need, in the order they run,
    blob and layer names generated."""
    layers = OrderedDict()
    autonames = Counter()
    for top in tops:
        top._to_proto(layers, {}, autonames)
    net = caffe_pb2.NetParameter()
    net.layer.extend(layers.values())
    return net


class NetSpec:
    """Named tops: `n.conv1 = L.Convolution(...)` names the blob and its
    layer "conv1". to_proto() writes every layer the named tops need, in
    the order of assignment (a layer's bottoms first)."""

    def __init__(self):
        super().__setattr__("tops", OrderedDict())

    def __setattr__(self, name, value):
        self.tops[name] = value

    def __getattr__(self, name):
        try:
            return self.tops[name]
        except KeyError:
            raise AttributeError(f"this NetSpec has no top '{name}'; its tops: "
                                 f"{', '.join(self.tops) or 'none'}") from None

    def __setitem__(self, name, value):
        self.tops[name] = value

    def __getitem__(self, name):
        return self.tops[name]

    def to_proto(self):
        names = {top: name for name, top in self.tops.items()}
        autonames = Counter()
        layers = OrderedDict()
        for top in self.tops.values():
            top._to_proto(layers, names, autonames)
        net = caffe_pb2.NetParameter()
        net.layer.extend(layers.values())
        return net


class Layers:
    """`layers.<Type>(*bottoms, **options)` describes a layer of that type:
    it returns its Top, a tuple of `ntop` Tops, or, for ntop=0, the layer."""

    def __getattr__(self, type_name):
        if type_name.startswith("__"):
            raise AttributeError(type_name)

        def layer(*bottoms, **options):
            fn = Function(type_name, bottoms, options)
            if fn.ntop == 0:
                return fn
            return fn.tops[0] if fn.ntop == 1 else fn.tops

        layer.__name__ = type_name
        return layer


class Parameters:
    """`params.<Type>` is the schema's <Type>Parameter message class, so
    `params.Pooling.MAX` is pooling's MAX constant."""

    def __getattr__(self, type_name):
        try:
            return getattr(caffe_pb2, type_name + "Parameter")
        except AttributeError:
            raise AttributeError(f"the schema has no message {type_name}Parameter") from None


layers = Layers()
params = Parameters()
