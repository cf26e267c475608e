"""Issue 26: a numpy view of a blob never reads or writes freed memory, even
after the blob's memory was replaced (a reshape to a larger batch) or its
owner is gone (params live in an arena block of the net's)."""
import gc

import numpy as np
import pytest

import demitasse

NET = """
input: "data" input_shape { dim: 2 dim: 4 }
layer { name: "ip1" type: "InnerProduct" bottom: "data" top: "ip1"
  inner_product_param { num_output: 3 weight_filler { type: "gaussian" std: 1 }
                        bias_filler { type: "constant" value: 0.5 } } }
"""


def _net(tmp_path):
    path = tmp_path / "views.prototxt"
    path.write_text(NET)
    return demitasse.Net(str(path), demitasse.TEST)


@pytest.mark.parametrize("call_reshape", [True, False])  # forward() reshapes when not
def test_a_view_survives_a_reshape_to_a_larger_batch(tmp_path, call_reshape):
    net = _net(tmp_path)
    old = net.blobs["ip1"].data
    net.blobs["data"].reshape(64, 4)
    if call_reshape:
        net.reshape()
    data = np.random.RandomState(0).randn(64, 4).astype(np.float32)
    net.blobs["data"].data[...] = data
    net.forward()
    old[...] = 7  # the old bytes: still alive, no longer the blob's
    assert old.shape == (2, 3) and float(old.sum()) == 42.0
    weights, bias = (blob.data for blob in net.params["ip1"])
    np.testing.assert_allclose(net.blobs["ip1"].data, data @ weights.T + bias, rtol=1e-5,
                               atol=1e-5)


def test_param_views_outlive_their_net_and_solver(tmp_path):
    net = _net(tmp_path)
    weights = net.params["ip1"][0].data
    expected = weights.copy()
    del net
    gc.collect()
    np.testing.assert_array_equal(weights, expected)
    weights[...] = 1
    assert float(weights.sum()) == weights.size
