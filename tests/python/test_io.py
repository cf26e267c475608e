"""demitasse.io: image loading, resizing, BlobProto files and the
Transformer, against values computed here."""
import struct

import numpy as np
import pytest

import demitasse


def write_ppm(path, rgb):
    """A binary PPM (which OpenCV decodes) of an H x W x 3 uint8 RGB image."""
    height, width, _ = rgb.shape
    path.write_bytes(b"P6\n%d %d\n255\n" % (width, height) + rgb.astype(np.uint8).tobytes())


def test_load_image_gives_rgb_floats(tmp_path):
    rgb = np.random.default_rng(0).integers(0, 256, size=(5, 7, 3), dtype=np.uint8)
    rgb[0, 0] = (255, 0, 0)  # pure red stays in channel 0 (RGB, not OpenCV's BGR)
    path = tmp_path / "image.ppm"
    write_ppm(path, rgb)
    image = demitasse.io.load_image(str(path))
    assert image.shape == (5, 7, 3) and image.dtype == np.float32
    np.testing.assert_allclose(image, rgb / 255.0, rtol=1e-6)
    assert tuple(image[0, 0]) == (1.0, 0.0, 0.0)
    grey = demitasse.io.load_image(path, color=False)
    assert grey.shape == (5, 7, 1)
    luma = (0.299 * rgb[..., 0] + 0.587 * rgb[..., 1] + 0.114 * rgb[..., 2]) / 255.0
    np.testing.assert_allclose(grey[..., 0], luma, atol=1.5 / 255)


def test_load_image_errors_name_the_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="missing.png"):
        demitasse.io.load_image(tmp_path / "missing.png")
    bad = tmp_path / "not_an_image.png"
    bad.write_bytes(b"hello")
    with pytest.raises(RuntimeError, match="not_an_image.png"):
        demitasse.io.load_image(bad)


def test_resize_image():
    constant = np.full((10, 6, 3), 0.25, dtype=np.float32)
    resized = demitasse.io.resize_image(constant, (4, 9))
    assert resized.shape == (4, 9, 3)
    np.testing.assert_allclose(resized, 0.25, rtol=1e-6)
    # Nearest neighbour doubling repeats each pixel.
    small = np.arange(4, dtype=np.float32).reshape(2, 2, 1)
    doubled = demitasse.io.resize_image(small, (4, 4), interp_order=0)
    np.testing.assert_array_equal(doubled[..., 0], np.kron(small[..., 0], np.ones((2, 2))))


def encode_varint(value):
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def blobproto_bytes(shape, values):
    """A BlobProto by hand: shape (field 7: BlobShape, dims packed in field
    1) and data (field 5, packed floats)."""
    dims = b"".join(encode_varint(d) for d in shape)
    blob_shape = b"\x0a" + encode_varint(len(dims)) + dims
    data = struct.pack("<%df" % len(values), *values)
    return (b"\x3a" + encode_varint(len(blob_shape)) + blob_shape +
            b"\x2a" + encode_varint(len(data)) + data)


def test_load_blobproto(tmp_path):
    values = np.arange(24, dtype=np.float32) / 7
    path = tmp_path / "mean.binaryproto"
    path.write_bytes(blobproto_bytes((1, 2, 3, 4), values))
    mean = demitasse.io.load_blobproto(path)
    assert mean.shape == (1, 2, 3, 4)
    np.testing.assert_array_equal(mean.ravel(), values)


def make_transformer():
    transformer = demitasse.io.Transformer({"data": (1, 3, 4, 5)})
    transformer.set_transpose("data", (2, 0, 1))
    transformer.set_channel_swap("data", (2, 1, 0))
    transformer.set_raw_scale("data", 255)
    transformer.set_mean("data", np.array([104.0, 117.0, 123.0]))
    transformer.set_input_scale("data", 0.5)
    return transformer


def test_transformer_matches_a_hand_computation():
    image = np.random.default_rng(1).uniform(0, 1, size=(4, 5, 3)).astype(np.float32)
    original = image.copy()
    blob = make_transformer().preprocess("data", image)
    np.testing.assert_array_equal(image, original)  # the input is left alone
    assert blob.shape == (3, 4, 5) and blob.dtype == np.float32
    mean = [104.0, 117.0, 123.0]
    for c in range(3):
        for h in range(4):
            for w in range(5):
                # Channel c of Caffe's BGR input is channel 2 - c of the RGB image.
                expected = (image[h, w, 2 - c] * 255 - mean[c]) * 0.5
                assert blob[c, h, w] == pytest.approx(expected, rel=1e-5, abs=1e-4)
    back = make_transformer().deprocess("data", blob[np.newaxis])
    np.testing.assert_allclose(back, image, atol=1e-5)


def test_transformer_resizes_and_checks_its_settings():
    transformer = demitasse.io.Transformer({"data": (1, 3, 8, 8)})
    transformer.set_transpose("data", (2, 0, 1))
    blob = transformer.preprocess("data", np.full((16, 12, 3), 0.5, dtype=np.float32))
    assert blob.shape == (3, 8, 8)
    np.testing.assert_allclose(blob, 0.5, rtol=1e-6)
    mean_image = np.arange(3 * 8 * 8, dtype=np.float32).reshape(3, 8, 8)
    transformer.set_mean("data", mean_image)
    np.testing.assert_allclose(
        transformer.preprocess("data", np.zeros((8, 8, 3), dtype=np.float32)), -mean_image)
    with pytest.raises(ValueError, match="3 channels"):
        transformer.set_channel_swap("data", (1, 0))
    with pytest.raises(ValueError, match="mean has 2 values"):
        transformer.set_mean("data", np.zeros(2))
    with pytest.raises(ValueError, match="does not match"):
        transformer.set_mean("data", np.zeros((3, 4, 4)))
    with pytest.raises(ValueError, match="does not match"):
        transformer.set_mean("data", np.zeros((2, 12, 12)))
    # A larger mean image gives its centre (BVLC's classify.py: a 256 x 256
    # mean for a 227 x 227 input).
    large_mean = np.arange(3 * 11 * 12, dtype=np.float32).reshape(3, 11, 12)
    transformer.set_mean("data", large_mean)
    np.testing.assert_allclose(
        transformer.preprocess("data", np.zeros((8, 8, 3), dtype=np.float32)),
        -large_mean[:, 1:9, 2:10])
    with pytest.raises(ValueError, match="not an input"):
        transformer.preprocess("label", np.zeros((8, 8, 3)))


def test_blobproto_arrays_both_ways(tmp_path):
    proto = demitasse.proto.caffe_pb2
    # The legacy 4-D fields win when set; otherwise shape.dim; no dims: a scalar.
    legacy = proto.BlobProto(num=1, channels=2, height=1, width=3, data=list(range(6)))
    np.testing.assert_array_equal(demitasse.io.blobproto_to_array(legacy),
                                  np.arange(6).reshape(1, 2, 1, 3))
    assert demitasse.io.blobproto_to_array(proto.BlobProto(data=[123])).shape == ()
    assert demitasse.io.blobproto_to_array(proto.BlobProto(data=[123])) == 123
    with pytest.raises(ValueError, match="holds 4 values but its shape"):
        demitasse.io.blobproto_to_array(proto.BlobProto(data=[1, 2, 3, 4]))
    values = np.random.default_rng(2).normal(size=(2, 3, 4)).astype(np.float32)
    blob = demitasse.io.array_to_blobproto(values, diff=-values)
    assert list(blob.shape.dim) == [2, 3, 4] and not blob.HasField("num")
    np.testing.assert_array_equal(demitasse.io.blobproto_to_array(blob), values)
    np.testing.assert_array_equal(demitasse.io.blobproto_to_array(blob, return_diff=True),
                                  -values)
    # What Python writes, the C++ reader (load_blobproto) reads.
    path = tmp_path / "mean.binaryproto"
    path.write_bytes(blob.SerializeToString())
    np.testing.assert_array_equal(demitasse.io.load_blobproto(path), values)
    # And what Python writes by hand, caffe_pb2 parses (as test_load_blobproto's C++ did).
    parsed = proto.BlobProto.FromString(blobproto_bytes((1, 2, 3, 4), np.arange(24) / 7))
    np.testing.assert_allclose(demitasse.io.blobproto_to_array(parsed).ravel(),
                               np.arange(24) / 7, rtol=1e-6)
    vector = demitasse.io.arraylist_to_blobprotovector_str([values, values[0]])
    back = demitasse.io.blobprotovector_str_to_arraylist(vector)
    assert [a.shape for a in back] == [(2, 3, 4), (3, 4)]
    np.testing.assert_array_equal(back[1], values[0])


def test_datum_arrays_both_ways():
    pixels = np.random.default_rng(3).integers(0, 256, size=(3, 4, 5), dtype=np.uint8)
    datum = demitasse.io.array_to_datum(pixels, label=7)
    assert (datum.channels, datum.height, datum.width, datum.label) == (3, 4, 5, 7)
    assert datum.data == pixels.tobytes() and not datum.float_data  # uint8: raw bytes, CHW
    back = demitasse.io.datum_to_array(datum)
    assert back.dtype == np.uint8
    np.testing.assert_array_equal(back, pixels)
    floats = np.linspace(-1, 1, 24).reshape(2, 3, 4)
    datum = demitasse.io.array_to_datum(floats)
    assert not datum.HasField("label") and not datum.data  # no label given: none stored
    np.testing.assert_allclose(demitasse.io.datum_to_array(datum), floats, rtol=1e-6)
    # A serialized Datum (an LMDB value) parses back to the same array.
    parsed = demitasse.proto.caffe_pb2.Datum.FromString(
        demitasse.io.array_to_datum(pixels, label=0).SerializeToString())
    assert parsed.HasField("label") and parsed.label == 0
    np.testing.assert_array_equal(demitasse.io.datum_to_array(parsed), pixels)
    with pytest.raises(ValueError, match="C x H x W"):
        demitasse.io.array_to_datum(np.zeros((4, 5)))
    with pytest.raises(ValueError, match="encoded"):
        demitasse.io.datum_to_array(demitasse.proto.caffe_pb2.Datum(encoded=True, data=b"\xff"))


def test_oversample_takes_corners_centre_and_mirrors():
    # Pixel value 100 * row + column (and + 1000 in the second image) tells
    # each crop's origin.
    rows, cols = np.mgrid[0:6, 0:8]
    image = (100 * rows + cols)[:, :, np.newaxis].astype(np.float32)
    crops = demitasse.io.oversample([image, image + 1000], (4, 4))
    assert crops.shape == (20, 4, 4, 1) and crops.dtype == np.float32
    origins = [crop[0, 0, 0] for crop in crops[:5]]
    assert origins == [0, 4, 200, 204, 102]  # TL, TR, BL, BR, centre ((6-4)/2, (8-4)/2)
    np.testing.assert_array_equal(crops[5:10], crops[:5, :, ::-1])
    np.testing.assert_array_equal(crops[10:], crops[:10] + 1000)
    with pytest.raises(ValueError, match="larger than the images"):
        demitasse.io.oversample([image], (7, 4))
