"""NetSpec (demitasse.net_spec, pycaffe's caffe.net_spec) and coord_map:
nets written in Python against the zoo's prototxts parsed with caffe_pb2,
and run by the C++ net."""
import numpy as np
import pytest
from google.protobuf import text_format

import demitasse
from demitasse import layers as L
from demitasse import params as P
from demitasse.coord_map import coord_map_from_to, crop
from demitasse.proto import caffe_pb2
from conftest import REPO


def parse_net(path):
    net = caffe_pb2.NetParameter()
    text_format.Merge(path.read_text(), net)
    return net


def weighted(**options):
    """Options of a layer with weights and biases as the zoo's LeNet writes them."""
    return dict(param=[dict(lr_mult=1), dict(lr_mult=2)], weight_filler=dict(type="xavier"),
                bias_filler=dict(type="constant"), **options)


def lenet_spec():
    n = demitasse.NetSpec()
    n.data, n.label = L.DummyData(
        shape=[dict(dim=[64, 1, 28, 28]), dict(dim=[64])],
        data_filler=[dict(type="gaussian", std=1), dict(type="uniform", min=0, max=9.99)],
        ntop=2)
    n.conv1 = L.Convolution(n.data, **weighted(num_output=20, kernel_size=5, stride=1))
    n.pool1 = L.Pooling(n.conv1, pool=P.Pooling.MAX, kernel_size=2, stride=2)
    n.conv2 = L.Convolution(n.pool1, **weighted(num_output=50, kernel_size=5, stride=1))
    n.pool2 = L.Pooling(n.conv2, pool=P.Pooling.MAX, kernel_size=2, stride=2)
    n.ip1 = L.InnerProduct(n.pool2, **weighted(num_output=500))
    n.relu1 = L.ReLU(n.ip1, in_place=True)
    n.ip2 = L.InnerProduct(n.relu1, **weighted(num_output=10))
    n.accuracy = L.Accuracy(n.ip2, n.label, include=dict(phase=caffe_pb2.TEST))
    n.loss = L.SoftmaxWithLoss(n.ip2, n.label)
    return n


def test_lenet_equals_the_zoo_prototxt():
    proto = lenet_spec().to_proto()
    proto.name = "LeNet"
    expected = parse_net(REPO / "models" / "lenet" / "lenet_dummy.prototxt")
    # Field by field first, for a readable failure, then the whole message.
    assert [layer.name for layer in proto.layer] == [layer.name for layer in expected.layer]
    for layer, expected_layer in zip(proto.layer, expected.layer):
        assert layer == expected_layer, (layer, expected_layer)
    assert proto == expected
    # In place: relu1 writes ip1 over itself, and ip2 reads it under that name.
    assert list(proto.layer[6].bottom) == list(proto.layer[6].top) == ["ip1"]
    assert list(proto.layer[7].bottom) == ["ip1"]
    # Its text is a prototxt the C++ net builds.
    assert text_format.Parse(str(proto), caffe_pb2.NetParameter()) == expected


def bn_scale(n, bottom, suffix):
    """BatchNorm and Scale in place over `bottom`, named as ResNet-50 names them."""
    n["bn" + suffix] = L.BatchNorm(bottom, in_place=True, use_global_stats=True)
    n["scale" + suffix] = L.Scale(bottom, in_place=True, bias_term=True)


def resnet_stem_and_block():
    n = demitasse.NetSpec()
    n.data = L.Input(shape=dict(dim=[10, 3, 224, 224]))
    n.conv1 = L.Convolution(n.data, num_output=64, bias_term=False, pad=3, kernel_size=7,
                            stride=2)
    bn_scale(n, n.conv1, "_conv1")
    n.conv1_relu = L.ReLU(n.conv1, in_place=True)
    n.pool1 = L.Pooling(n.conv1, pool="MAX", kernel_size=3, stride=2)  # an enum by name
    n.res2a_branch1 = L.Convolution(n.pool1, num_output=256, bias_term=False, kernel_size=1)
    bn_scale(n, n.res2a_branch1, "2a_branch1")
    bottom = n.pool1
    for branch, outputs, kernel in (("2a", 64, 1), ("2b", 64, 3), ("2c", 256, 1)):
        name = "res2a_branch" + branch
        pad = {"pad": 1} if kernel == 3 else {}
        n[name] = L.Convolution(bottom, num_output=outputs, bias_term=False, kernel_size=kernel,
                                **pad)
        bn_scale(n, n[name], "2a_branch" + branch)
        if branch != "2c":
            n[name + "_relu"] = L.ReLU(n[name], in_place=True)
        bottom = n[name]
    n.res2a = L.Eltwise(n.res2a_branch1, bottom, operation=P.Eltwise.SUM)
    n.res2a_relu = L.ReLU(n.res2a, in_place=True)
    return n


def test_resnet_block_equals_the_zoo_prototxt():
    proto = resnet_stem_and_block().to_proto()
    expected = parse_net(REPO / "models" / "resnet50" / "deploy.prototxt")
    count = [layer.name for layer in expected.layer].index("res2a_relu") + 1
    assert len(proto.layer) == count == 22
    for layer, expected_layer in zip(proto.layer, expected.layer[:count]):
        assert layer == expected_layer, (layer, expected_layer)
    # The shortcut reads the branch's top as BatchNorm and Scale left it.
    assert list(proto.layer[-2].bottom) == ["res2a_branch1", "res2a_branch2c"]


def anonymous_chain():
    data, label = L.DummyData(shape=[dict(dim=[2, 3, 8, 8]), dict(dim=[2])], ntop=2)
    conv = L.Convolution(data, num_output=4, kernel_size=3)
    relu = L.ReLU(conv, in_place=True)
    ip = L.InnerProduct(relu, num_output=5)
    return L.SoftmaxWithLoss(ip, label, loss_weight=2)


def test_generated_names_and_options_by_name():
    proto = anonymous_chain().to_proto()
    assert [(layer.name, layer.type, list(layer.bottom), list(layer.top)) for layer in proto.layer] \
        == [("DummyData1", "DummyData", [], ["DummyData1", "DummyData2"]),
            ("Convolution1", "Convolution", ["DummyData1"], ["Convolution1"]),
            ("ReLU1", "ReLU", ["Convolution1"], ["Convolution1"]),
            ("InnerProduct1", "InnerProduct", ["Convolution1"], ["InnerProduct1"]),
            ("SoftmaxWithLoss1", "SoftmaxWithLoss", ["InnerProduct1", "DummyData2"],
             ["SoftmaxWithLoss1"])]
    conv, loss = proto.layer[1], proto.layer[4]
    # Options of the type's message go there, the rest to the layer; a single
    # value of a repeated field becomes a one-element list.
    assert conv.convolution_param.num_output == 4
    assert list(conv.convolution_param.kernel_size) == [3]
    assert list(loss.loss_weight) == [2.0]
    assert not loss.HasField("softmax_param")
    # Deconvolution's options live in convolution_param, as Caffe reads them.
    deconv = L.Deconvolution(L.Input(shape=dict(dim=[1, 1, 4, 4])), num_output=2,
                             kernel_size=4, stride=2).to_proto().layer[1]
    assert deconv.convolution_param.num_output == 2
    assert list(L.Input(shape=dict(dim=np.array([1, 1, 4, 4]))).to_proto()
                .layer[0].input_param.shape[0].dim) == [1, 1, 4, 4]
    assert list(deconv.convolution_param.stride) == [2]


def test_errors_name_the_layer_and_option():
    data = L.DummyData(ntop=2)
    with pytest.raises(TypeError, match=r"^Silence input 0 is not a Top \(type is <class 'tuple'>\)$"):
        L.Silence(data, ntop=0)
    L.Silence(*data, ntop=0)
    bad = L.Convolution(data[0], num_output=2, kernel_sise=3)
    with pytest.raises(AttributeError, match=r"Convolution layer 'Convolution1'.*'kernel_sise'"):
        bad.to_proto()
    with pytest.raises(ValueError, match=r"'AVERAGE' is not a value of PoolMethod.*AVE"):
        L.Pooling(data[0], pool="AVERAGE").to_proto()
    with pytest.raises(TypeError, match=r"weight_filler is a FillerParameter message"):
        L.InnerProduct(data[0], num_output=1, weight_filler="xavier").to_proto()


def write_net(tmp_path, proto, name="net.prototxt"):
    path = tmp_path / name
    path.write_text(str(proto))
    return str(path)


def test_the_cpp_net_runs_what_netspec_writes(tmp_path):
    n = lenet_spec()
    n.silence = L.Silence(n.accuracy, ntop=0)  # a top-less layer, named by the spec
    proto = n.to_proto()
    assert proto.layer[-1].name == "silence" and not proto.layer[-1].top
    net = demitasse.Net(write_net(tmp_path, proto), demitasse.TEST)
    assert [layer.name for layer in net.layers if layer.type != "Split"] == \
        [layer.name for layer in proto.layer]
    assert net.blobs["ip1"].data.shape == (64, 500)
    out = net.forward()
    assert set(out) == {"loss"} and np.isfinite(out["loss"]).all()


def fcn_spec(pad=0, deconv_pad=0):
    """Convolution, 2x pooling and 2x deconvolution: FCN's upsampling path."""
    n = demitasse.NetSpec()
    n.data = L.Input(shape=dict(dim=[1, 1, 20, 20]))
    n.conv = L.Convolution(n.data, num_output=2, kernel_size=3, pad=pad,
                           weight_filler=dict(type="gaussian", std=1))
    n.pool = L.Pooling(n.conv, pool=P.Pooling.MAX, kernel_size=2, stride=2)
    n.deconv = L.Deconvolution(n.pool, num_output=2, kernel_size=4, stride=2, pad=deconv_pad,
                               weight_filler=dict(type="gaussian", std=1))
    return n


def test_coord_map_by_hand():
    # data x -> conv (k3, pad p): x + p - 1 -> pool (k2 s2): (x + p - 1) / 2 - 1/4
    # -> deconv (k4 s2): 2 ((x + p - 1) / 2 - 1/4) + 3/2 = x + p: deconv sees
    # data's pixel x at x + p, so data's coordinate is deconv's less p.
    for pad in (0, 3):
        n = fcn_spec(pad=pad)
        axis, a, b = coord_map_from_to(n.deconv, n.data)
        assert axis == 1 and np.all(a == 1) and np.all(b == -pad)
        axis, a, b = coord_map_from_to(n.data, n.deconv)
        assert np.all(a == 1) and np.all(b == pad)
    n = fcn_spec()
    n.ip = L.InnerProduct(n.deconv, num_output=1)
    with pytest.raises(RuntimeError, match="could not map"):
        coord_map_from_to(n.ip, n.data)
    # A padded deconvolution is smaller than the data: nothing to crop.
    n = fcn_spec(deconv_pad=2)
    with pytest.raises(AssertionError, match="negative offset"):
        crop(n.deconv, n.data)


def test_crop_aligns_what_the_cpp_net_computes(tmp_path):
    n = fcn_spec(pad=3)
    n.score = crop(n.deconv, n.data)
    layer = n.to_proto().layer[-1]
    assert layer.type == "Crop" and list(layer.bottom) == ["deconv", "data"]
    assert layer.crop_param.axis == 2 and list(layer.crop_param.offset) == [3]
    net = demitasse.Net(write_net(tmp_path, n.to_proto()), demitasse.TEST)
    net.blobs["data"].data[...] = np.random.default_rng(0).normal(size=(1, 1, 20, 20))
    net.forward()
    deconv, score = net.blobs["deconv"].data, net.blobs["score"].data
    assert deconv.shape == (1, 2, 26, 26) and score.shape == (1, 2, 20, 20)
    np.testing.assert_array_equal(score, deconv[:, :, 3:23, 3:23])
