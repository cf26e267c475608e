"""caffe.NCCL on the CPU: ranks in processes, as Caffe's python/train.py
starts them (nccl_ranks.py), all-reducing through Gloo. Two ranks of batch B
train as one process of batch 2B on the same rows; bcast spreads rank 0's
weights; ranks that disagree, or never join, fail with messages naming the
rank and the uid."""
import multiprocessing
import os
import signal
import threading
import time

import numpy as np
import pytest

import demitasse as caffe
import nccl_ranks

h5py = pytest.importorskip("h5py")

BATCH, STEPS = 4, 4  # per rank
RANKS = 2
RESULT_TIMEOUT = 60  # a broken test fails, never hangs the suite

NET = """
name: "tiny"
layer { name: "d" type: "HDF5Data" top: "data" top: "label"
        hdf5_data_param { source: "%(source)s" batch_size: %(batch)d } }
layer { name: "ip1" type: "InnerProduct" bottom: "data" top: "ip1"
        inner_product_param { num_output: %(hidden)d weight_filler { type: "gaussian" std: 0.5 }
                              bias_filler { type: "gaussian" std: 0.1 } } }
layer { name: "relu" type: "ReLU" bottom: "ip1" top: "ip1" }
layer { name: "ip2" type: "InnerProduct" bottom: "ip1" top: "ip2"
        inner_product_param { num_output: 2 weight_filler { type: "gaussian" std: 0.5 }
                              bias_filler { type: "gaussian" std: 0.1 } } }
layer { name: "loss" type: "EuclideanLoss" bottom: "ip2" bottom: "label" top: "loss" }
"""
SOLVER = """
train_net: "%(net)s"
test_net: "%(net)s"
test_iter: 1
test_interval: 1000
test_initialization: false
base_lr: 0.05
momentum: 0.9
weight_decay: 0.01
lr_policy: "fixed"
display: 0
max_iter: %(steps)d
snapshot: %(steps)d
snapshot_prefix: "%(prefix)s"
snapshot_after_train: false
random_seed: 7
"""


def write_rows(directory, name, data, label):
    """An HDF5Data source (a list of one file) holding these rows."""
    h5 = directory / f"{name}.h5"
    with h5py.File(h5, "w") as f:
        f["data"], f["label"] = data, label
    source = directory / f"{name}.txt"
    source.write_text(f"{h5}\n")
    return source


def write_solver(directory, name, source, batch, hidden=5):
    net = directory / f"{name}_net.prototxt"
    net.write_text(NET % {"source": source, "batch": batch, "hidden": hidden})
    solver = directory / f"{name}_solver.prototxt"
    solver.write_text(SOLVER % {"net": net, "steps": STEPS, "prefix": directory / name})
    return str(solver)


@pytest.fixture(scope="module")
def rows():
    rng = np.random.default_rng(3)
    count = RANKS * BATCH * STEPS
    return (rng.normal(size=(count, 6)).astype(np.float32),
            rng.normal(size=(count, 2)).astype(np.float32))


@pytest.fixture(scope="module")
def pool():
    """Two processes that stay up for the module's tests (spawned, as train.py's)."""
    with multiprocessing.get_context("spawn").Pool(RANKS) as processes:
        yield processes


def run_ranks(pool, uid, solver_files, **options):
    """Rank r runs solver_files[r]; returns each rank's report."""
    pending = [pool.apply_async(nccl_ranks.solve, (r, len(solver_files), uid, f, STEPS),
                                options) for r, f in enumerate(solver_files)]
    return [p.get(RESULT_TIMEOUT) for p in pending]


def train_alone(solver_file):
    """One process, as set_solver_count(1) leaves it."""
    caffe.set_mode_cpu()
    solver = caffe.SGDSolver(solver_file)
    initial = nccl_ranks.params(solver)
    solver.step(STEPS)
    return initial, nccl_ranks.params(solver), solver.smoothed_loss


def uid_in(directory):
    return f"file://{directory / 'rendezvous'}".encode()


@pytest.fixture(scope="module")
def trained(pool, rows, tmp_path_factory):
    """The same rows trained by one process of batch 2B and by two ranks of
    batch B (rank r reads every other batch of B rows, from the r-th)."""
    directory = tmp_path_factory.mktemp("nccl")
    source = write_rows(directory, "rows", *rows)
    alone = train_alone(write_solver(directory, "alone", source, RANKS * BATCH))
    # One solver file for all, as train.py: one snapshot_prefix too.
    reports = run_ranks(pool, uid_in(directory), [write_solver(directory, "ranks", source,
                                                               BATCH)] * RANKS)
    for r, report in enumerate(reports):
        assert "error" not in report, f"rank {r}: {report['error']}"
    return directory, alone, reports


def test_two_ranks_train_as_one_process_on_their_combined_batch(trained):
    _, (initial, final, loss), reports = trained
    for key in final:
        assert not np.allclose(final[key], initial[key]), key  # training moved them
        for r, report in enumerate(reports):
            np.testing.assert_allclose(report["final"][key], final[key], rtol=1e-5, atol=1e-6,
                                       err_msg=f"rank {r}, param {key}")
        # Every rank applies the same summed gradients: bit-equal params.
        np.testing.assert_array_equal(reports[1]["final"][key], reports[0]["final"][key])
    # The loss shown is the global batch's, on every rank.
    for report in reports:
        assert report["loss"] == pytest.approx(loss, rel=1e-5)
        assert report["backend"] == "gloo"


def test_bcast_gives_every_rank_rank_0_s_weights(trained):
    _, (initial, _, _), reports = trained
    for key in initial:
        # Rank 0 fills as one process would; rank 1's fillers draw other numbers.
        np.testing.assert_array_equal(reports[0]["initial"][key], initial[key])
        assert not np.allclose(reports[1]["initial"][key], initial[key]), key
        for report in reports:
            np.testing.assert_array_equal(report["after_bcast"][key], initial[key])


def test_only_rank_0_tests_and_writes_snapshots(trained):
    directory, _, reports = trained
    assert [report["test_nets"] for report in reports] == [1, 0]
    # Rank 1 did not lock the prefix (it would have failed, rank 0 holding
    # it), and rank 0 wrote (test_without_add_callback...: rank 1 writes none).
    assert (directory / f"ranks_iter_{STEPS}.caffemodel").exists()
    assert (directory / f"ranks_iter_{STEPS}.solverstate").exists()


def test_without_add_callback_each_rank_trains_on_its_own_batches(pool, rows, tmp_path):
    data, label = rows
    solvers = [write_solver(tmp_path, f"rank{r}", write_rows(tmp_path, "rows", data, label),
                            BATCH) for r in range(RANKS)]
    reports = run_ranks(pool, uid_in(tmp_path), solvers, attach=False)
    for r, report in enumerate(reports):
        assert "error" not in report, f"rank {r}: {report['error']}"
    # Rank 0 read batches 0, 2, 4, ... of B rows: alone on those, from its
    # weights (bcast kept them), with its loss unscaled, it ends the same.
    mine = np.arange(len(data)).reshape(-1, BATCH)[::RANKS].ravel()
    source = write_rows(tmp_path, "shard0", data[mine], label[mine])
    _, final, _ = train_alone(write_solver(tmp_path, "shard0", source, BATCH))
    for key in final:
        np.testing.assert_allclose(reports[0]["final"][key], final[key], rtol=1e-5, atol=1e-6)
        assert not np.allclose(reports[1]["final"][key], final[key]), key
    # Each rank had a snapshot_prefix of its own: rank 0 alone wrote.
    assert (tmp_path / f"rank0_iter_{STEPS}.caffemodel").exists()
    assert not list(tmp_path.glob("rank1_iter_*"))


def test_a_rank_whose_net_differs_fails_on_every_rank(pool, rows, tmp_path):
    source = write_rows(tmp_path, "rows", *rows)
    solvers = [write_solver(tmp_path, "rank0", source, BATCH),
               write_solver(tmp_path, "rank1", source, BATCH, hidden=3)]
    uid = uid_in(tmp_path)
    reports = run_ranks(pool, uid, solvers)
    for r, report in enumerate(reports):
        assert report.get("error", "").startswith(
            f"RuntimeError: caffe.NCCL rank {r} of 2 (uid '{uid.decode()}'): rank 1 disagrees "
            "with rank 0 on net layer 'ip1' param 0 shape (5 6 (30) vs 3 6 (18))"), report


@pytest.fixture
def rank_0_of_2():
    caffe.set_solver_count(2)
    caffe.set_solver_rank(0)
    yield
    caffe.set_solver_count(1)
    caffe.set_solver_rank(0)


def test_a_rank_that_never_joins_times_out(rows, tmp_path, rank_0_of_2):
    solver = caffe.SGDSolver(write_solver(tmp_path, "rank0", write_rows(tmp_path, "rows", *rows),
                                          BATCH))
    uid = uid_in(tmp_path)
    # The fix names NCCL's own options, not tools/train's flags.
    with pytest.raises(RuntimeError, match=rf"caffe.NCCL rank 0 of 2 \(uid '{uid.decode()}'\): "
                                           r".* for rank\(s\) 1 to join; .* same uid, run_id and "
                                           r"set_solver_count \(timeout: NCCL's timeout\)"):
        caffe.NCCL(solver, uid, timeout=1)
    with pytest.raises(RuntimeError, match=r"rank 0 of 2 \(uid 'http://host'\): .*file:///"):
        caffe.NCCL(solver, b"http://host")


def test_ctrl_c_ends_the_wait_for_the_other_ranks(rows, tmp_path, rank_0_of_2):
    solver = caffe.SGDSolver(write_solver(tmp_path, "rank0", write_rows(tmp_path, "rows", *rows),
                                          BATCH))

    rendezvous = tmp_path / "rendezvous"

    def interrupt_once_waiting():
        # Ctrl-C once rank 0 has written its key and waits for rank 1 (a signal that
        # came while the call was still setting up was once taken before the wait).
        for _ in range(200):
            if rendezvous.is_dir() and any(rendezvous.iterdir()):
                break
            time.sleep(0.05)
        time.sleep(0.2)
        signal.raise_signal(signal.SIGINT)

    # Python leaves SIGINT ignored when it started ignored (pytest run as a
    # background job of a non-interactive shell): there the signal raised
    # below was lost and the wait ran to its timeout. Ctrl-C's handler is set
    # here, as in a terminal.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        threading.Thread(target=interrupt_once_waiting, daemon=True).start()
        with pytest.raises(KeyboardInterrupt):
            caffe.NCCL(solver, uid_in(tmp_path), timeout=20)
    finally:
        signal.signal(signal.SIGINT, previous)


def test_a_solver_built_before_set_solver_count_is_refused(rows, tmp_path):
    solver = caffe.SGDSolver(write_solver(tmp_path, "alone", write_rows(tmp_path, "rows", *rows),
                                          BATCH))
    caffe.set_solver_count(2)
    try:
        with pytest.raises(RuntimeError, match="built as replica 0 of 1; call set_solver_count"):
            caffe.NCCL(solver, uid_in(tmp_path))
    finally:
        caffe.set_solver_count(1)


def test_new_uid_names_a_fresh_directory():
    uids = [caffe.NCCL.new_uid() for _ in range(2)]
    try:
        assert uids[0] != uids[1]
        for uid in uids:
            assert isinstance(uid, bytes) and uid.startswith(b"file:///tmp/")
            assert os.path.isdir(uid[len(b"file://"):])
    finally:
        for uid in uids:
            os.rmdir(uid[len(b"file://"):])


def test_net_hooks_take_only_nccl(tmp_path, rows):
    solver = caffe.SGDSolver(write_solver(tmp_path, "alone", write_rows(tmp_path, "rows", *rows),
                                          BATCH))
    assert solver.param.layer_wise_reduce and solver.param.max_iter == STEPS
    with pytest.raises(NotImplementedError, match="only an NCCL object"):
        solver.net.after_backward(lambda layer: None)
