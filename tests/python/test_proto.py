"""demitasse.proto.caffe_pb2 (pycaffe's caffe.proto.caffe_pb2): the zoo's
prototxts through text_format and back, and binary files passed between
Python and the C++ library in both directions."""
import numpy as np
from google.protobuf import text_format

import demitasse
from demitasse.proto import caffe_pb2
from conftest import DEPLOY, REPO


def zoo_files():
    return sorted((REPO / "models").glob("*/*.prototxt"))


def test_every_zoo_prototxt_round_trips():
    files = zoo_files()
    assert len(files) >= 20
    for path in files:
        text = path.read_text()
        message = caffe_pb2.SolverParameter() if "solver" in path.name else \
            caffe_pb2.NetParameter()
        text_format.Merge(text, message)
        printed = text_format.MessageToString(message)
        again = type(message)()
        text_format.Merge(printed, again)
        assert again == message, path
        assert type(message).FromString(message.SerializeToString()) == message, path
        if isinstance(message, caffe_pb2.NetParameter):
            # Every "layer {" of the file (comments aside) is a parsed layer.
            lines = [line.split("#")[0].strip() for line in text.splitlines()]
            assert len(message.layer) == lines.count("layer {") > 0, path
    googlenet = caffe_pb2.NetParameter()
    text_format.Merge((REPO / "models" / "googlenet" / "train_val.prototxt").read_text(),
                      googlenet)
    concat = next(layer for layer in googlenet.layer if layer.type == "Concat")
    assert len(concat.bottom) == 4
    assert googlenet.layer[0].include[0].phase == caffe_pb2.TRAIN == demitasse.TRAIN


def test_the_cpp_net_builds_what_python_prints(tmp_path):
    message = caffe_pb2.NetParameter()
    text_format.Merge(DEPLOY.read_text(), message)
    message.layer[1].convolution_param.num_output = 7  # an edit made in Python
    path = tmp_path / "edited.prototxt"
    path.write_text(text_format.MessageToString(message))
    net = demitasse.Net(str(path), demitasse.TEST)
    assert [layer.name for layer in net.layers] == [layer.name for layer in message.layer]
    assert [layer.type for layer in net.layers] == [layer.type for layer in message.layer]
    assert net.params["conv1"][0].shape == (7, 1, 5, 5)


def test_caffemodel_in_both_directions(tmp_path, deploy):
    net = demitasse.Net(str(deploy), demitasse.TEST)
    rng = np.random.default_rng(4)
    for blobs in net.params.values():
        for blob in blobs:
            blob.data[...] = rng.normal(size=blob.shape)
    written = tmp_path / "cpp.caffemodel"
    net.save(str(written))
    # C++ -> Python: every layer's blobs, with shapes and values.
    model = caffe_pb2.NetParameter.FromString(written.read_bytes())
    layers = {layer.name: layer for layer in model.layer if layer.blobs}
    assert list(layers) == list(net.params)
    for name, blobs in net.params.items():
        for blob, proto in zip(blobs, layers[name].blobs):
            np.testing.assert_array_equal(demitasse.io.blobproto_to_array(proto), blob.data)
    # Python -> C++: an edited model loads into a fresh net.
    bias = layers["ip2"].blobs[1]
    del bias.data[:]
    bias.data.extend(np.arange(10, dtype=np.float32).tolist())
    edited = tmp_path / "python.caffemodel"
    edited.write_bytes(model.SerializeToString())
    fresh = demitasse.Net(str(deploy), demitasse.TEST, weights=str(edited))
    np.testing.assert_array_equal(fresh.params["ip2"][1].data, np.arange(10))
    np.testing.assert_array_equal(fresh.params["conv2"][0].data, net.params["conv2"][0].data)
