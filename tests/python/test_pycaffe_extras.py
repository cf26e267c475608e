"""pycaffe's remaining pieces: Detector, Net.backward_all, Solver.add_callback
and set_solver_count / set_solver_rank (NCCL itself: test_nccl.py)."""
import numpy as np
import pytest

import caffe

IP_NET = """%(extra)s
input: "data" input_shape { dim: 2 dim: 3 dim: 6 dim: 6 }
layer { name: "ip" type: "InnerProduct" bottom: "data" top: "out"
  inner_product_param { num_output: 1 weight_filler { type: "constant" value: %(weight)r } } }
"""


def _write(path, text):
    path.write_text(text)
    return str(path)


def _write_ppm(path, image):
    """H x W x 3 uint8 as a binary PPM, which OpenCV reads."""
    height, width = image.shape[:2]
    path.write_bytes(b"P6\n%d %d\n255\n" % (width, height) + image.tobytes())
    return str(path)


@pytest.fixture
def detector(tmp_path):
    # Its output is the mean of the input: a window's mean value.
    deploy = _write(tmp_path / "deploy.prototxt", IP_NET % {"extra": "", "weight": 1 / 108})
    weights = str(tmp_path / "mean.caffemodel")
    caffe.Net(deploy, caffe.TEST).save(weights)
    return caffe.Detector(deploy, weights, context_pad=1, mean=np.array([127.5] * 3),
                          raw_scale=255)


def test_detector_classifies_windows_in_order(tmp_path):
    deploy = _write(tmp_path / "deploy.prototxt", IP_NET % {"extra": "", "weight": 1 / 108})
    weights = str(tmp_path / "mean.caffemodel")
    caffe.Net(deploy, caffe.TEST).save(weights)
    detector = caffe.Detector(deploy, weights)
    image = np.full((20, 30, 3), 204, np.uint8)  # 0.8
    image[:10, :15] = 51  # 0.2 in the top-left quarter
    path = _write_ppm(tmp_path / "image.ppm", image)
    windows = [[0, 0, 10, 15], [10, 15, 20, 30], [10, 0, 20, 15]]  # three: two batches of 2
    detections = detector.detect_windows([(path, windows)])
    assert [list(d["window"]) for d in detections] == windows
    assert all(d["filename"] == path for d in detections)
    np.testing.assert_allclose([d["prediction"][0] for d in detections], [0.2, 0.8, 0.8],
                               atol=1e-4)


def test_detector_context_pad_fills_outside_the_image_with_the_mean(detector):
    image = np.full((20, 30, 3), 0.8, np.float32)
    crop = detector.crop(image, [0, 0, 20, 30])  # grown by 6 / 4: past every edge
    assert crop.shape == (6, 6, 3)
    np.testing.assert_allclose(crop[1:5, 1:5], 0.8, atol=1e-6)
    ring = np.ones((6, 6), bool)
    ring[1:5, 1:5] = False
    np.testing.assert_allclose(crop[ring], 0.5, atol=1e-6)  # mean 127.5 / raw_scale 255


def test_backward_all_batches_any_length(tmp_path):
    net = caffe.Net(_write(tmp_path / "ip.prototxt",
                           IP_NET % {"extra": "force_backward: true", "weight": 0.5}), caffe.TEST)
    net.forward()
    diffs = np.arange(5, dtype=np.float32).reshape(5, 1)  # 5 items, batch 2: padded
    result = net.backward_all(out=diffs)
    assert result["data"].shape == (5, 3, 6, 6)
    np.testing.assert_allclose(result["data"], 0.5 * diffs.reshape(5, 1, 1, 1) *
                               np.ones((5, 3, 6, 6)), rtol=1e-6)


def _solver(tmp_path):
    net = _write(tmp_path / "train.prototxt", """
        layer { name: "data" type: "DummyData" top: "x" top: "y"
          dummy_data_param { shape { dim: 2 dim: 3 } shape { dim: 2 dim: 1 }
            data_filler { type: "constant" value: 1 } data_filler { type: "constant" value: 0 } } }
        layer { name: "ip" type: "InnerProduct" bottom: "x" top: "ip"
          inner_product_param { num_output: 1 weight_filler { type: "constant" value: 1 } } }
        layer { name: "loss" type: "EuclideanLoss" bottom: "ip" bottom: "y" top: "loss" }""")
    return caffe.SGDSolver(_write(tmp_path / "solver.prototxt", f"""
        net: "{net}" base_lr: 0.1 lr_policy: "fixed" max_iter: 10 display: 0
        snapshot_prefix: "{tmp_path}/s" """))


def test_solver_callbacks_run_each_iteration_before_the_update(tmp_path):
    solver = _solver(tmp_path)
    events = []
    weights = solver.net.params["ip"][0]
    solver.add_callback(lambda: events.append(("start", float(weights.data[0, 0]))),
                        lambda: events.append(("gradients", float(weights.diff[0, 0]))))
    solver.step(2)
    assert [name for name, _ in events] == ["start", "gradients", "start", "gradients"]
    # The gradient of iteration 1 (ip = 3, target 0): 3 per weight; then the update.
    assert events[0][1] == 1.0 and events[1][1] == pytest.approx(3.0)
    assert events[2][1] == pytest.approx(1.0 - 0.1 * 3.0)


def test_a_callback_exception_stops_the_step(tmp_path):
    solver = _solver(tmp_path)

    def fail():
        raise KeyError("stop here")

    solver.add_callback(lambda: None, fail)
    with pytest.raises(RuntimeError, match="on_gradients_ready raised KeyError: 'stop here'"):
        solver.step(1)


def test_solver_count_and_rank_are_checked_and_read_back():
    assert caffe.has_nccl()  # test_nccl.py trains with it
    caffe.set_solver_count(2)
    try:
        caffe.set_solver_rank(1)
        caffe.set_multiprocess(True)
        assert (caffe.solver_count(), caffe.solver_rank()) == (2, 1)
        with pytest.raises(ValueError, match="outside 0 to 1"):
            caffe.set_solver_rank(2)
    finally:
        caffe.set_solver_count(1)
        caffe.set_solver_rank(0)
        caffe.set_multiprocess(False)
