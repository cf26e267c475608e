"""HDF5Data against Data: LeNet trained from an HDF5 copy of a Fashion-MNIST
slice learns exactly as from the LMDB of the same records (same seed, same
order, no shuffle)."""
import gzip
import os
import pathlib
import subprocess

import numpy as np
import pytest

import demitasse
from conftest import LENET_TRAIN, REPO

h5py = pytest.importorskip("h5py")

FASHION = pathlib.Path("/usr/share/datasets/fashion-mnist")
TRAIN_IMAGES, TEST_IMAGES = 320, 200  # 20 train batches of 16; 4 test batches of 50
ITERS = 30

# LeNet's layers after its data layer (conftest's net, Input layer dropped).
LENET_BODY = LENET_TRAIN[LENET_TRAIN.index('layer { name: "conv1"'):]

LMDB_LAYERS = """
layer { name: "fashion" type: "Data" top: "data" top: "label" include { phase: %(phase)s }
        transform_param { scale: 0.00390625 }
        data_param { source: "%(source)s" batch_size: %(batch)d backend: LMDB } }
"""
HDF5_LAYERS = """
layer { name: "fashion" type: "HDF5Data" top: "data" top: "label" include { phase: %(phase)s }
        hdf5_data_param { source: "%(source)s" batch_size: %(batch)d } }
"""
SOLVER = """
net: "%(net)s"
test_iter: 4
test_interval: 100000
test_initialization: false
base_lr: 0.01
momentum: 0.9
weight_decay: 0.0005
lr_policy: "inv"
gamma: 0.0001
power: 0.75
display: 0
max_iter: %(iters)d
snapshot_after_train: false
random_seed: 1701
"""


def convert_mnist():
    for d in filter(None, [os.environ.get("DEMI_BUILD_DIR", ""), "build", "build_cpu"]):
        path = REPO / d / "tools" / "convert_mnist"
        if os.access(path, os.X_OK):
            return path
    pytest.fail("no build/tools/convert_mnist (nor build_cpu/, nor $DEMI_BUILD_DIR/): run make all")


def read_idx(name, count):
    """The first `count` items of a gzipped IDX file: (header, items)."""
    with gzip.open(FASHION / name) as f:
        magic = f.read(4)
        shape = [int.from_bytes(f.read(4), "big") for _ in range(magic[3])]
        item = int(np.prod(shape[1:], dtype=np.int64))
        items = np.frombuffer(f.read(count * item), np.uint8)  # only the slice is decompressed
    return magic, shape, items.reshape([count] + shape[1:])


def write_slice(folder, prefix, images_name, labels_name, count):
    """IDX files of the slice for convert_mnist and an .h5 copy; returns (lmdb, list)."""
    paths = {}
    for kind, name in (("images", images_name), ("labels", labels_name)):
        magic, shape, items = read_idx(name, count)
        path = folder / f"{prefix}-{kind}-idx"
        dims = b"".join(int(d).to_bytes(4, "big") for d in [count] + shape[1:])
        path.write_bytes(magic + dims + items.tobytes())
        paths[kind] = (path, items)
    lmdb = folder / f"{prefix}_lmdb"
    subprocess.run([str(convert_mnist()), str(paths["images"][0]), str(paths["labels"][0]),
                    str(lmdb)], check=True, capture_output=True)
    h5 = folder / f"{prefix}.h5"
    with h5py.File(h5, "w") as f:
        # The Data layer's transform: pixel * (1/256), exact in float32.
        f["data"] = paths["images"][1][:, None].astype(np.float32) * np.float32(0.00390625)
        f["label"] = paths["labels"][1].astype(np.float32)
    listing = folder / f"{prefix}_h5.txt"
    listing.write_text(f"{h5}\n")
    return lmdb, listing


def train(folder, name, layers, train_source, test_source):
    """Trains ITERS iterations; returns (losses, test accuracy)."""
    net = folder / f"{name}.prototxt"
    net.write_text(layers % {"phase": "TRAIN", "source": train_source, "batch": 16}
                   + layers % {"phase": "TEST", "source": test_source, "batch": 50} + LENET_BODY)
    solver_file = folder / f"{name}_solver.prototxt"
    solver_file.write_text(SOLVER % {"net": net, "iters": ITERS})
    solver = demitasse.SGDSolver(str(solver_file))
    losses = []
    for _ in range(ITERS):
        solver.step(1)
        losses.append(float(solver.net.blobs["loss"].data))
    test_net = solver.test_nets[0]
    accuracy = np.mean([float(test_net.forward()["accuracy"]) for _ in range(4)])
    return np.array(losses), accuracy


@pytest.mark.skipif(not FASHION.is_dir(), reason="Debian's dataset-fashion-mnist is not installed")
def test_lenet_learns_the_same_from_hdf5_as_from_lmdb(tmp_path):
    train_lmdb, train_h5 = write_slice(tmp_path, "train", "train-images-idx3-ubyte.gz",
                                       "train-labels-idx1-ubyte.gz", TRAIN_IMAGES)
    test_lmdb, test_h5 = write_slice(tmp_path, "test", "t10k-images-idx3-ubyte.gz",
                                     "t10k-labels-idx1-ubyte.gz", TEST_IMAGES)
    lmdb_losses, lmdb_accuracy = train(tmp_path, "lmdb", LMDB_LAYERS, train_lmdb, test_lmdb)
    h5_losses, h5_accuracy = train(tmp_path, "hdf5", HDF5_LAYERS, train_h5, test_h5)
    # Same records, same order, same seed: the same run, bit for bit.
    np.testing.assert_array_equal(h5_losses, lmdb_losses)
    assert h5_accuracy == lmdb_accuracy
    # And it is a run that learns: well above chance (0.1) on unseen images.
    assert h5_accuracy > 0.4, h5_accuracy
    assert h5_losses[-5:].mean() < 0.7 * h5_losses[:5].mean(), h5_losses
