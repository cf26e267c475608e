#!/usr/bin/env python3
"""Makes an ImageNet-like JPEG set from real photos, for bench/data_vs_torch.sh.

Each image is a random crop (half to all of the area, aspect 3:4 to 4:3) of one of opencv-doc's
photos, resized so that its shorter side is uniform in [333, 500] (ImageNet's usual sizes; 500 x 375
is the most common), saved as baseline JPEG, quality 90, 4:2:0 (PIL's default at that quality), as
ImageNet's files are. Writes OUT/img_NNNNN.jpg and OUT/list.txt ("img_NNNNN.jpg label" lines, the
label the source photo's number), the list convert_imageset reads.

Usage: /usr/bin/python3 bench/imagenet_like.py OUT [--count 1200] [--seed 1]
"""
import argparse
import glob
import os
import random

from PIL import Image

PHOTOS = "/usr/share/doc/opencv-doc/examples/data"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--count", type=int, default=1200)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    sources = []
    for path in sorted(glob.glob(os.path.join(PHOTOS, "*.jpg"))):
        image = Image.open(path).convert("RGB")
        if min(image.size) >= 200:  # logos and icons are not photos
            sources.append(image)
    if not sources:
        raise SystemExit(f"no photos in {PHOTOS}: apt-get install opencv-doc")
    os.makedirs(args.out, exist_ok=True)
    rng = random.Random(args.seed)
    lines = []
    for i in range(args.count):
        label = i % len(sources)
        photo = sources[label]
        width, height = photo.size
        area = width * height * rng.uniform(0.5, 1.0)
        aspect = rng.uniform(3 / 4, 4 / 3)
        w = min(width, int(round((area * aspect) ** 0.5)))
        h = min(height, int(round((area / aspect) ** 0.5)))
        x, y = rng.randint(0, width - w), rng.randint(0, height - h)
        shorter = rng.randint(333, 500)
        if w < h:
            size = (shorter, int(round(h * shorter / w)))
        else:
            size = (int(round(w * shorter / h)), shorter)
        crop = photo.crop((x, y, x + w, y + h)).resize(size, Image.BICUBIC)
        name = f"img_{i:05d}.jpg"
        crop.save(os.path.join(args.out, name), quality=90)
        lines.append(f"{name} {label}\n")
    with open(os.path.join(args.out, "list.txt"), "w") as listing:
        listing.writelines(lines)
    print(f"{args.count} JPEGs from {len(sources)} photos in {args.out}")


if __name__ == "__main__":
    main()
