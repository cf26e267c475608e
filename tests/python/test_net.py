"""demitasse.Net: construction forms, blobs and params as zero-copy views,
forward and backward, reshape, weights files, memory report, errors."""
import numpy as np
import pytest

import demitasse


def address(array):
    return array.__array_interface__["data"][0]


def random_image(seed=0, batch=1):
    return np.random.default_rng(seed).uniform(0, 1, size=(batch, 1, 28, 28)).astype(np.float32)


def test_structure(deploy):
    net = demitasse.Net(str(deploy), demitasse.TEST)
    assert net.name == "LeNet-Fashion"
    assert net.phase == demitasse.TEST
    assert net.inputs == ["data"]
    assert net.outputs == ["prob"]
    assert list(net.blobs) == ["data", "conv1", "pool1", "conv2", "pool2", "ip1", "ip2", "prob"]
    assert list(net.params) == ["conv1", "conv2", "ip1", "ip2"]
    assert [layer.type for layer in net.layers] == [
        "Input", "Convolution", "Pooling", "Convolution", "Pooling", "InnerProduct", "ReLU",
        "InnerProduct", "Softmax"]
    assert net._layer_names[1] == "conv1" and net.layer_dict["ip2"].type == "InnerProduct"
    # pycaffe's private lists, which some scripts read: blob indices.
    assert [net._blob_names[i] for i in net._inputs] == ["data"]
    assert [net._blob_names[i] for i in net._outputs] == ["prob"]
    assert net.top_names["relu1"] == ["ip1"] and net.bottom_names["ip2"] == ["ip1"]
    weights, bias = net.params["conv1"]
    assert weights.shape == (20, 1, 5, 5) and weights.data.shape == (20, 1, 5, 5)
    assert bias.count == 20 and bias.data.dtype == np.float32
    assert net.blobs["conv1"].shape == (1, 20, 24, 24)


def test_forward_returns_outputs_and_named_blobs(deploy):
    net = demitasse.Net(deploy, demitasse.TEST)
    image = random_image()
    out = net.forward(data=image)
    assert set(out) == {"prob"}
    np.testing.assert_array_equal(net.blobs["data"].data, image)
    assert out["prob"].shape == (1, 10)
    assert out["prob"].sum() == pytest.approx(1, rel=1e-5)
    # Softmax of ip2, computed here.
    logits = net.blobs["ip2"].data[0].astype(np.float64)
    expected = np.exp(logits - logits.max()) / np.exp(logits - logits.max()).sum()
    np.testing.assert_allclose(out["prob"][0], expected, rtol=1e-5)
    partial = net.forward(start="conv1", end="ip1", blobs=["pool1"])
    assert set(partial) == {"ip1", "pool1"}


def test_weight_edits_through_params_change_forward(deploy):
    net = demitasse.Net(deploy, demitasse.TEST)
    image = random_image(1)
    before = net.forward(data=image, blobs=["ip2"])["ip2"].copy()
    # ip2 is linear in its bias: adding 0.5 to class 3's bias adds 0.5 to its score.
    net.params["ip2"][1].data[3] += 0.5
    after = net.forward(data=image, blobs=["ip2"])["ip2"]
    shift = np.zeros(10, dtype=np.float32)
    shift[3] = 0.5
    np.testing.assert_allclose(after[0], before[0] + shift, rtol=1e-5, atol=1e-6)
    # Zero conv1 entirely: everything after it sees zeros, ip2 gives its bias.
    for blob in net.params["conv1"]:
        blob.data[...] = 0
    net.forward(data=image)
    assert not net.blobs["conv1"].data.any()
    np.testing.assert_allclose(net.blobs["ip2"].data[0], net.params["ip2"][1].data, atol=1e-6)


def test_views_are_zero_copy_and_persist(deploy):
    net = demitasse.Net(deploy, demitasse.TEST)
    view = net.blobs["conv1"].data
    weights = net.params["conv1"][0].data
    assert address(view) == address(net.blobs["conv1"].data)
    net.forward(data=random_image(2))
    # Every blob is kept: after the whole pass conv1 still holds what conv1
    # computed (no later layer reused its memory), as a pass ending there shows.
    assert address(net.blobs["conv1"].data) == address(view)
    after_whole_pass = view.copy()
    net.forward(end="conv1")
    np.testing.assert_array_equal(after_whole_pass, view)
    assert view.any()
    assert address(net.params["conv1"][0].data) == address(weights)
    assert view.flags.writeable and view.flags.c_contiguous


def test_backward_gives_input_gradients(tmp_path, deploy):
    # No loss layer: force_backward makes every layer run backward, as
    # pycaffe users do for saliency maps.
    forced = tmp_path / "forced.prototxt"
    forced.write_text(deploy.read_text() + "\nforce_backward: true\n")
    net = demitasse.Net(forced, demitasse.TRAIN)
    net.forward(data=random_image(3))
    target = np.zeros((1, 10), dtype=np.float32)
    target[0, 4] = 1
    grads = net.backward(prob=target)
    assert set(grads) == {"data"}
    assert grads["data"].shape == (1, 1, 28, 28)
    assert np.abs(grads["data"]).sum() > 0
    assert np.abs(net.params["conv1"][0].diff).sum() > 0
    net.clear_param_diffs()
    assert not net.params["conv1"][0].diff.any()


def test_reshape_changes_the_batch(deploy):
    net = demitasse.Net(deploy, demitasse.TEST)
    net.blobs["data"].reshape(5, 1, 28, 28)
    net.reshape()
    images = random_image(4, batch=5)
    out = net.forward(data=images)
    assert out["prob"].shape == (5, 10)
    single = demitasse.Net(deploy, demitasse.TEST)
    np.testing.assert_allclose(single.forward(data=images[2:3])["prob"][0], out["prob"][2],
                               rtol=1e-5, atol=1e-7)
    with pytest.raises(ValueError, match="batch"):
        net.forward(data=random_image(5, batch=2))


def test_save_and_load_weights_in_every_form(tmp_path, deploy):
    net = demitasse.Net(deploy, demitasse.TEST)
    for blobs in net.params.values():
        blobs[0].data[...] *= 1.5
    image = random_image(6)
    expected = net.forward(data=image)["prob"].copy()
    weights = tmp_path / "scaled.caffemodel"
    net.save(weights)
    for loaded in (demitasse.Net(deploy, demitasse.TEST, weights=weights),
                   demitasse.Net(str(deploy), str(weights), demitasse.TEST),
                   demitasse.Net(deploy, demitasse.TEST, str(weights)),
                   demitasse.Net(deploy, phase=demitasse.TEST, weights=weights, level=0,
                                 stages=[])):
        np.testing.assert_array_equal(loaded.forward(data=image)["prob"], expected)


def test_memory_report(deploy):
    net = demitasse.Net(deploy, demitasse.TRAIN)
    report = net.memory_report()
    assert report["net"] == "LeNet-Fashion" and report["phase"] == "TRAIN"
    assert report["batch"] == 1
    assert report["lower_bound_bytes"] <= report["arena_bytes"] <= report["slots_bytes"]
    assert report["slots_bytes"] <= report["none_bytes"]
    assert report["largest_at_peak"] and report["largest_at_peak"][0]["bytes"] > 0
    assert len(report["live_bytes"]) == 2 * len(net.layers)
    # The report plans as the tools do, keeping inputs and outputs only; this
    # net keeps every blob, so it holds the data and diff of all the others too.
    others = [name for name in net.blobs if name not in net.inputs + net.outputs]
    others_bytes = sum(2 * 4 * net.blobs[name].count for name in others)
    assert report["held"]["persistent_bytes"] - report["persistent_bytes"] >= others_bytes
    assert "LeNet-Fashion" in report["text"]
    engines = {row["layer"]: row for row in report["engines"]}
    assert list(engines) == list(net.layer_dict)
    assert engines["conv1"]["engine"] == "DNNL" and engines["conv1"]["types"] == "FLOAT"
    assert "engines and types" in report["text"]


def test_precision_sets_the_nets_types_and_says_what_runs(deploy):
    def types(net):
        return {row["layer"]: row["types"] for row in net.memory_report()["engines"]}

    assert set(types(demitasse.Net(deploy, demitasse.TEST, precision="FLOAT")).values()) == {
        "FLOAT"}
    # Each layer runs the narrowest types it has an engine for: oneDNN
    # convolves in bfloat16 (in FLOAT on a CPU without AVX-512, where
    # BFLOAT16 is a storage type) and pools bfloat16 blobs in FLOAT; the
    # others run FLOAT (InnerProduct too: its bfloat16 kernel runs only when
    # a layer asks for it).
    bf16 = types(demitasse.Net(deploy, demitasse.TEST, precision="BFLOAT16"))
    math = "BFLOAT16" if demitasse._demitasse.cpu_computes_bfloat16() else "FLOAT"
    assert bf16["conv1"] == f"forward BFLOAT16 (math {math}), backward BFLOAT16 (math {math})"
    assert bf16["pool1"] == "forward BFLOAT16 (math FLOAT), backward BFLOAT16 (math FLOAT)"
    assert bf16["ip1"] == "FLOAT"
    with pytest.raises(RuntimeError, match="--precision must be FLOAT, FLOAT16 or BFLOAT16"):
        demitasse.Net(deploy, demitasse.TEST, precision="HALF")


def test_bad_files_raise_naming_the_file(tmp_path, deploy):
    with pytest.raises(FileNotFoundError, match="no_such_net.prototxt"):
        demitasse.Net(tmp_path / "no_such_net.prototxt", demitasse.TEST)
    broken = tmp_path / "broken.prototxt"
    broken.write_text('name: "x"\nlayer { name: "data" type: "Input" top: "data"\n')
    with pytest.raises(RuntimeError, match="broken.prototxt"):
        demitasse.Net(broken, demitasse.TEST)
    unknown = tmp_path / "unknown_layer.prototxt"
    unknown.write_text('layer { name: "x" type: "NoSuchLayer" top: "x" }')
    with pytest.raises(RuntimeError, match="NoSuchLayer"):
        demitasse.Net(unknown, demitasse.TEST)
    with pytest.raises(FileNotFoundError, match="absent.caffemodel"):
        demitasse.Net(deploy, demitasse.TEST, weights=tmp_path / "absent.caffemodel")
    garbage = tmp_path / "garbage.caffemodel"
    garbage.write_bytes(b"\xff\xff\xff not a model")
    with pytest.raises(RuntimeError, match="garbage.caffemodel"):
        demitasse.Net(deploy, demitasse.TEST, weights=garbage)
    with pytest.raises(RuntimeError, match="phase"):
        demitasse.Net(deploy, 7)
    with pytest.raises(TypeError, match="phase"):
        demitasse.Net(deploy)


def test_bad_arguments_raise_value_errors(deploy):
    net = demitasse.Net(deploy, demitasse.TEST)
    with pytest.raises(ValueError, match="no layer 'nope'"):
        net.forward(start="nope")
    with pytest.raises(ValueError, match="inputs"):
        net.forward(image=random_image())
    with pytest.raises(ValueError, match="blobs"):
        net.forward(blobs=["nope"])
    with pytest.raises(RuntimeError, match="not a range"):
        net.forward(start="ip2", end="conv1")
    with pytest.raises(RuntimeError, match="negative"):
        net.blobs["data"].reshape(1, -1, 28, 28)


def test_legacy_accessors_of_a_5d_blob_raise_and_the_session_lives(deploy):
    net = demitasse.Net(deploy, demitasse.TEST)
    blob = net.blobs["data"]
    blob.reshape(1, 1, 2, 2, 2)
    for accessor in ("num", "channels", "height", "width"):
        with pytest.raises(RuntimeError, match="at most 4 axes; this one has shape 1 1 2 2 2"):
            getattr(blob, accessor)
    assert blob.shape == (1, 1, 2, 2, 2)
    blob.reshape(1, 1, 28, 28)
    assert (blob.num, blob.channels, blob.height, blob.width) == (1, 1, 28, 28)


def test_stages_select_layers(deploy):
    train_val = deploy.parent / "train_val.prototxt"
    for stages in (["dummy"], "dummy"):
        net = demitasse.Net(str(train_val), demitasse.TRAIN, stages=stages)
        assert net.layers[0].type == "DummyData"
        loss = float(net.forward()["loss"])
        assert 1.5 < loss < 3.5  # about ln(10) at initialisation


SHARED_NET = """
layer { name: "data" type: "Input" top: "data" input_param { shape { dim: 2 dim: 3 } } }
layer { name: "a" type: "InnerProduct" bottom: "data" top: "a"
        param { name: "w" } inner_product_param { num_output: 3 bias_term: false } }
layer { name: "b" type: "InnerProduct" bottom: "a" top: "b"
        param { name: "w" } inner_product_param { num_output: 3 bias_term: false } }
layer { name: "c" type: "InnerProduct" bottom: "b" top: "c" inner_product_param { num_output: 4 } }
"""


def test_hdf5_weights_in_caffe_s_layout(tmp_path, deploy):
    h5py = pytest.importorskip("h5py")
    net = demitasse.Net(str(deploy), demitasse.TEST)
    rng = np.random.default_rng(5)
    for blobs in net.params.values():
        for blob in blobs:
            blob.data[...] = rng.normal(size=blob.shape)
    path = tmp_path / "weights.h5"
    net.save_hdf5(str(path))
    with h5py.File(path, "r") as hdf5:
        # Caffe's layout: data/<every layer>/<param index>, float32.
        assert list(hdf5["data"]) == sorted(layer.name for layer in net.layers)
        assert len(hdf5["data/relu1"]) == 0
        assert hdf5["data/conv1/0"].dtype == np.float32
        np.testing.assert_array_equal(hdf5["data/ip2/1"][...], net.params["ip2"][1].data)
    fresh = demitasse.Net(str(deploy), demitasse.TEST)
    fresh.load_hdf5(str(path))
    # The C++ side (the tools' --weights, Net(prototxt, weights, phase)) reads it too.
    from_cpp = demitasse.Net(str(deploy), str(path), demitasse.TEST)
    for name, blobs in net.params.items():
        for blob, loaded, read in zip(blobs, fresh.params[name], from_cpp.params[name]):
            np.testing.assert_array_equal(loaded.data, blob.data)
            np.testing.assert_array_equal(read.data, blob.data)
    # A file for another net: layers it lacks are skipped, a shape that differs is an error.
    with h5py.File(path, "a") as hdf5:
        hdf5.create_group("data/not_in_the_net").create_dataset("0", data=np.zeros(3))
        del hdf5["data/ip2/1"]
        hdf5["data/ip2"].create_dataset("1", data=np.zeros(9, dtype=np.float32))
    with pytest.raises(ValueError, match=r"param 1 of layer 'ip2' is 10 in the net but 9"):
        fresh.load_hdf5(str(path))
    with pytest.raises(Exception, match=r"cannot copy param 1 of layer 'ip2'"):
        fresh.copy_from(str(path))


def test_cpp_reads_hdf5_weights_by_signature_with_scalar_params(tmp_path):
    """PReLU's shared slope is a 0-axis param, which Caffe writes as a scalar
    dataset; the C++ reader (--weights, Net(prototxt, weights, phase)) takes
    it, and knows HDF5 by its signature, whatever the file's name."""
    h5py = pytest.importorskip("h5py")
    prototxt = tmp_path / "prelu.prototxt"
    prototxt.write_text("""
layer { name: "data" type: "Input" top: "x" input_param { shape { dim: 2 dim: 3 } } }
layer { name: "ip" type: "InnerProduct" bottom: "x" top: "y" inner_product_param { num_output: 4 } }
layer { name: "act" type: "PReLU" bottom: "y" top: "y" prelu_param { channel_shared: true } }
""")
    path = tmp_path / "prelu.caffemodel"  # no .h5
    with h5py.File(path, "w") as hdf5:
        hdf5.create_dataset("data/ip/0", data=np.arange(12, dtype=np.float32).reshape(4, 3))
        hdf5.create_dataset("data/ip/1", data=np.full(4, 0.5, dtype=np.float32))
        hdf5.create_dataset("data/act/0", data=np.float32(0.25))
        hdf5.create_group("data/data")
    net = demitasse.Net(str(prototxt), str(path), demitasse.TEST)
    np.testing.assert_array_equal(net.params["ip"][0].data, np.arange(12).reshape(4, 3))
    np.testing.assert_array_equal(net.params["ip"][1].data, 0.5)
    assert net.params["act"][0].data.shape == () and float(net.params["act"][0].data) == 0.25


def test_hdf5_writes_a_shared_param_once(tmp_path):
    pytest.importorskip("h5py")
    prototxt = tmp_path / "shared.prototxt"
    prototxt.write_text(SHARED_NET)
    net = demitasse.Net(str(prototxt), demitasse.TEST)
    net.params["a"][0].data[...] = np.arange(9).reshape(3, 3)
    net.params["c"][1].data[...] = 7
    path = tmp_path / "shared.h5"
    net.save_hdf5(str(path))
    import h5py
    with h5py.File(path, "r") as hdf5:
        assert "0" in hdf5["data/a"] and "0" not in hdf5["data/b"]
    fresh = demitasse.Net(str(prototxt), demitasse.TEST)
    fresh.load_hdf5(str(path))
    np.testing.assert_array_equal(fresh.params["b"][0].data, np.arange(9).reshape(3, 3))
    np.testing.assert_array_equal(fresh.params["c"][1].data, 7)
    from_cpp = demitasse.Net(str(prototxt), str(path), demitasse.TEST)
    np.testing.assert_array_equal(from_cpp.params["b"][0].data, np.arange(9).reshape(3, 3))
    np.testing.assert_array_equal(from_cpp.params["c"][1].data, 7)


@pytest.mark.parametrize("names", [["inc/conv1", "inc/conv2"], ["conv1", "conv1/bn"],
                                   ["fc/bn", "fc"]])
def test_hdf5_weights_of_layers_named_with_slashes(tmp_path, names):
    # GoogLeNet's inception_3a/1x1 (no layer inception_3a), MobileNet's
    # conv1 and conv1/bn, and a child before its parent: nested groups both
    # ways, and what one side writes the other reads.
    pytest.importorskip("h5py")
    layers = "".join(
        f'layer {{ name: "{name}" type: "InnerProduct" bottom: "{"x" if i == 0 else names[i - 1]}" '
        f'top: "{name}" inner_product_param {{ num_output: 3 weight_filler {{ type: "gaussian" }} '
        f'bias_filler {{ type: "gaussian" }} }} }}\n' for i, name in enumerate(names))
    prototxt = tmp_path / "slashes.prototxt"
    prototxt.write_text('layer { name: "in" type: "Input" top: "x" '
                        'input_param { shape { dim: 2 dim: 3 } } }\n' + layers)
    net = demitasse.Net(str(prototxt), demitasse.TEST)
    path = tmp_path / "slashes.h5"
    net.save_hdf5(str(path))
    fresh = demitasse.Net(str(prototxt), demitasse.TEST)
    fresh.load_hdf5(str(path))
    from_cpp = demitasse.Net(str(prototxt), str(path), demitasse.TEST)
    for name in names:
        for blob, loaded, read in zip(net.params[name], fresh.params[name],
                                      from_cpp.params[name]):
            np.testing.assert_array_equal(loaded.data, blob.data)
            np.testing.assert_array_equal(read.data, blob.data)


def test_forward_all_and_forward_backward_all_batch_any_length(tmp_path, deploy):
    forced = tmp_path / "forced.prototxt"
    forced.write_text(deploy.read_text() + "\nforce_backward: true\n")
    net = demitasse.Net(str(forced), demitasse.TEST)
    net.blobs["data"].reshape(4, 1, 28, 28)
    net.reshape()
    images = random_image(6, batch=10)  # batches of 4, 4 and 2 (padded)
    out = net.forward_all(data=images, blobs=["ip1"])
    assert set(out) == {"prob", "ip1"} and out["prob"].shape == (10, 10)
    assert out["ip1"].shape == (10, 500)
    single = demitasse.Net(str(forced), demitasse.TEST)
    targets = np.eye(10, dtype=np.float32)[np.arange(10) % 10]
    for i in (0, 5, 9):
        np.testing.assert_allclose(out["prob"][i], single.forward(data=images[i:i + 1])["prob"][0],
                                   rtol=1e-5, atol=1e-7)
    outs, diffs = net.forward_backward_all(data=images, prob=targets)
    np.testing.assert_allclose(outs["prob"], out["prob"], rtol=1e-6)
    assert diffs["data"].shape == (10, 1, 28, 28)
    for i in (3, 9):
        single.forward(data=images[i:i + 1])
        expected = single.backward(prob=targets[i:i + 1])["data"][0]
        np.testing.assert_allclose(diffs["data"][i], expected, rtol=1e-4, atol=1e-7)
    with pytest.raises(ValueError, match="different lengths"):
        net.forward_backward_all(data=images, prob=targets[:3])
    with pytest.raises(ValueError, match="label: not inputs"):
        net.forward_all(label=images)


def test_blob_loss_weights(lenet_train):
    net = demitasse.Net(str(lenet_train), demitasse.TRAIN)
    weights = net.blob_loss_weights
    assert list(weights) == list(net.blobs)
    assert weights["loss"] == 1 and weights["ip2"] == 0 and weights["data"] == 0
