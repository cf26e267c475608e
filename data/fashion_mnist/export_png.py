#!/usr/bin/env python3
"""Writes the first N Fashion-MNIST test images as 28x28 grey PNG files, named
NNNNN_LABEL.png (LABEL: the class index, a line of models/lenet_fashion/labels.txt),
for trying classify on:
    python3 data/fashion_mnist/export_png.py 10 build/fashion_png
They are the first N records of fashion_mnist_test_lmdb, in the same order.
Standard library only; reads the IDX files of Debian's dataset-fashion-mnist."""
import gzip
import os
import struct
import sys
import zlib

SOURCE = "/usr/share/datasets/fashion-mnist"


def read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    zero, dtype, ndim = struct.unpack(">HBB", data[:4])
    if zero != 0 or dtype != 0x08:
        sys.exit(f"export_png: {path} is not an IDX file of unsigned bytes")
    dims = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
    return dims, data[4 + 4 * ndim:]


def png_chunk(kind, payload):
    body = kind + payload
    return struct.pack(">I", len(payload)) + body + struct.pack(">I", zlib.crc32(body))


def grey_png(width, height, pixels):
    rows = b"".join(b"\0" + pixels[y * width:(y + 1) * width] for y in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)  # 8-bit grey
    return (b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", header) +
            png_chunk(b"IDAT", zlib.compress(rows)) + png_chunk(b"IEND", b""))


def main():
    if len(sys.argv) != 3 or not sys.argv[1].isdigit():
        sys.exit("usage: export_png.py N OUTPUT_DIR")
    count, out_dir = int(sys.argv[1]), sys.argv[2]
    (num, height, width), images = read_idx(f"{SOURCE}/t10k-images-idx3-ubyte.gz")
    _, labels = read_idx(f"{SOURCE}/t10k-labels-idx1-ubyte.gz")
    if count > num:
        sys.exit(f"export_png: the test set has {num} images, not {count}")
    os.makedirs(out_dir, exist_ok=True)
    size = height * width
    for i in range(count):
        path = os.path.join(out_dir, f"{i:05d}_{labels[i]}.png")
        with open(path, "wb") as f:
            f.write(grey_png(width, height, images[i * size:(i + 1) * size]))
    print(f"export_png: wrote {count} images to {out_dir}")


if __name__ == "__main__":
    main()
