#!/usr/bin/env python3
"""Images per second of PyTorch's DataLoader + torchvision on a JPEG folder, the peer row of
bench/data_vs_torch.sh.

As an ImageNet training script loads data: PIL decode (torchvision's default loader), then
RandomResizedCrop(224), RandomHorizontalFlip(), ToTensor(), Normalize(ImageNet's mean and std),
batches of 64 from a shuffled DataLoader with --workers worker processes (persistent). Counts the
images of the batches delivered for --seconds after --warmup batches.

Usage (Debian's python3 with python3-torch and python3-torchvision):
  /usr/bin/python3 bench/torch_data.py FOLDER [--workers 1] [--seconds 10] [--warmup 4]
FOLDER holds list.txt ("name label" lines, as bench/imagenet_like.py writes). Prints:
  RESULT images_per_s=...
"""
import argparse
import os
import time

import torch
from PIL import Image
from torch.utils.data import DataLoader, Dataset
from torchvision import transforms


class ListDataset(Dataset):
    def __init__(self, folder, transform):
        self.folder = folder
        with open(os.path.join(folder, "list.txt")) as listing:
            self.items = [line.split() for line in listing if line.strip()]
        self.transform = transform

    def __len__(self):
        return len(self.items)

    def __getitem__(self, index):
        name, label = self.items[index]
        with open(os.path.join(self.folder, name), "rb") as f:
            image = Image.open(f).convert("RGB")
        return self.transform(image), int(label)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--warmup", type=int, default=4)
    args = parser.parse_args()
    torch.set_num_threads(1)
    transform = transforms.Compose([
        transforms.RandomResizedCrop(224),
        transforms.RandomHorizontalFlip(),
        transforms.ToTensor(),
        transforms.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225]),
    ])
    loader = DataLoader(ListDataset(args.folder, transform), batch_size=args.batch, shuffle=True,
                        num_workers=args.workers, persistent_workers=args.workers > 0,
                        drop_last=True)
    seen = 0
    start = None
    while True:
        for batch, _ in loader:
            seen += 1
            if seen == args.warmup:
                start, images = time.perf_counter(), 0
            elif seen > args.warmup:
                images += batch.shape[0]
                if time.perf_counter() - start >= args.seconds:
                    print(f"RESULT images_per_s={images / (time.perf_counter() - start):.1f}")
                    return


if __name__ == "__main__":
    main()
