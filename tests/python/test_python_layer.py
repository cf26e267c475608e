"""Python layers (type "Python"): run from Python nets and solvers, and from
build/tools/train, which embeds the interpreter. The layers are in
pylayers.py. The whole module skips on a build without Python layers (the
C++ test PythonLayerBuildTest covers that build's error)."""
import os
import subprocess

import numpy as np
import pytest

import caffe

pytestmark = pytest.mark.skipif("Python" not in caffe.layer_type_list(),
                                reason="built without Python layers (WITH_PYTHON_LAYER=0)")

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# y = ip2(0.5 * ip(x)) fitted to a constant target; the Python Scale layer
# sits between two planned InnerProducts, the Python loss at the end.
REGRESSION = """
name: "regress"
layer { name: "data" type: "DummyData" top: "x" top: "y"
  dummy_data_param { shape { dim: 8 dim: 4 } shape { dim: 8 dim: 2 }
    data_filler { type: "constant" value: 1 } data_filler { type: "constant" value: 0.5 } } }
layer { name: "ip" type: "InnerProduct" bottom: "x" top: "ip"
  inner_product_param { num_output: 3 weight_filler { type: "gaussian" std: 0.5 } } }
layer { name: "scale" type: "Python" bottom: "ip" top: "scaled"
  python_param { module: "pylayers" layer: "Scale" param_str: "0.5" } }
layer { name: "ip2" type: "InnerProduct" bottom: "scaled" top: "out"
  inner_product_param { num_output: 2 weight_filler { type: "gaussian" std: 0.5 } } }
layer { name: "loss" type: "%(loss)s" bottom: "out" bottom: "y" top: "loss" loss_weight: 1
  %(python_param)s }
"""
PY_LOSS = {"loss": "Python", "python_param":
           'python_param { module: "pylayers" layer: "EuclideanLoss" }'}

SOLVER = """
net: "%(net)s"
base_lr: 0.05
lr_policy: "fixed"
display: 1
max_iter: %(iters)d
snapshot_prefix: "%(prefix)s"
random_seed: 7
memory_optimization: %(plan)s
"""


def _write(path, text):
    with open(path, "w") as f:
        f.write(text)
    return str(path)


def _solver(tmp_path, net_text, plan="ARENA", iters=6, tag="run"):
    net = _write(tmp_path / f"{tag}_net.prototxt", net_text)
    return _write(tmp_path / f"{tag}_solver.prototxt",
                  SOLVER % {"net": net, "iters": iters, "prefix": tmp_path / tag, "plan": plan})


def _train_tool():
    for build in filter(None, [os.environ.get("DEMI_BUILD_DIR"), "build", "build_cpu"]):
        path = os.path.join(ROOT, build, "tools", "train")
        if os.access(path, os.X_OK):
            return path
    pytest.fail("no build/tools/train (nor build_cpu/, nor $DEMI_BUILD_DIR/): run make all")


def _run_train(solver):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.join(ROOT, "python"), HERE]),
               GLOG_minloglevel="0", GLOG_logtostderr="1")
    return subprocess.run([_train_tool(), "--solver=" + solver], env=env, capture_output=True,
                          text=True, timeout=120)


def _losses(log):
    return [float(line.split("loss = ")[1].split()[0]) for line in log.splitlines()
            if "Iteration" in line and "loss = " in line]


def test_param_str_reaches_the_layer_and_phase_is_the_nets(tmp_path):
    net_file = _write(tmp_path / "scale.prototxt", """
        input: "data" input_shape { dim: 2 dim: 3 }
        layer { name: "scale" type: "Python" bottom: "data" top: "scaled"
          python_param { module: "pylayers" layer: "Scale" param_str: "2.5" } }
        layer { name: "phase" type: "Python" top: "phase"
          python_param { module: "pylayers" layer: "Phase" } }""")
    for phase in (caffe.TRAIN, caffe.TEST):
        net = caffe.Net(net_file, phase)
        data = np.arange(6, dtype=np.float32).reshape(2, 3)
        out = net.forward(data=data)
        np.testing.assert_array_equal(out["scaled"], 2.5 * data)
        assert out["phase"][0] == phase


def test_python_loss_gives_the_builtin_euclidean_loss_and_gradients(tmp_path):
    nets = []
    for loss in (PY_LOSS, {"loss": "EuclideanLoss", "python_param": ""}):
        text = "force_backward: true\n" + REGRESSION % loss
        nets.append(caffe.Net(_write(tmp_path / f"{loss['loss']}.prototxt", text), caffe.TRAIN))
    python_net, builtin_net = nets
    for name in ("ip", "ip2"):
        for ours, theirs in zip(python_net.params[name], builtin_net.params[name]):
            theirs.data[...] = ours.data
    python_loss = python_net.forward()["loss"].flat[0]
    builtin_loss = builtin_net.forward()["loss"].flat[0]
    assert python_loss > 0.01
    np.testing.assert_allclose(python_loss, builtin_loss, rtol=1e-5)
    for net in nets:
        net.clear_param_diffs()
        net.backward()
    for name in ("ip", "ip2"):
        for ours, theirs in zip(python_net.params[name], builtin_net.params[name]):
            assert np.abs(theirs.diff).max() > 0
            np.testing.assert_allclose(ours.diff, theirs.diff, rtol=1e-4, atol=1e-7)


def test_trains_from_python(tmp_path):
    solver = caffe.SGDSolver(_solver(tmp_path, REGRESSION % PY_LOSS))
    losses = []
    for _ in range(6):
        solver.step(1)
        losses.append(float(solver.net.blobs["loss"].data[0]))
    assert losses[-1] < 0.5 * losses[0], losses


def test_trains_from_the_train_tool(tmp_path):
    result = _run_train(_solver(tmp_path, REGRESSION % PY_LOSS))
    assert result.returncode == 0, result.stderr[-2000:]
    losses = _losses(result.stderr)
    assert len(losses) >= 5 and losses[-1] < 0.5 * losses[0], losses


def test_planned_and_unplanned_train_the_same_weights(tmp_path):
    weights = []
    for plan in ("NONE", "ARENA"):
        result = _run_train(_solver(tmp_path, REGRESSION % PY_LOSS, plan=plan, iters=4, tag=plan))
        assert result.returncode == 0, result.stderr[-2000:]
        with open(tmp_path / f"{plan}_iter_4.caffemodel", "rb") as f:
            weights.append(f.read())
    assert weights[0] == weights[1]


def test_an_exception_in_forward_names_the_layer(tmp_path):
    net_file = _write(tmp_path / "fails.prototxt", """
        input: "data" input_shape { dim: 8 dim: 3 }
        layer { name: "boom" type: "Python" bottom: "data" top: "out"
          python_param { module: "pylayers" layer: "FailsInForward" } }""")
    net = caffe.Net(net_file, caffe.TEST)
    with pytest.raises(RuntimeError, match=r"layer 'boom' \(pylayers.FailsInForward\): forward "
                                           r"raised ValueError: no batch of 8 today"):
        net.forward()
    # The net survives: the next pass raises again rather than crashing.
    with pytest.raises(RuntimeError, match="no batch of 8"):
        net.forward()


def test_an_exception_stops_the_train_tool_with_one_line(tmp_path):
    net_text = REGRESSION % PY_LOSS
    net_text = net_text.replace('layer: "Scale" param_str: "0.5"', 'layer: "FailsInForward"')
    result = _run_train(_solver(tmp_path, net_text))
    assert result.returncode == 1
    lines = [line for line in result.stderr.splitlines() if "FailsInForward" in line]
    assert len(lines) == 1, result.stderr[-2000:]
    assert "layer 'scale'" in lines[0] and "ValueError: no batch of 8 today" in lines[0]


def test_a_missing_module_names_it(tmp_path):
    net_file = _write(tmp_path / "missing.prototxt", """
        input: "data" input_shape { dim: 1 }
        layer { name: "gone" type: "Python" bottom: "data" top: "out"
          python_param { module: "no_such_module_here" layer: "X" } }""")
    with pytest.raises(RuntimeError, match="ModuleNotFoundError.*no_such_module_here"):
        caffe.Net(net_file, caffe.TEST)


# A variable-size Python data layer feeding planned layers: a convolution
# (whose output follows the image's size), pooling and a summed loss.
VARIABLE_SIZE = """
name: "variable"
force_backward: true
%(data)s
layer { name: "conv" type: "Convolution" bottom: "data" top: "conv"
  convolution_param { num_output: 4 kernel_size: 3 pad: 1
                      weight_filler { type: "gaussian" std: 0.3 } } }
layer { name: "pool" type: "Pooling" bottom: "conv" top: "pool"
  pooling_param { pool: MAX kernel_size: 2 stride: 2 } }
layer { name: "loss" type: "Reduction" bottom: "pool" top: "loss" loss_weight: 1
  reduction_param { operation: SUMSQ } }
"""
PYTHON_DATA = ('layer { name: "data" type: "Python" top: "data" '
               'python_param { module: "pylayers" layer: "%s" } }')
INPUT_DATA = ('layer { name: "data" type: "Input" top: "data" '
              'input_param { shape { dim: 1 dim: 3 dim: %d dim: %d } } }')


@pytest.mark.parametrize("layer", ["ImagesInReshape", "ImagesInForward"])
def test_a_python_data_layer_may_change_its_tops_shape_at_every_forward(tmp_path, layer):
    import pylayers
    net = caffe.Net(_write(tmp_path / "net.prototxt",
                           VARIABLE_SIZE % {"data": PYTHON_DATA % layer}), caffe.TRAIN)
    weights = net.params["conv"][0].data.copy(), net.params["conv"][1].data.copy()
    passes = 2 * len(pylayers.SIZES)
    for i in range(passes):
        for param in net.params["conv"]:
            param.diff[...] = 0  # backward adds into them, as Caffe's
        net.forward()
        net.backward()
        image = pylayers.image(i)
        # The same pass on a net made for this image's size.
        reference = caffe.Net(_write(tmp_path / "reference.prototxt", VARIABLE_SIZE % {
            "data": INPUT_DATA % image.shape[2:]}), caffe.TRAIN)
        reference.params["conv"][0].data[...], reference.params["conv"][1].data[...] = weights
        reference.blobs["data"].data[...] = image
        reference.forward()
        reference.backward()
        np.testing.assert_array_equal(net.blobs["data"].data, image)
        assert net.blobs["pool"].data.shape == reference.blobs["pool"].data.shape, i
        np.testing.assert_allclose(net.blobs["loss"].data, reference.blobs["loss"].data,
                                   rtol=1e-5)
        for k in range(2):
            np.testing.assert_allclose(net.params["conv"][k].diff,
                                       reference.params["conv"][k].diff, rtol=1e-4, atol=1e-5)
    if layer == "ImagesInReshape":
        # As Caffe: reshape() once at set-up, then before every forward().
        # net.layers[0] is the layer's own object, as in pycaffe.
        assert isinstance(net.layers[0], pylayers.ImagesInReshape)
        assert net.layers[0].calls == {"reshape": 1 + passes, "forward": passes}
        assert (net.layers[0].name, net.layers[0].type) == ("data", "Python")


def test_a_variable_size_python_data_layer_trains_on_each_image(tmp_path):
    # FCN's pattern through a solver: every iteration reads its own image,
    # not the first one again, and the planned net follows its size.
    import pylayers
    net = _write(tmp_path / "net.prototxt",
                 VARIABLE_SIZE % {"data": PYTHON_DATA % "ImagesInReshape"})
    solver = caffe.SGDSolver(_write(tmp_path / "solver.prototxt", SOLVER % {
        "net": net, "iters": 5, "prefix": tmp_path / "run", "plan": "ARENA"}))
    for i in range(len(pylayers.SIZES) + 1):
        solver.step(1)
        image = pylayers.image(i)
        np.testing.assert_array_equal(solver.net.blobs["data"].data, image)
        assert solver.net.blobs["conv"].data.shape[2:] == image.shape[2:]


def test_a_growing_python_data_layer_trains_alike_planned_and_unplanned(tmp_path):
    # From the train tool the net is planned (Python's own nets keep every
    # blob): blobs that outgrow their plan take memory of their own for the
    # pass, the next pass re-plans, and the losses are the unplanned run's.
    # A mean, not SUMSQ: at base_lr 0.05 its gradient stays bounded.
    net = _write(tmp_path / "net.prototxt", VARIABLE_SIZE.replace("SUMSQ", "MEAN") % {
        "data": PYTHON_DATA % "ImagesInForward"})
    logs = {}
    for plan in ("ARENA", "NONE"):
        solver = _write(tmp_path / f"{plan}_solver.prototxt", SOLVER % {
            "net": net, "iters": 12, "prefix": tmp_path / plan, "plan": plan})
        result = _run_train(solver)
        assert result.returncode == 0, result.stderr[-3000:]
        logs[plan] = result.stderr
    losses = _losses(logs["ARENA"])
    assert len(losses) == 13 and len(set(losses)) > 5, losses  # and Solve's last line
    assert losses == _losses(logs["NONE"])
    # Planned at set-up, then again after each pass that grew a blob.
    plans = logs["ARENA"].count("Memory plan (ARENA) for net 'variable'")
    assert plans >= 3, logs["ARENA"][-3000:]


def test_layers_after_a_changed_shape_are_reshaped_just_before_they_run(tmp_path):
    # Data and labels from two Python layers that size their tops in
    # forward(): the loss is reshaped after both ran (reshaped after the
    # first alone, its label count would not match), and the label layer's
    # reshape() runs once a pass, as in Caffe.
    import pylayers
    net = caffe.Net(_write(tmp_path / "net.prototxt", """
layer { name: "data" type: "Python" top: "data"
  python_param { module: "pylayers" layer: "ImagesInForward" } }
layer { name: "label" type: "Python" top: "label"
  python_param { module: "pylayers" layer: "LabelsInForward" } }
layer { name: "conv" type: "Convolution" bottom: "data" top: "conv"
  convolution_param { num_output: 4 kernel_size: 3 pad: 1 weight_filler { type: "gaussian" } } }
layer { name: "loss" type: "SoftmaxWithLoss" bottom: "conv" bottom: "label" top: "loss" }
"""), caffe.TRAIN)
    passes = len(pylayers.SIZES) + 1
    for i in range(passes):
        net.forward()
        assert net.blobs["label"].data.shape[2:] == pylayers.image(i).shape[2:]
        assert np.isfinite(net.blobs["loss"].data).all()
    assert net.layers[1].reshapes == 1 + passes


def test_a_loss_top_that_grows_keeps_its_loss_weight(tmp_path):
    # The loss weight lives in the top's diff: a top reshaped past its
    # capacity gets fresh memory, seeded again before the layer's loss is
    # weighed with it.
    import pylayers
    net = _write(tmp_path / "net.prototxt", """
layer { name: "loss" type: "Python" top: "loss" loss_weight: 2
  python_param { module: "pylayers" layer: "GrowingLoss" } }
""")
    solver = caffe.SGDSolver(_write(tmp_path / "solver.prototxt", SOLVER % {
        "net": net, "iters": 8, "prefix": tmp_path / "run", "plan": "ARENA"}))
    for i in range(8):
        solver.step(1)
        length = pylayers.GrowingLoss.LENGTHS[i % 4]
        assert solver.smoothed_loss == pytest.approx(2.0 * length), i
