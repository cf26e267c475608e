"""Training through demitasse.Solver: loss falls, views stay valid across
steps, snapshots restore, typed solvers and errors."""
import os
import signal
import threading

import numpy as np
import pytest

import demitasse
from conftest import BATCH


def address(array):
    return array.__array_interface__["data"][0]


def train(solver, prototypes, iters):
    """Feeds a fresh batch before each step, pycaffe style; returns the
    losses the train net computed."""
    data = solver.net.blobs["data"].data
    label = solver.net.blobs["label"].data
    losses = []
    for _ in range(iters):
        data[...], label[...] = prototypes.batch(len(data))
        solver.step(1)
        losses.append(float(solver.net.blobs["loss"].data))
    return losses


def test_lenet_trains_100_iterations_and_the_loss_falls(make_solver_file, prototypes):
    solver = demitasse.SGDSolver(str(make_solver_file()))
    losses = train(solver, prototypes, 100)
    assert solver.iter == 100
    first, last = np.mean(losses[:10]), np.mean(losses[-10:])
    assert first > 1.5, losses[:10]  # about ln(10) untrained
    assert last < 0.5 * first, (first, last)


def test_apply_update_updates_from_the_gradients_held(make_solver_file):
    """pycaffe's apply_update: the rule applied to gradients set by hand, at
    this iteration's rate, without a pass and without advancing."""
    solver = demitasse.SGDSolver(str(make_solver_file()))
    weights = solver.net.params["ip2"][0]
    weights.data[...] = 0
    for blobs in solver.net.params.values():
        for blob in blobs:
            blob.diff[...] = 0
    weights.diff[...] = 1
    solver.apply_update()
    base_lr = 0.01
    np.testing.assert_allclose(weights.data, -base_lr, rtol=1e-6)
    assert solver.iter == 0


def test_views_are_zero_copy_and_stay_valid_across_step(make_solver_file, prototypes):
    solver = demitasse.get_solver(make_solver_file())
    weights = solver.net.params["conv1"][0]
    view = weights.data
    diff_view = weights.diff
    before = view.copy()
    data_address = address(solver.net.blobs["data"].data)
    train(solver, prototypes, 5)
    # The params did not move: the old view is the new one and shows the update.
    assert address(weights.data) == address(view)
    assert address(weights.diff) == address(diff_view)
    assert address(solver.net.blobs["data"].data) == data_address
    assert not np.array_equal(view, before)
    np.testing.assert_array_equal(view, solver.net.params["conv1"][0].data)
    # The test net shares the train net's params, memory included.
    assert address(solver.test_nets[0].params["conv1"][0].data) == address(view)


def test_numpy_writes_reach_the_solver(make_solver_file, prototypes):
    solver = demitasse.SGDSolver(make_solver_file())
    train(solver, prototypes, 3)
    # Every weight and bias zeroed through numpy: every class scores 0, so
    # the C++ forward gives a loss of ln(10) whatever the input.
    for blobs in solver.net.params.values():
        for blob in blobs:
            blob.data[...] = 0
    solver.net.blobs["data"].data[...] = prototypes.batch(BATCH)[0]
    solver.net.forward()
    assert float(solver.net.blobs["loss"].data) == pytest.approx(np.log(10), rel=1e-5)


def test_every_solver_type_runs(make_solver_file, prototypes):
    for solver_class, solver_type in [(demitasse.SGDSolver, "SGD"),
                                      (demitasse.NesterovSolver, "Nesterov"),
                                      (demitasse.AdamSolver, "Adam")]:
        # The class wins over the file's type, as in pycaffe.
        solver = solver_class(make_solver_file("AdaGrad"))
        assert solver.type == solver_type
        train(solver, prototypes, 2)
        assert solver.iter == 2
    adam = demitasse.get_solver(make_solver_file("Adam"))
    assert adam.type == "Adam"
    assert isinstance(adam, demitasse.AdamSolver)  # as pycaffe's get_solver gives
    assert isinstance(demitasse.get_solver(make_solver_file("SGD")), demitasse.SGDSolver)


def test_an_unknown_solver_type_names_the_solver_file(make_solver_file):
    path = make_solver_file("Lion")
    with pytest.raises(RuntimeError) as error:
        demitasse.get_solver(path)
    assert f"{path}: unknown solver type 'Lion'; known types: AdaDelta" in str(error.value)


def test_snapshot_and_restore(tmp_path, make_solver_file, prototypes):
    solver = demitasse.Solver(make_solver_file())
    train(solver, prototypes, 4)
    solver.snapshot()
    saved = solver.net.params["ip2"][0].data.copy()
    assert (tmp_path / "lenet_iter_4.caffemodel").is_file()
    train(solver, prototypes, 2)
    assert not np.array_equal(solver.net.params["ip2"][0].data, saved)
    resumed = demitasse.Solver(make_solver_file())
    resumed.restore(tmp_path / "lenet_iter_4.solverstate")
    assert resumed.iter == 4
    np.testing.assert_array_equal(resumed.net.params["ip2"][0].data, saved)


def test_solve_runs_to_max_iter(make_solver_file, prototypes):
    solver = demitasse.Solver(make_solver_file(max_iter=7))
    solver.net.blobs["data"].data[...], solver.net.blobs["label"].data[...] = prototypes.batch(BATCH)
    solver.solve()
    assert solver.iter == solver.max_iter == 7
    accuracy = solver.test_all()
    assert len(accuracy) == 1


def test_a_solver_net_keeps_the_solver_alive(make_solver_file):
    net = demitasse.Solver(make_solver_file()).net  # the solver itself is dropped
    view = net.params["conv1"][0].data
    view[...] = 1  # its memory must still be the solver's, alive
    assert net.params["conv1"][0].data.sum() == view.size


def test_missing_and_bad_solver_files(tmp_path, lenet_train):
    with pytest.raises(FileNotFoundError, match="no_such_solver.prototxt"):
        demitasse.Solver(tmp_path / "no_such_solver.prototxt")
    bad = tmp_path / "bad_solver.prototxt"
    bad.write_text('net: "%s"\nbase_lr: oops\n' % lenet_train)
    with pytest.raises(RuntimeError, match="bad_solver.prototxt:2"):
        demitasse.Solver(bad)
    missing_net = tmp_path / "missing_net_solver.prototxt"
    missing_net.write_text('net: "%s"\nlr_policy: "fixed"\n' % (tmp_path / "absent.prototxt"))
    with pytest.raises(RuntimeError, match="absent.prototxt"):
        demitasse.Solver(missing_net)


def test_values_no_run_can_mean_are_refused_naming_file_and_field(tmp_path, lenet_train):
    for field, value in (("max_iter", "-5"), ("base_lr", "-0.01"), ("base_lr", "inf")):
        path = tmp_path / "odd_solver.prototxt"
        path.write_text('net: "%s"\nlr_policy: "fixed"\n%s: %s\n' % (lenet_train, field, value))
        with pytest.raises(RuntimeError, match=r"odd_solver\.prototxt: %s is" % field):
            demitasse.Solver(path)


def test_solvers_of_one_snapshot_prefix_share_this_process_lock(tmp_path, lenet_train):
    path = tmp_path / "snapshotting.prototxt"
    path.write_text('net: "%s"\nlr_policy: "fixed"\nsnapshot: 5\nsnapshot_prefix: "%s"\n'
                    % (lenet_train, tmp_path / "lenet"))
    lock = tmp_path / "lenet.lock"
    first = demitasse.Solver(path)
    second = demitasse.Solver(path)  # a solver built again in a session is not refused
    assert lock.read_text().startswith("PID %d on host " % os.getpid())
    del first, second
    assert not lock.exists()


def test_ctrl_c_stops_a_long_step(make_solver_file):
    solver = demitasse.Solver(make_solver_file(max_iter=1000000))
    # Python leaves SIGINT ignored when it started ignored (a background job
    # of a non-interactive shell): Ctrl-C's handler is set here, as in a
    # terminal.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            solver.step(1000000)
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    # It stopped at the end of an iteration, and can go on.
    stopped_at = solver.iter
    assert 0 < stopped_at < 1000000
    solver.step(1)
    assert solver.iter == stopped_at + 1


def test_ctrl_c_stops_every_step_after_interrupted_steps_and_solves(make_solver_file):
    solver = demitasse.Solver(make_solver_file(max_iter=3))
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        for _ in range(3):
            for also_solve in (False, True):
                start = solver.iter
                timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
                timer.start()
                try:
                    with pytest.raises(KeyboardInterrupt):
                        solver.step(1000000)
                finally:
                    timer.cancel()
                assert start < solver.iter < start + 1000000
                if also_solve:
                    solver.solve()  # past max_iter: returns at once
    finally:
        signal.signal(signal.SIGINT, previous)
    stopped_at = solver.iter
    solver.step(2)
    assert solver.iter == stopped_at + 2
