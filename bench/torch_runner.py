#!/usr/bin/env python3
"""Times one training step of a Caffe prototxt in PyTorch, the peer of bench/speed.sh.

Reads the same train_val.prototxt Demitasse runs (TRAIN phase, with the given stages, so
`--stage dummy` swaps the Data layers for DummyData), builds the equivalent PyTorch graph and times
forward + backward of the summed losses, with random inputs made once. Caffe's BatchNorm followed
by a Scale on the same blob becomes one affine BatchNorm2d, as a PyTorch user would write it.

Usage (Debian's python3 with python3-torch: scripts/install_deps.sh --bench):
  /usr/bin/python3 bench/torch_runner.py MODEL.prototxt [--stage dummy] [--batch N]
      [--threads T] [--iters 3] [--warmup 1] [--autocast bf16|fp16] [--channels_last]
      [--device cuda [--math fp32|tf32]]
On a GPU (`--device cuda`, the peer of bench/gpu.sh) each step is timed between two
torch.cuda.synchronize() calls, `--math` picks strict FP32 or TF32 for FLOAT (PyTorch's
allow_tf32 switches; cuDNN's benchmark mode chooses the algorithms), `--autocast` runs the
forward under torch.autocast('cuda', ...), with a GradScaler for fp16 as a PyTorch user would,
and the RESULT line adds the peak device memory PyTorch's allocator held (peak_gpu_mib).
Prints the param count, the training GFLOP (3 x the forward multiply-adds x 2 of Convolution and
InnerProduct layers) and one line:
  RESULT min_ms=... mean_ms=... peak_rss_mib=... gflop=... params=...
"""
import argparse
import math
import re
import resource
import time

import torch
import torch.nn.functional as F

# ---------------------------------------------------------------- prototxt text format


def tokens(text):
    text = re.sub(r"#[^\n]*", "", text)
    for match in re.finditer(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|[{}:]|[^\s{}:]+', text):
        yield match.group(0)


def value(token):
    if token[0] in "\"'":
        return token[1:-1]
    if token in ("true", "false"):
        return token == "true"
    try:
        return int(token)
    except ValueError:
        pass
    try:
        return float(token)
    except ValueError:
        return token  # an enum name


def parse_message(stream):
    """Fields of one message until '}' or the end: name -> list of values."""
    fields = {}
    for token in stream:
        if token == "}":
            return fields
        name = token
        following = next(stream)
        if following == ":":
            following = next(stream)
        if following == "{":
            item = parse_message(stream)
        else:
            item = value(following)
        fields.setdefault(name, []).append(item)
    return fields


def parse_prototxt(path):
    with open(path) as f:
        return parse_message(tokens(f.read()))


def one(message, name, default=None):
    items = message.get(name)
    return items[0] if items else default


# ---------------------------------------------------------------- Caffe's phase/stage rules


def rule_matches(rule, phase, stages):
    if "phase" in rule and one(rule, "phase") != phase:
        return False
    if any(s not in stages for s in rule.get("stage", [])):
        return False
    if any(s in stages for s in rule.get("not_stage", [])):
        return False
    return True


def layer_included(layer, phase, stages):
    if "phase" in layer and one(layer, "phase") != phase:
        return False
    if "include" in layer:
        return any(rule_matches(r, phase, stages) for r in layer["include"])
    if "exclude" in layer:
        return not any(rule_matches(r, phase, stages) for r in layer["exclude"])
    return True


# ---------------------------------------------------------------- the PyTorch graph


def pair(param, name, default):
    """Caffe's repeated kernel_size/pad/stride (1 or 2 values) or name_h/name_w."""
    if name + "_h" in param:
        return one(param, name + "_h"), one(param, name + "_w")
    items = param.get(name if name != "kernel" else "kernel_size", [])
    if not items:
        return default, default
    return items[0], items[-1]


def caffe_pool_size(size, kernel, pad, stride, ceil_mode):
    rounding = math.ceil if ceil_mode else math.floor
    out = int(rounding((size + 2 * pad - kernel) / stride)) + 1
    if pad > 0 and (out - 1) * stride >= size + pad:
        out -= 1
    return out


class Graph(torch.nn.Module):
    """Runs the layers in prototxt order over a dict of named blobs."""

    def __init__(self, layers, batch):
        super().__init__()
        self.steps = []  # (callable, bottoms, tops)
        self.inputs = {}  # blob -> tensor made once
        self.flops = 0
        self.losses = []
        shapes = {}
        skip_scale = set()
        for i, layer in enumerate(layers):
            kind = one(layer, "type")
            name = one(layer, "name")
            bottoms, tops = layer.get("bottom", []), layer.get("top", [])
            if kind in ("DummyData", "Input"):
                param = one(layer, "dummy_data_param" if kind == "DummyData" else "input_param", {})
                for top, shape in zip(tops, param.get("shape", [])):
                    dims = list(shape["dim"])
                    dims[0] = batch or dims[0]
                    shapes[top] = dims
                    if len(dims) == 1 or top == "label":
                        classes = self.label_classes(layers)
                        self.inputs[top] = torch.randint(0, classes, dims[:1])
                    else:
                        self.inputs[top] = torch.randn(dims)
                continue
            if kind == "Accuracy" or kind == "Silence":
                continue
            if name in skip_scale:
                continue
            shape = shapes[bottoms[0]]
            fn, out_shape = self.build(kind, name, layer, shape, shapes, bottoms, layers, i, skip_scale)
            self.steps.append((fn, bottoms, tops))
            for top in tops:
                shapes[top] = out_shape
            if kind.endswith("Loss"):
                self.losses.append(tops[0] if tops else name)

    @staticmethod
    def label_classes(layers):
        for layer in reversed(layers):
            if one(layer, "type") == "InnerProduct":
                return one(one(layer, "inner_product_param"), "num_output")
        return 10

    def module(self, name, module):
        self.add_module(re.sub(r"\W", "_", name), module)
        return module

    def build(self, kind, name, layer, shape, shapes, bottoms, layers, index, skip_scale):
        if kind in ("Convolution", "Deconvolution"):
            p = one(layer, "convolution_param")
            kh, kw = pair(p, "kernel", 1)
            ph, pw = pair(p, "pad", 0)
            sh, sw = pair(p, "stride", 1)
            dil = one(p, "dilation", 1)
            groups = one(p, "group", 1)
            out = one(p, "num_output")
            conv = self.module(name, torch.nn.Conv2d(shape[1], out, (kh, kw), (sh, sw), (ph, pw),
                                                     dil, groups, one(p, "bias_term", True)))
            oh = (shape[2] + 2 * ph - dil * (kh - 1) - 1) // sh + 1
            ow = (shape[3] + 2 * pw - dil * (kw - 1) - 1) // sw + 1
            self.flops += 2 * shape[0] * out * oh * ow * (shape[1] // groups) * kh * kw
            return conv, [shape[0], out, oh, ow]
        if kind == "InnerProduct":
            p = one(layer, "inner_product_param")
            inputs = math.prod(shape[1:])
            out = one(p, "num_output")
            linear = self.module(name, torch.nn.Linear(inputs, out, one(p, "bias_term", True)))
            self.flops += 2 * shape[0] * inputs * out
            return (lambda x, linear=linear: linear(x.flatten(1))), [shape[0], out]
        if kind == "ReLU":
            return F.relu, shape
        if kind == "Dropout":
            ratio = one(one(layer, "dropout_param", {}), "dropout_ratio", 0.5)
            return (lambda x: F.dropout(x, ratio, True)), shape
        if kind == "Pooling":
            p = one(layer, "pooling_param")
            if one(p, "global_pooling", False):
                kh, kw, ph, pw, sh, sw = shape[2], shape[3], 0, 0, 1, 1
            else:
                kh, kw = pair(p, "kernel", 1)
                ph, pw = pair(p, "pad", 0)
                sh, sw = pair(p, "stride", 1)
            # BVLC's round_mode: FLOOR and the forks' ceil_mode: false both round down.
            ceil = one(p, "round_mode", "CEIL") == "CEIL" and one(p, "ceil_mode", True)
            oh = caffe_pool_size(shape[2], kh, ph, sh, ceil)
            ow = caffe_pool_size(shape[3], kw, pw, sw, ceil)
            if one(p, "pool", "MAX") == "MAX":
                fn = lambda x: F.max_pool2d(x, (kh, kw), (sh, sw), (ph, pw), ceil_mode=ceil)
            else:
                fn = lambda x: F.avg_pool2d(x, (kh, kw), (sh, sw), (ph, pw), ceil_mode=ceil)
            return fn, [shape[0], shape[1], oh, ow]
        if kind == "LRN":
            p = one(layer, "lrn_param", {})
            lrn = torch.nn.LocalResponseNorm(one(p, "local_size", 5), one(p, "alpha", 1.0),
                                             one(p, "beta", 0.75), one(p, "k", 1.0))
            return lrn, shape
        if kind == "BatchNorm":
            # A Scale on the same blob right after it becomes the affine part.
            top = layer["top"][0]
            follower = layers[index + 1] if index + 1 < len(layers) else None
            affine = (follower is not None and one(follower, "type") == "Scale"
                      and follower.get("bottom") == [top])
            if affine:
                skip_scale.add(one(follower, "name"))
            bn = self.module(name, torch.nn.BatchNorm2d(shape[1], affine=affine))
            return bn, shape
        if kind == "Scale":
            weight = self.module(name, torch.nn.Parameter(torch.ones(1, shape[1], 1, 1)))
            return (lambda x, w=weight: x * w), shape
        if kind == "Eltwise":
            op = one(one(layer, "eltwise_param", {}), "operation", "SUM")
            fns = {"SUM": lambda *xs: sum(xs), "PROD": lambda *xs: math.prod(xs),
                   "MAX": lambda *xs: torch.stack(xs).amax(0)}
            return fns[op], shape
        if kind == "Concat":
            channels = sum(shapes[b][1] for b in bottoms)
            return (lambda *xs: torch.cat(xs, 1)), [shape[0], channels] + shape[2:]
        if kind == "Flatten":
            return (lambda x: x.flatten(1)), [shape[0], math.prod(shape[1:])]
        if kind == "Softmax":
            return (lambda x: F.softmax(x, 1)), shape
        if kind == "SoftmaxWithLoss":
            return (lambda x, label: F.cross_entropy(x.flatten(1), label)), [1]
        raise SystemExit(f"torch_runner: layer type {kind} ('{name}') is not supported")

    def forward(self):
        blobs = dict(self.inputs)
        for fn, bottoms, tops in self.steps:
            result = fn(*[blobs[b] for b in bottoms])
            for top in tops:
                blobs[top] = result
        return sum(blobs[name] for name in self.losses)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model")
    parser.add_argument("--stage", action="append", default=[])
    parser.add_argument("--batch", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--iters", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--autocast", choices=["bf16", "fp16"], default=None,
                        help="forward under torch.autocast(device, dtype=bfloat16 or float16)")
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--math", choices=["fp32", "tf32"], default="fp32",
                        help="FLOAT math on a GPU: strict FP32 or TF32 tensor cores")
    parser.add_argument("--channels_last", action="store_true",
                        help="NHWC tensors, as NVIDIA's examples train on a GPU and as oneDNN's "
                             "AMX kernels read them on a CPU")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(1701)
    gpu = args.device == "cuda"
    if gpu:
        torch.backends.cudnn.benchmark = True
        torch.backends.cuda.matmul.allow_tf32 = args.math == "tf32"
        torch.backends.cudnn.allow_tf32 = args.math == "tf32"

    net = parse_prototxt(args.model)
    layers = [l for l in net.get("layer", []) if layer_included(l, "TRAIN", set(args.stage))]
    graph = Graph(layers, args.batch)
    if gpu or args.channels_last:
        memory_format = torch.channels_last if args.channels_last else torch.contiguous_format
        graph.to(args.device, memory_format=memory_format)
        graph.inputs = {name: (t.to(args.device, memory_format=memory_format) if t.dim() == 4
                               else t.to(args.device)) for name, t in graph.inputs.items()}
    params = sum(p.numel() for p in graph.parameters())
    gflop = 3 * graph.flops / 1e9
    print(f"PARAMS {params}")
    print(f"GFLOP {gflop:.2f} (training: 3 x forward multiply-adds x 2 of conv and inner product)")
    dtype = torch.float16 if args.autocast == "fp16" else torch.bfloat16
    # fp16 gradients need a loss scale; GradScaler is what a PyTorch user runs.
    scaler = torch.amp.GradScaler("cuda") if gpu and args.autocast == "fp16" else None

    def step():
        # Autocast runs the forward in 16 bits where it has kernels; backward
        # follows the same types.
        with torch.autocast(args.device, dtype=dtype, enabled=args.autocast is not None):
            loss = graph()
        (scaler.scale(loss) if scaler else loss).backward()
        if gpu:
            torch.cuda.synchronize()

    for _ in range(args.warmup):
        graph.zero_grad(set_to_none=True)
        step()
    times = []
    for _ in range(args.iters):
        graph.zero_grad(set_to_none=True)
        start = time.perf_counter()
        step()
        times.append((time.perf_counter() - start) * 1000)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    device_peak = f" peak_gpu_mib={torch.cuda.max_memory_allocated() / 2**20:.0f}" if gpu else ""
    print(f"RESULT min_ms={min(times):.1f} mean_ms={sum(times) / len(times):.1f} "
          f"peak_rss_mib={rss:.0f}{device_peak} gflop={gflop:.2f} params={params}")


if __name__ == "__main__":
    main()
