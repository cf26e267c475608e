"""The `caffe` package (python/caffe): pycaffe's names over demitasse's
objects, so unchanged pycaffe code runs; and layer_type_list."""
import importlib
import os
import re
import subprocess
import sys

import pytest

import caffe
import caffe.coord_map
import demitasse
from caffe import layers as L
from caffe.proto import caffe_pb2
from conftest import REPO


def test_names_and_submodules_are_demitasse_s():
    assert caffe.Net is demitasse.Net and caffe.SGDSolver is demitasse.SGDSolver
    assert caffe.io is demitasse.io and caffe.net_spec is demitasse.net_spec
    assert caffe_pb2 is demitasse.proto.caffe_pb2 is caffe.proto.caffe_pb2
    assert caffe.coord_map is demitasse.coord_map
    assert importlib.import_module("caffe.draw") is demitasse.draw
    assert sys.modules["caffe.io"] is demitasse.io
    assert L is demitasse.layers and caffe.NetSpec is demitasse.NetSpec
    assert (caffe.TRAIN, caffe.TEST) == (caffe_pb2.TRAIN, caffe_pb2.TEST) == (0, 1)
    assert caffe.has_nccl() is True
    caffe.set_mode_cpu()
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("caffe.no_such_module")


def test_layer_type_list_is_what_the_registry_knows(tmp_path):
    types = caffe.layer_type_list()
    assert {"Data", "Convolution", "InnerProduct", "BatchNorm"} <= set(types)
    assert len(types) == len(set(types)) > 30
    # The library's own error for an unknown type lists the same types.
    path = tmp_path / "unknown.prototxt"
    path.write_text('layer { name: "x" type: "NoSuchType" top: "x" }')
    with pytest.raises(RuntimeError, match="NoSuchType") as error:
        caffe.Net(str(path), caffe.TEST)
    known = re.search(r"known types: (.*)", str(error.value)).group(1)
    assert sorted(known.split(", ")) == sorted(types)


PYCAFFE_SCRIPT = """
import caffe
from caffe import layers as L, params as P
from caffe.proto import caffe_pb2
from google.protobuf import text_format

caffe.set_mode_cpu()
n = caffe.NetSpec()
n.data, n.label = L.DummyData(shape=[dict(dim=[4, 1, 12, 12]), dict(dim=[4])],
                              data_filler=[dict(type='gaussian'), dict(type='constant')], ntop=2)
n.conv = L.Convolution(n.data, kernel_size=3, num_output=5, weight_filler=dict(type='xavier'))
n.pool = L.Pooling(n.conv, kernel_size=2, stride=2, pool=P.Pooling.MAX)
n.ip = L.InnerProduct(n.pool, num_output=3, weight_filler=dict(type='xavier'))
n.loss = L.SoftmaxWithLoss(n.ip, n.label)
with open('net.prototxt', 'w') as f:
    f.write(str(n.to_proto()))
net = caffe.Net('net.prototxt', caffe.TRAIN)
loss = net.forward()['loss']
net.backward()
parsed = text_format.Parse(open('net.prototxt').read(), caffe_pb2.NetParameter())
print(len(net.layers), [l.name for l in parsed.layer], float(loss) > 0,
      float(abs(net.params['conv'][0].diff).sum()) > 0)
"""


def test_unchanged_pycaffe_script_runs(tmp_path):
    """A fresh interpreter that imports only `caffe`, as a pycaffe user's would."""
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"), GLOG_minloglevel="2")
    run = subprocess.run([sys.executable, "-c", PYCAFFE_SCRIPT], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split("\n")[0] == \
        "5 ['data', 'conv', 'pool', 'ip', 'loss'] True True"
