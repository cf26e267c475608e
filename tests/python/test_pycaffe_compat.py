"""`import demitasse as caffe`: the calls of Caffe's example notebooks
(classification, feature extraction, net surgery, a training loop)."""
import numpy as np
import pytest

import demitasse as caffe
from conftest import BATCH


def test_classification_notebook(deploy):
    caffe.set_mode_cpu()
    net = caffe.Net(str(deploy), caffe.TEST)
    transformer = caffe.io.Transformer({"data": net.blobs["data"].data.shape})
    transformer.set_transpose("data", (2, 0, 1))
    transformer.set_raw_scale("data", 1.0)
    image = np.random.default_rng(0).uniform(0, 1, size=(32, 32, 1)).astype(np.float32)
    net.blobs["data"].reshape(1, 1, 28, 28)
    net.blobs["data"].data[...] = transformer.preprocess("data", image)
    output = net.forward()
    probabilities = output["prob"][0]
    assert probabilities.argmax() == np.argmax(net.blobs["prob"].data[0])
    top = probabilities.argsort()[::-1][:5]
    assert len(top) == 5 and probabilities[top[0]] >= probabilities[top[4]]
    # The shapes of every layer's output and params, as the notebook prints them.
    shapes = {name: blob.data.shape for name, blob in net.blobs.items()}
    assert shapes["pool2"] == (1, 50, 4, 4)
    params = {name: (p[0].data.shape, p[1].data.shape) for name, p in net.params.items()}
    assert params["ip1"] == ((500, 800), (500,))


def test_feature_extraction(deploy):
    net = caffe.Net(str(deploy), caffe.TEST)
    images = np.random.default_rng(1).uniform(0, 1, size=(3, 1, 28, 28)).astype(np.float32)
    features = []
    for image in images:
        net.blobs["data"].data[...] = image
        net.forward()
        features.append(net.blobs["ip1"].data.copy())
    # ip1's features are what ip1 and its in-place ReLU computed, kept after
    # the pass: relu(W x + b) of pool2, here in numpy.
    pool2 = net.forward(end="pool2")["pool2"].reshape(1, -1).astype(np.float64)
    weights, bias = (blob.data.astype(np.float64) for blob in net.params["ip1"])
    np.testing.assert_allclose(features[2], np.maximum(pool2 @ weights.T + bias, 0),
                               rtol=1e-4, atol=1e-5)
    assert not np.array_equal(features[0], features[1])
    # The same image again gives the same features.
    net.blobs["data"].data[...] = images[0]
    net.forward()
    np.testing.assert_array_equal(net.blobs["ip1"].data, features[0])


def test_net_surgery_copies_params_between_nets(tmp_path, deploy):
    source = caffe.Net(str(deploy), caffe.TEST)
    rng = np.random.default_rng(2)
    for blobs in source.params.values():
        for blob in blobs:
            blob.data[...] = rng.normal(0, 0.1, size=blob.data.shape)
    target = caffe.Net(str(deploy), caffe.TEST)
    image = rng.uniform(0, 1, size=(1, 1, 28, 28)).astype(np.float32)
    assert not np.allclose(target.forward(data=image)["prob"], source.forward(data=image)["prob"])
    for name in source.params:
        for i, blob in enumerate(source.params[name]):
            target.params[name][i].data[...] = blob.data
    np.testing.assert_array_equal(target.forward(data=image)["prob"],
                                  source.forward(data=image)["prob"])
    # Saved and reloaded, the edited net is the same net.
    path = tmp_path / "surgery.caffemodel"
    target.save(str(path))
    reloaded = caffe.Net(str(deploy), str(path), caffe.TEST)
    np.testing.assert_array_equal(reloaded.forward(data=image)["prob"],
                                  source.forward(data=image)["prob"])
    # share_with: one net's params become the other's memory.
    shared = caffe.Net(str(deploy), caffe.TEST)
    shared.share_with(source)
    source.params["ip2"][1].data[0] = 42
    assert shared.params["ip2"][1].data[0] == 42


def test_training_loop(make_solver_file, prototypes):
    solver = caffe.SGDSolver(str(make_solver_file()))
    test_net = solver.test_nets[0]
    losses = []
    for _ in range(30):
        solver.net.blobs["data"].data[...], solver.net.blobs["label"].data[...] = \
            prototypes.batch(BATCH)
        solver.step(1)
        losses.append(float(solver.net.blobs["loss"].data))
    test_net.blobs["data"].data[...], test_net.blobs["label"].data[...] = prototypes.batch(BATCH)
    test_net.forward()
    assert float(test_net.blobs["accuracy"].data) > 0.3  # chance is 0.1
    assert np.mean(losses[-5:]) < np.mean(losses[:5])


def test_gpu_mode_is_refused_clearly_without_a_gpu():
    if caffe._demitasse.built_with_cuda and caffe._demitasse.device_count() > 0:
        pytest.skip("this machine has a GPU: gpu_test covers it")
    with pytest.raises(RuntimeError, match="set_mode_cpu|CPU_ONLY"):
        caffe.set_mode_gpu()
    with pytest.raises(RuntimeError):
        caffe.set_device(0)
    caffe.set_mode_cpu()


def test_gpu_net_matches_the_cpu_net(deploy):
    if not (caffe._demitasse.built_with_cuda and caffe._demitasse.device_count() > 0):
        pytest.skip("no CUDA device")
    image = np.random.default_rng(3).uniform(0, 1, size=(1, 1, 28, 28)).astype(np.float32)
    cpu = caffe.Net(str(deploy), caffe.TEST)
    expected = cpu.forward(data=image)["prob"].copy()
    caffe.set_device(0)
    caffe.set_mode_gpu()
    try:
        gpu = caffe.Net(str(deploy), caffe.TEST)
        np.testing.assert_allclose(gpu.forward(data=image)["prob"], expected, rtol=1e-4,
                                   atol=1e-6)
        # An edit through numpy reaches the GPU's copy on the next pass.
        gpu.params["ip2"][1].data[...] += 1.0
        cpu.params["ip2"][1].data[...] += 1.0
        np.testing.assert_allclose(gpu.forward(data=image)["prob"],
                                   cpu.forward(data=image)["prob"], rtol=1e-4, atol=1e-6)
    finally:
        caffe.set_mode_cpu()


def test_classifier_predicts_from_crops(deploy):
    """caffe.Classifier: resize, ten crops (or the centre), preprocess,
    forward, average, checked against the same steps done by hand."""
    rng = np.random.default_rng(7)
    classifier = caffe.Classifier(str(deploy), None, image_dims=(32, 32), raw_scale=2.0,
                                  mean=np.array([0.5]))
    net = caffe.Net(str(deploy), caffe.TEST)
    for name in net.params:
        for i, blob in enumerate(net.params[name]):
            blob.data[...] = classifier.params[name][i].data
    images = [rng.uniform(0, 1, size=(32, 32, 1)).astype(np.float32) for _ in range(2)]

    def by_hand(crop):
        return net.forward(data=(crop.transpose(2, 0, 1)[np.newaxis] * 2.0 - 0.5))["prob"][0].copy()

    centre = classifier.predict(images, oversample=False)
    assert centre.shape == (2, 10)
    np.testing.assert_allclose(centre[1], by_hand(images[1][2:30, 2:30]), rtol=1e-5, atol=1e-7)
    ten = classifier.predict(images)
    assert ten.shape == (2, 10)
    crops = caffe.io.oversample(images, (28, 28))
    expected = np.mean([by_hand(crop) for crop in crops[10:]], axis=0)
    np.testing.assert_allclose(ten[1], expected, rtol=1e-5, atol=1e-7)
    assert not np.allclose(ten[1], centre[1])


def test_set_random_seed_fixes_initial_weights(make_solver_file, deploy):
    def conv1(owner):
        net = owner.net if isinstance(owner, caffe.Solver) else owner
        return net.params["conv1"][0].data.copy()

    seeded_file = make_solver_file()  # random_seed: 1701 in the file
    unseeded_file = seeded_file.with_name("unseeded.prototxt")
    unseeded_file.write_text(seeded_file.read_text().replace("random_seed: 1701", ""))
    try:
        caffe.set_random_seed(5)
        nets = [conv1(caffe.Net(str(deploy), caffe.TEST)) for _ in range(2)]
        solvers = [conv1(caffe.SGDSolver(str(unseeded_file))) for _ in range(2)]
        file_seeded = conv1(caffe.SGDSolver(str(seeded_file)))
        caffe.set_random_seed(6)
        np.testing.assert_array_equal(nets[0], nets[1])
        assert not np.array_equal(nets[0], conv1(caffe.Net(str(deploy), caffe.TEST)))
        np.testing.assert_array_equal(solvers[0], solvers[1])
        assert not np.array_equal(solvers[0], conv1(caffe.SGDSolver(str(unseeded_file))))
        # A solver whose file gives random_seed keeps it.
        np.testing.assert_array_equal(file_seeded, conv1(caffe.SGDSolver(str(seeded_file))))
        with pytest.raises(ValueError, match="outside"):
            caffe.set_random_seed(-1)
    finally:
        caffe.set_random_seed(None)
