#!/usr/bin/env python3
"""Writes the model zoo: models/<name>/{train_val,deploy,solver}.prototxt.

    python3 scripts/gen_models.py            # (re)write every model's prototxts
    python3 scripts/gen_models.py --check    # parse the written train_val/deploy files back
                                             # (by hand, no protobuf), infer shapes and count params

Each model is one function that describes its body once with the `Net` builder; the builder
renders it twice, as train_val.prototxt (data layers, fillers, param specs, loss, accuracy) and as
deploy.prototxt (an Input layer, no fillers or param specs, a Softmax "prob" output). The solver
is a plain list of fields. The README.md files next to them are written by hand.

Conventions shared by every train_val.prototxt:
  * LMDB `Data` layers for TRAIN and TEST, excluded when the net state has stage "dummy";
    `DummyData` layers of the same shapes, included only with stage "dummy", so that
    `--stage=dummy` runs without a dataset (gaussian images, uniform labels in [0, classes)).
  * Learnable weights get param { lr_mult: 1 decay_mult: 1 }, biases param { lr_mult: 2
    decay_mult: 0 } (the BVLC convention); BatchNorm's three statistics get lr_mult 0.
  * SoftmaxWithLoss in both phases, Accuracy (top-1, and top-5 for ImageNet) in TEST only.
  * A header comment states the dataset layout the Data layers expect (see dataset_layout).

The --check mode is deliberately independent of the builder: it reads the .prototxt text.
"""

import math
import os
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# ----------------------------------------------------------------------------------------------
# Protobuf text format output
# ----------------------------------------------------------------------------------------------

class Enum(str):
    """An enum value: written without quotes (pool: MAX, phase: TRAIN)."""


def fmt_scalar(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Enum):
        return str(value)
    if isinstance(value, str):
        return '"%s"' % value
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    text = repr(value)
    return ("%.12f" % value).rstrip("0") if "e" in text else text  # 4e-05 -> 0.00004


def render(fields, indent=0):
    """Renders a message, given as a list of (key, value) pairs, as text-format lines.

    A value that is a list is a nested message. Short messages of scalars go on one line:
    `param { lr_mult: 1 decay_mult: 1 }`.
    """
    pad = "  " * indent
    lines = []
    for key, value in fields:
        if isinstance(value, list):
            if indent > 0 and all(not isinstance(v, list) for _, v in value):
                inline = "%s%s { %s }" % (pad, key,
                                          " ".join("%s: %s" % (k, fmt_scalar(v)) for k, v in value))
                if len(inline) <= 80:
                    lines.append(inline)
                    continue
            lines.append("%s%s {" % (pad, key))
            lines.extend(render(value, indent + 1))
            lines.append("%s}" % pad)
        else:
            lines.append("%s%s: %s" % (pad, key, fmt_scalar(value)))
    return lines


def filler(type_, **kwargs):
    fields = [("type", type_)]
    for key in ("value", "mean", "std", "min", "max"):
        if key in kwargs:
            fields.append((key, kwargs[key]))
    return fields


def constant(value=0):
    return filler("constant", value=value) if value else filler("constant")


def shape(*dims):
    return [("dim", d) for d in dims]


WEIGHT = [("lr_mult", 1), ("decay_mult", 1)]
BIAS = [("lr_mult", 2), ("decay_mult", 0)]
NO_DECAY = [("lr_mult", 1), ("decay_mult", 0)]
FROZEN = [("lr_mult", 0), ("decay_mult", 0)]


# ----------------------------------------------------------------------------------------------
# Net builder
# ----------------------------------------------------------------------------------------------

class Net:
    """Collects layers; `deploy` drops fillers, param specs and training-only layers."""

    def __init__(self, name, deploy):
        self.name = name
        self.deploy = deploy
        self.layers = []
        self.layout = ""  # the train_val's dataset, for its header (see dataset_layout)

    def add(self, name, type_, bottoms, tops, *extra):
        fields = [("name", name), ("type", type_)]
        fields += [("bottom", b) for b in bottoms]
        fields += [("top", t) for t in tops]
        for item in extra:
            if item is not None:
                fields.append(item)
        self.layers.append(fields)
        return tops[0] if tops else None

    def text(self, header):
        lines = ["# " + line if line else "#" for line in header.strip().splitlines()]
        lines.append('name: "%s"' % self.name)
        for layer in self.layers:
            lines.extend(render([("layer", layer)]))
        return "\n".join(lines) + "\n"

    # -- parameterized layers -------------------------------------------------------------------

    def _params(self, specs):
        return [] if self.deploy else [("param", spec) for spec in specs]

    def conv(self, name, bottom, num_output, kernel, stride=1, pad=0, group=1, bias=True,
             weight_filler=None, bias_filler=None, top=None, weight_param=WEIGHT):
        p = [("num_output", num_output)]
        if not bias:
            p.append(("bias_term", False))
        if pad:
            p.append(("pad", pad))
        p.append(("kernel_size", kernel))
        if stride != 1:
            p.append(("stride", stride))
        if group != 1:
            p.append(("group", group))
        if not self.deploy:
            p.append(("weight_filler", weight_filler))
            if bias:
                p.append(("bias_filler", bias_filler or constant()))
        specs = [weight_param] + ([BIAS] if bias else [])
        return self.add(name, "Convolution", [bottom], [top or name], *self._params(specs),
                        ("convolution_param", p))

    def ip(self, name, bottom, num_output, weight_filler, bias_filler=None, top=None):
        p = [("num_output", num_output)]
        if not self.deploy:
            p += [("weight_filler", weight_filler), ("bias_filler", bias_filler or constant())]
        return self.add(name, "InnerProduct", [bottom], [top or name],
                        *self._params([WEIGHT, BIAS]), ("inner_product_param", p))

    def batch_norm(self, name, blob, top=None):
        """In place unless `top` is given. Train: use_global_stats left to the phase default
        (batch statistics in TRAIN, stored ones in TEST); deploy: stored statistics, said
        explicitly."""
        extra = self._params([FROZEN, FROZEN, FROZEN])
        if self.deploy:
            extra.append(("batch_norm_param", [("use_global_stats", True)]))
        return self.add(name, "BatchNorm", [blob], [top or blob], *extra)

    def scale(self, name, blob, param=None):
        """In place; a learned per-channel scale (gamma) and bias (beta)."""
        p = [("bias_term", True)]
        if not self.deploy:
            p += [("filler", constant(1)), ("bias_filler", constant())]
        specs = [param, param] if param else []
        return self.add(name, "Scale", [blob], [blob], *self._params(specs), ("scale_param", p))

    # -- parameterless layers -------------------------------------------------------------------

    def relu(self, name, blob):
        return self.add(name, "ReLU", [blob], [blob])

    def pool(self, name, bottom, method, kernel=None, stride=None, pad=0, global_pooling=False,
             top=None, ceil_mode=True):
        """ceil_mode=False: floor rounding of the output size (PyTorch's), written as the
        forks' `ceil_mode: false` that DenseNet prototxts use."""
        p = [("pool", Enum(method))]
        if global_pooling:
            p.append(("global_pooling", True))
        else:
            p.append(("kernel_size", kernel))
            p.append(("stride", stride))
            if pad:
                p.append(("pad", pad))
            if not ceil_mode:
                p.append(("ceil_mode", False))
        return self.add(name, "Pooling", [bottom], [top or name], ("pooling_param", p))

    def lrn(self, name, bottom, top=None, local_size=5, alpha=0.0001, beta=0.75):
        p = [("local_size", local_size), ("alpha", alpha), ("beta", beta)]
        return self.add(name, "LRN", [bottom], [top or name], ("lrn_param", p))

    def dropout(self, name, blob, ratio):
        return self.add(name, "Dropout", [blob], [blob], ("dropout_param", [("dropout_ratio", ratio)]))

    def concat(self, name, bottoms, top):
        return self.add(name, "Concat", bottoms, [top])

    def eltwise_sum(self, name, bottoms, top):
        return self.add(name, "Eltwise", bottoms, [top],
                        ("eltwise_param", [("operation", Enum("SUM"))]))

    # -- inputs and outputs ---------------------------------------------------------------------

    def inputs(self, spec):
        """Train: LMDB Data (TRAIN, TEST) + DummyData (stage dummy). Deploy: one Input."""
        c, h, w = spec["shape"]
        if self.deploy:
            self.add("data", "Input", [], ["data"],
                     ("input_param", [("shape", shape(spec["deploy_batch"], c, h, w))]))
            return "data"
        dataset = spec["dataset"]
        self.layout = dataset_layout(spec)
        for phase, split, batch in (("TRAIN", "train", spec["train_batch"]),
                                    ("TEST", "val", spec["test_batch"])):
            t = []
            if spec.get("scale"):
                t.append(("scale", spec["scale"]))
            if phase == "TRAIN" and spec["mirror"]:
                t.append(("mirror", True))
            if spec.get("crop"):
                t.append(("crop_size", spec["crop"]))
            t += [("mean_value", m) for m in spec["mean"]]
            source = "data/%s/%s_%s_lmdb" % (dataset, dataset, split)
            self.add("data", "Data", [], ["data", "label"],
                     ("include", [("phase", Enum(phase)), ("not_stage", "dummy")]),
                     ("transform_param", t),
                     ("data_param", [("source", source), ("batch_size", batch),
                                     ("backend", Enum("LMDB"))]))
        top_label = spec["classes"] - 0.01
        for phase, batch in (("TRAIN", spec["train_batch"]), ("TEST", spec["test_batch"])):
            self.add("data", "DummyData", [], ["data", "label"],
                     ("include", [("phase", Enum(phase)), ("stage", "dummy")]),
                     ("dummy_data_param", [
                         ("shape", shape(batch, c, h, w)),
                         ("shape", shape(batch)),
                         ("data_filler", filler("gaussian", std=1)),
                         ("data_filler", filler("uniform", min=0, max=top_label))]))
        return "data"

    def outputs(self, logits, top5, prefix="", loss_weight=None, deploy_prob=True):
        """Train: SoftmaxWithLoss and TEST-only Accuracy. Deploy: Softmax "prob"."""
        if self.deploy:
            if deploy_prob:
                self.add("prob", "Softmax", [logits], ["prob"])
            return
        # BVLC GoogLeNet names its losses loss1/loss (top loss1/loss1), ..., loss3/loss3.
        name = (prefix + ("loss3" if prefix == "loss3/" else "loss")) if prefix else "loss"
        top = prefix + prefix[:-1] if prefix else "loss"
        weight = [("loss_weight", loss_weight)] if loss_weight is not None else []
        acc_names = ([prefix + "top-1", prefix + "top-5"] if prefix else
                     ["accuracy", "accuracy_top5"])
        self.add(acc_names[0], "Accuracy", [logits, "label"], [acc_names[0]],
                 ("include", [("phase", Enum("TEST"))]))
        if top5:
            self.add(acc_names[1], "Accuracy", [logits, "label"], [acc_names[1]],
                     ("include", [("phase", Enum("TEST"))]),
                     ("accuracy_param", [("top_k", 5)]))
        self.add(name, "SoftmaxWithLoss", [logits, "label"], [top], *weight)


# ImageNet (ILSVRC 2012) inputs. The BGR means are those the releases subtract.
IMAGENET_MEAN = (104, 117, 123)


def imagenet(crop, train_batch, test_batch=50, mean=IMAGENET_MEAN, scale=None, mirror=True):
    spec = dict(dataset="ilsvrc12", classes=1000, shape=(3, crop, crop), crop=crop, mirror=mirror,
                mean=mean, train_batch=train_batch, test_batch=test_batch, deploy_batch=10)
    if scale:
        spec["scale"] = scale
    return spec


def dataset_layout(spec):
    """The header lines of a train_val.prototxt that say what its Data layers expect."""
    c, h, w = spec["shape"]
    if spec["dataset"] == "ilsvrc12":
        stored = ("3 x 256 x 256 uint8 BGR pixels (convert_imageset --resize_height=256 "
                  "--resize_width=256, as Caffe's create_imagenet.sh; raw, or JPEG/PNG with "
                  "--encoded)")
        order = "B, G, R"
    else:
        stored = "%d x %d x %d uint8 pixels in the CIFAR-10 binary's R, G, B planes" % (c, h, w)
        order = "R, G, B"
    dataset = ("Dataset layout: LMDBs data/{0}/{0}_train_lmdb and {0}_val_lmdb of Caffe Datum "
               "records, each {1}, label = class index in [0, {2}).").format(
                   spec["dataset"], stored, spec["classes"])
    steps = []
    if spec.get("crop"):
        steps.append("%d x %d crop (random in TRAIN, centre in TEST)" % (spec["crop"], spec["crop"]))
    if spec["mirror"]:
        steps.append("random mirror in TRAIN")
    steps.append("minus mean_value %s (%s)" % (", ".join(fmt_scalar(m) for m in spec["mean"]),
                                               order))
    if spec.get("scale"):
        steps.append("times scale %s" % fmt_scalar(spec["scale"]))
    transform = "Transform: %s; no mean file." % ", ".join(steps)
    wrap = dict(width=96, subsequent_indent="  ")
    return "\n".join(textwrap.wrap(dataset, **wrap) + textwrap.wrap(transform, **wrap))


def gaussian(std):
    return filler("gaussian", std=std)


XAVIER = filler("xavier")
MSRA = filler("msra")


# ----------------------------------------------------------------------------------------------
# The models
# ----------------------------------------------------------------------------------------------

CIFAR10 = dict(dataset="cifar10", classes=10, shape=(3, 32, 32), crop=0, mirror=False,
               # Per-channel means of the CIFAR-10 training set, in the LMDB's channel order
               # (convert_cifar keeps the binary's R, G, B planes).
               mean=(125.3, 123.0, 113.9), train_batch=100, test_batch=100, deploy_batch=1)


def cifar10_quick(n):
    """BVLC examples/cifar10 "quick" net: 3 conv + 2 ip, about 145k params."""
    x = n.inputs(CIFAR10)
    x = n.conv("conv1", x, 32, 5, pad=2, weight_filler=gaussian(0.0001))
    x = n.pool("pool1", x, "MAX", 3, 2)
    n.relu("relu1", x)
    x = n.conv("conv2", x, 32, 5, pad=2, weight_filler=gaussian(0.01))
    n.relu("relu2", x)
    x = n.pool("pool2", x, "AVE", 3, 2)
    x = n.conv("conv3", x, 64, 5, pad=2, weight_filler=gaussian(0.01))
    n.relu("relu3", x)
    x = n.pool("pool3", x, "AVE", 3, 2)
    x = n.ip("ip1", x, 64, gaussian(0.1))
    x = n.ip("ip2", x, 10, gaussian(0.1))
    n.outputs(x, top5=False)


def alexnet_body(n, caffenet):
    """AlexNet as BVLC trains it (one tower, groups for the two-GPU split). CaffeNet pools
    before local response normalization, and its non-zero biases start at 1 (the paper's
    value) where BVLC's AlexNet uses 0.1."""
    b = 1 if caffenet else 0.1
    x = n.inputs(imagenet(227, train_batch=256))
    for i, (num, kernel, stride, pad, group, bias) in enumerate(
            [(96, 11, 4, 0, 1, 0), (256, 5, 1, 2, 2, b)], start=1):
        x = n.conv("conv%d" % i, x, num, kernel, stride=stride, pad=pad, group=group,
                   weight_filler=gaussian(0.01), bias_filler=constant(bias))
        n.relu("relu%d" % i, x)
        if caffenet:
            x = n.pool("pool%d" % i, x, "MAX", 3, 2)
            x = n.lrn("norm%d" % i, x)
        else:
            x = n.lrn("norm%d" % i, x)
            x = n.pool("pool%d" % i, x, "MAX", 3, 2)
    for i, (num, group, bias) in zip((3, 4, 5), [(384, 1, 0), (384, 2, b), (256, 2, b)]):
        x = n.conv("conv%d" % i, x, num, 3, pad=1, group=group,
                   weight_filler=gaussian(0.01), bias_filler=constant(bias))
        n.relu("relu%d" % i, x)
    x = n.pool("pool5", x, "MAX", 3, 2)
    for i in (6, 7):
        x = n.ip("fc%d" % i, x, 4096, gaussian(0.005), constant(b))
        n.relu("relu%d" % i, x)
        n.dropout("drop%d" % i, x, 0.5)
    x = n.ip("fc8", x, 1000, gaussian(0.01))
    n.outputs(x, top5=True)


def alexnet(n):
    alexnet_body(n, caffenet=False)


def caffenet(n):
    alexnet_body(n, caffenet=True)


# GoogLeNet inception modules: (name, #1x1, #3x3 reduce, #3x3, #5x5 reduce, #5x5, pool proj),
# Table 1 of Szegedy et al. 2015.
INCEPTIONS = [
    ("3a", 64, 96, 128, 16, 32, 32),
    ("3b", 128, 128, 192, 32, 96, 64),
    "pool3/3x3_s2",
    ("4a", 192, 96, 208, 16, 48, 64),
    ("4b", 160, 112, 224, 24, 64, 64),
    ("4c", 128, 128, 256, 24, 64, 64),
    ("4d", 112, 144, 288, 32, 64, 64),
    ("4e", 256, 160, 320, 32, 128, 128),
    "pool4/3x3_s2",
    ("5a", 256, 160, 320, 32, 128, 128),
    ("5b", 384, 192, 384, 48, 128, 128),
]


def googlenet(n):
    """BVLC GoogLeNet: Inception v1 with the two auxiliary classifiers (loss weight 0.3) on
    inception_4a and inception_4d; the deploy net has neither."""
    def conv_relu(name, bottom, num, kernel, stride=1, pad=0, relu_name=None):
        top = n.conv(name, bottom, num, kernel, stride=stride, pad=pad,
                     weight_filler=XAVIER, bias_filler=constant(0.2))
        n.relu(relu_name or name.replace("/", "/relu_", 1), top)
        return top

    x = n.inputs(imagenet(224, train_batch=32))
    x = conv_relu("conv1/7x7_s2", x, 64, 7, stride=2, pad=3, relu_name="conv1/relu_7x7")
    x = n.pool("pool1/3x3_s2", x, "MAX", 3, 2)
    x = n.lrn("pool1/norm1", x)
    x = conv_relu("conv2/3x3_reduce", x, 64, 1)
    x = conv_relu("conv2/3x3", x, 192, 3, pad=1)
    x = n.lrn("conv2/norm2", x)
    x = n.pool("pool2/3x3_s2", x, "MAX", 3, 2)
    for spec in INCEPTIONS:
        if isinstance(spec, str):
            x = n.pool(spec, x, "MAX", 3, 2)
            continue
        name, n1, n3r, n3, n5r, n5, proj = spec
        p = "inception_%s/" % name
        b1 = conv_relu(p + "1x1", x, n1, 1)
        b2 = conv_relu(p + "3x3_reduce", x, n3r, 1)
        b2 = conv_relu(p + "3x3", b2, n3, 3, pad=1)
        b3 = conv_relu(p + "5x5_reduce", x, n5r, 1)
        b3 = conv_relu(p + "5x5", b3, n5, 5, pad=2)
        b4 = n.pool(p + "pool", x, "MAX", 3, 1, pad=1)
        b4 = conv_relu(p + "pool_proj", b4, proj, 1)
        x = n.concat(p + "output", [b1, b2, b3, b4], p + "output")
        if name in ("4a", "4d") and not n.deploy:
            aux_head(n, "loss1/" if name == "4a" else "loss2/", x)
    x = n.pool("pool5/7x7_s1", x, "AVE", 7, 1)
    n.dropout("pool5/drop_7x7_s1", x, 0.4)
    x = n.ip("loss3/classifier", x, 1000, XAVIER)
    n.outputs(x, top5=True, prefix="loss3/", loss_weight=1)


def aux_head(n, p, x):
    x = n.pool(p + "ave_pool", x, "AVE", 5, 3)
    x = n.conv(p + "conv", x, 128, 1, weight_filler=XAVIER, bias_filler=constant(0.2))
    n.relu(p + "relu_conv", x)
    x = n.ip(p + "fc", x, 1024, XAVIER, constant(0.2))
    n.relu(p + "relu_fc", x)
    n.dropout(p + "drop_fc", x, 0.7)
    x = n.ip(p + "classifier", x, 1000, XAVIER)
    n.outputs(x, top5=True, prefix=p, loss_weight=0.3)


def vgg16(n):
    """VGG configuration D: 13 3x3 convolutions in 5 blocks, 3 fully connected layers."""
    x = n.inputs(imagenet(224, train_batch=64, mean=(103.939, 116.779, 123.68)))
    for block, (num, convs) in enumerate([(64, 2), (128, 2), (256, 3), (512, 3), (512, 3)], 1):
        for i in range(1, convs + 1):
            x = n.conv("conv%d_%d" % (block, i), x, num, 3, pad=1, weight_filler=XAVIER)
            n.relu("relu%d_%d" % (block, i), x)
        x = n.pool("pool%d" % block, x, "MAX", 2, 2)
    for i in (6, 7):
        x = n.ip("fc%d" % i, x, 4096, XAVIER)
        n.relu("relu%d" % i, x)
        n.dropout("drop%d" % i, x, 0.5)
    x = n.ip("fc8", x, 1000, XAVIER)
    n.outputs(x, top5=True)


def resnet50(n):
    """ResNet-50 as in Kaiming He's Caffe release: bias-free convolutions, each followed by
    BatchNorm + Scale (bias_term), bottleneck blocks with the stride on the first 1x1."""
    def conv_bn(name, suffix, bottom, num, kernel, stride=1, pad=0, relu=True):
        top = n.conv(name, bottom, num, kernel, stride=stride, pad=pad, bias=False,
                     weight_filler=MSRA)
        n.batch_norm("bn" + suffix, top)
        n.scale("scale" + suffix, top)
        if relu:
            n.relu(name + "_relu", top)
        return top

    x = n.inputs(imagenet(224, train_batch=32))
    x = conv_bn("conv1", "_conv1", x, 64, 7, stride=2, pad=3)
    x = n.pool("pool1", x, "MAX", 3, 2)
    for stage, (width, blocks) in enumerate([(64, 3), (128, 4), (256, 6), (512, 3)], start=2):
        for b in range(blocks):
            unit = "%d%s" % (stage, "abcdef"[b])
            stride = 2 if (b == 0 and stage > 2) else 1
            if b == 0:
                shortcut = conv_bn("res%s_branch1" % unit, "%s_branch1" % unit, x, 4 * width, 1,
                                   stride=stride, relu=False)
            else:
                shortcut = x
            y = conv_bn("res%s_branch2a" % unit, "%s_branch2a" % unit, x, width, 1, stride=stride)
            y = conv_bn("res%s_branch2b" % unit, "%s_branch2b" % unit, y, width, 3, pad=1)
            y = conv_bn("res%s_branch2c" % unit, "%s_branch2c" % unit, y, 4 * width, 1,
                        relu=False)
            x = n.eltwise_sum("res" + unit, [shortcut, y], "res" + unit)
            n.relu("res%s_relu" % unit, x)
    x = n.pool("pool5", x, "AVE", 7, 1)
    x = n.ip("fc1000", x, 1000, gaussian(0.01))
    n.outputs(x, top5=True)


# SqueezeNet v1.1 fire modules: (name, squeeze 1x1, expand 1x1 = expand 3x3); a string is a
# max pooling between them.
FIRES = [("fire2", 16, 64), ("fire3", 16, 64), "pool3",
         ("fire4", 32, 128), ("fire5", 32, 128), "pool5",
         ("fire6", 48, 192), ("fire7", 48, 192), ("fire8", 64, 256), ("fire9", 64, 256)]


def squeezenet1_1(n):
    # The v1.1 release crops but does not mirror.
    x = n.inputs(imagenet(227, train_batch=32, test_batch=25, mirror=False))
    x = n.conv("conv1", x, 64, 3, stride=2, weight_filler=XAVIER)
    n.relu("relu_conv1", x)
    x = n.pool("pool1", x, "MAX", 3, 2)
    for spec in FIRES:
        if isinstance(spec, str):
            x = n.pool(spec, x, "MAX", 3, 2)
            continue
        name, squeeze, expand = spec
        s = n.conv(name + "/squeeze1x1", x, squeeze, 1, weight_filler=XAVIER)
        n.relu(name + "/relu_squeeze1x1", s)
        e1 = n.conv(name + "/expand1x1", s, expand, 1, weight_filler=XAVIER)
        n.relu(name + "/relu_expand1x1", e1)
        e3 = n.conv(name + "/expand3x3", s, expand, 3, pad=1, weight_filler=XAVIER)
        n.relu(name + "/relu_expand3x3", e3)
        x = n.concat(name + "/concat", [e1, e3], name + "/concat")
    n.dropout("drop9", x, 0.5)
    x = n.conv("conv10", x, 1000, 1, weight_filler=gaussian(0.01))
    n.relu("relu_conv10", x)
    x = n.pool("pool10", x, "AVE", global_pooling=True)
    n.outputs(x, top5=True)


# MobileNet v1 body after conv1, Table 1 of Howard et al. 2017: (name, pointwise outputs,
# depthwise stride).
MOBILENET = [("conv2_1", 64, 1), ("conv2_2", 128, 2), ("conv3_1", 128, 1), ("conv3_2", 256, 2),
             ("conv4_1", 256, 1), ("conv4_2", 512, 2), ("conv5_1", 512, 1), ("conv5_2", 512, 1),
             ("conv5_3", 512, 1), ("conv5_4", 512, 1), ("conv5_5", 512, 1), ("conv5_6", 1024, 2),
             ("conv6", 1024, 1)]


def mobilenet_v1(n):
    """MobileNet v1, width 1.0, 224x224: depthwise separable convolutions, each conv
    followed by BatchNorm + Scale + ReLU."""
    def conv_bn_relu(name, relu_name, bottom, num, kernel, stride=1, pad=0, group=1,
                     decay=True):
        top = n.conv(name, bottom, num, kernel, stride=stride, pad=pad, group=group, bias=False,
                     weight_filler=MSRA, weight_param=WEIGHT if decay else NO_DECAY)
        n.batch_norm(name + "/bn", top)
        n.scale(name + "/scale", top, param=NO_DECAY)
        n.relu(relu_name, top)
        return top

    x = n.inputs(imagenet(224, train_batch=64, mean=(103.94, 116.78, 123.68), scale=0.017))
    x = conv_bn_relu("conv1", "relu1", x, 32, 3, stride=2, pad=1)
    channels = 32
    for name, num, stride in MOBILENET:
        relu = "relu" + name[len("conv"):]
        # Depthwise: one 3x3 filter per channel (group = channels), no weight decay (paper, 3.2).
        x = conv_bn_relu(name + "/dw", relu + "/dw", x, channels, 3, stride=stride, pad=1,
                         group=channels, decay=False)
        x = conv_bn_relu(name + "/sep", relu + "/sep", x, num, 1)
        channels = num
    x = n.pool("pool6", x, "AVE", global_pooling=True)
    x = n.ip("fc7", x, 1000, MSRA)
    n.outputs(x, top5=True)


DENSENET121_BLOCKS = (6, 12, 24, 16)  # layers per dense block
DENSENET_GROWTH = 32                  # k: channels each layer adds
DENSENET_BOTTLENECK = 4               # the 1x1 convolution gives 4k channels


def densenet121(n):
    """DenseNet-121 (DenseNet-BC, k = 32): BN-ReLU-Conv layers, each a 1x1 bottleneck to 4k
    channels then a 3x3 to k, concatenated onto the block's input; between blocks a transition
    (BN-ReLU, 1x1 convolution halving the channels, 2x2 average pooling). Convolutions have no
    bias; every BatchNorm is followed by a Scale (gamma, beta). The stem's max pool rounds its
    output size down (ceil_mode: false) as the reference implementation does: 112 -> 56."""
    def bn_scale_relu(prefix, relu_name, bottom, top=None):
        top = n.batch_norm(prefix + "/bn", bottom, top=top)
        n.scale(prefix + "/scale", top)
        n.relu(relu_name, top)
        return top

    def conv(name, bottom, num, kernel, stride=1, pad=0):
        return n.conv(name, bottom, num, kernel, stride=stride, pad=pad, bias=False,
                      weight_filler=MSRA)

    x = n.inputs(imagenet(224, train_batch=32, mean=(103.94, 116.78, 123.68), scale=0.017))
    x = conv("conv1", x, 64, 7, stride=2, pad=3)
    bn_scale_relu("conv1", "relu1", x)
    x = n.pool("pool1", x, "MAX", 3, 2, pad=1, ceil_mode=False)
    channels = 64
    for block, layers in enumerate(DENSENET121_BLOCKS, start=2):
        for i in range(1, layers + 1):
            p = "conv%d_%d" % (block, i)
            # The block's features stay whole for the layers after this one: the first BN
            # writes a new blob, the rest work in place on this layer's own outputs.
            y = bn_scale_relu(p + "/x1", "relu%d_%d/x1" % (block, i), x, top=p + "/x1/bn")
            y = conv(p + "/x1", y, DENSENET_BOTTLENECK * DENSENET_GROWTH, 1)
            bn_scale_relu(p + "/x2", "relu%d_%d/x2" % (block, i), y)
            y = conv(p + "/x2", y, DENSENET_GROWTH, 3, pad=1)
            x = n.concat("concat_%d_%d" % (block, i), [x, y], "concat_%d_%d" % (block, i))
            channels += DENSENET_GROWTH
        p = "conv%d_blk" % block
        bn_scale_relu(p, "relu%d_blk" % block, x)
        if block - 1 < len(DENSENET121_BLOCKS):  # a transition (compression 0.5)
            channels //= 2
            x = conv(p, x, channels, 1)
            x = n.pool("pool%d" % block, x, "AVE", 2, 2)
    x = n.pool("pool5", x, "AVE", global_pooling=True)
    x = n.ip("fc6", x, 1000, gaussian(0.01))
    n.outputs(x, top5=True)


# ----------------------------------------------------------------------------------------------
# Solvers: (field, value) in the order they are written; `net` and `snapshot_prefix` are added.
# ----------------------------------------------------------------------------------------------

SOLVERS = {
    # BVLC cifar10_quick_solver.prototxt (4000 iterations at 0.001) followed by
    # cifar10_quick_solver_lr1.prototxt (1000 more at 0.0001), as one multistep schedule.
    "cifar10_quick": [
        ("test_iter", 100), ("test_interval", 500),
        ("base_lr", 0.001), ("momentum", 0.9), ("weight_decay", 0.004),
        ("lr_policy", "multistep"), ("gamma", 0.1), ("stepvalue", 4000),
        ("display", 100), ("max_iter", 5000), ("snapshot", 5000)],
    # BVLC models/bvlc_alexnet/solver.prototxt
    "alexnet": [
        ("test_iter", 1000), ("test_interval", 1000),
        ("base_lr", 0.01), ("lr_policy", "step"), ("gamma", 0.1), ("stepsize", 100000),
        ("display", 20), ("max_iter", 450000), ("momentum", 0.9), ("weight_decay", 0.0005),
        ("snapshot", 10000)],
    # BVLC models/bvlc_reference_caffenet/solver.prototxt
    "caffenet": [
        ("test_iter", 1000), ("test_interval", 1000),
        ("base_lr", 0.01), ("lr_policy", "step"), ("gamma", 0.1), ("stepsize", 100000),
        ("display", 20), ("max_iter", 450000), ("momentum", 0.9), ("weight_decay", 0.0005),
        ("snapshot", 10000)],
    # BVLC models/bvlc_googlenet/quick_solver.prototxt (the released model's schedule)
    "googlenet": [
        ("test_iter", 1000), ("test_interval", 4000), ("test_initialization", False),
        ("display", 40), ("average_loss", 40),
        ("base_lr", 0.01), ("lr_policy", "poly"), ("power", 0.5), ("max_iter", 2400000),
        ("momentum", 0.9), ("weight_decay", 0.0002), ("snapshot", 40000)],
    # Simonyan & Zisserman, section 3.1: batch 256 (64 x iter_size 4), momentum 0.9, weight
    # decay 5e-4, lr 0.01 divided by 10 three times, 370k iterations (74 epochs).
    "vgg16": [
        ("test_iter", 1000), ("test_interval", 5000), ("iter_size", 4),
        ("base_lr", 0.01), ("lr_policy", "step"), ("gamma", 0.1), ("stepsize", 100000),
        ("display", 20), ("max_iter", 370000), ("momentum", 0.9), ("weight_decay", 0.0005),
        ("snapshot", 10000)],
    # He et al., section 3.4: batch 256 (32 x iter_size 8), lr 0.1 divided by 10 on plateaus,
    # up to 600k iterations, weight decay 1e-4, momentum 0.9.
    # test_initialization false: before any training step BatchNorm's stored statistics are
    # zero, and a TEST pass through them divides by sqrt(eps) at every layer (NaN loss).
    "resnet50": [
        ("test_iter", 1000), ("test_interval", 5000), ("test_initialization", False),
        ("iter_size", 8),
        ("base_lr", 0.1), ("lr_policy", "multistep"), ("gamma", 0.1),
        ("stepvalue", 150000), ("stepvalue", 300000), ("stepvalue", 450000),
        ("display", 20), ("max_iter", 600000), ("momentum", 0.9), ("weight_decay", 0.0001),
        ("snapshot", 10000)],
    # forresti/SqueezeNet SqueezeNet_v1.1/solver.prototxt (batch 32 x iter_size 16 = 512)
    "squeezenet1.1": [
        ("test_iter", 2000), ("test_interval", 1000), ("test_initialization", False),
        ("iter_size", 16), ("base_lr", 0.04), ("lr_policy", "poly"), ("power", 1.0),
        ("display", 40), ("average_loss", 40), ("max_iter", 170000),
        ("momentum", 0.9), ("weight_decay", 0.0002), ("snapshot", 1000), ("random_seed", 42)],
    # SGD replacement for the paper's asynchronous RMSProp (see the README): batch 256
    # (64 x iter_size 4), 90 epochs with lr / 10 at epochs 30 and 60, weight decay 4e-5.
    "mobilenet_v1": [
        ("test_iter", 1000), ("test_interval", 5005), ("test_initialization", False),
        ("iter_size", 4),
        ("base_lr", 0.1), ("lr_policy", "multistep"), ("gamma", 0.1),
        ("stepvalue", 150150), ("stepvalue", 300300),
        ("display", 20), ("max_iter", 450450), ("momentum", 0.9), ("weight_decay", 0.00004),
        ("snapshot", 10000)],
    # Huang et al., section 4.2: batch 256 (32 x iter_size 8), 90 epochs, lr 0.1 divided by
    # 10 at epochs 30 and 60, weight decay 1e-4, Nesterov momentum 0.9.
    "densenet121": [
        ("test_iter", 1000), ("test_interval", 5005), ("test_initialization", False),
        ("iter_size", 8), ("type", "Nesterov"),
        ("base_lr", 0.1), ("lr_policy", "multistep"), ("gamma", 0.1),
        ("stepvalue", 150150), ("stepvalue", 300300),
        ("display", 20), ("max_iter", 450450), ("momentum", 0.9), ("weight_decay", 0.0001),
        ("snapshot", 10000)],
}

# name -> (net name, builder, one-line description for the file header)
MODELS = {
    "cifar10_quick": ("CIFAR10_quick", cifar10_quick,
                      "CIFAR-10 \"quick\" net of Caffe's examples/cifar10 (Jia et al., 2014)."),
    "alexnet": ("AlexNet", alexnet,
                "AlexNet (Krizhevsky, Sutskever, Hinton, 2012) as in BVLC models/bvlc_alexnet."),
    "caffenet": ("CaffeNet", caffenet,
                 "CaffeNet, BVLC models/bvlc_reference_caffenet: AlexNet with pooling before LRN."),
    "googlenet": ("GoogleNet", googlenet,
                  "GoogLeNet / Inception v1 (Szegedy et al., 2015) as in BVLC models/bvlc_googlenet."),
    "vgg16": ("VGG_ILSVRC_16_layers", vgg16,
              "VGG-16, configuration D of Simonyan & Zisserman (2014)."),
    "resnet50": ("ResNet-50", resnet50,
                 "ResNet-50 (He, Zhang, Ren, Sun, 2016) as in the authors' Caffe release."),
    "squeezenet1.1": ("SqueezeNet_v1.1", squeezenet1_1,
                      "SqueezeNet v1.1 (Iandola et al., 2016; v1.1 from forresti/SqueezeNet)."),
    "mobilenet_v1": ("MobileNet_v1", mobilenet_v1,
                     "MobileNet v1, width 1.0, 224x224 (Howard et al., 2017)."),
    "densenet121": ("DenseNet-121", densenet121,
                    "DenseNet-121 (Huang, Liu, van der Maaten, Weinberger, 2017), k = 32."),
}

GENERATED = "Generated by scripts/gen_models.py: edit the generator, not this file."


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def generate():
    for model, (net_name, build, about) in MODELS.items():
        folder = os.path.join(ROOT, "models", model)
        for kind in ("train_val", "deploy"):
            net = Net(net_name, deploy=kind == "deploy")
            build(net)
            if kind == "train_val":
                header = "%s\n%s\n%s\nDataset-free run: add --stage=dummy (DummyData inputs).\n" % (
                    about, GENERATED, net.layout)
            else:
                header = "%s\nDeploy net: one Input blob, output \"prob\".\n%s\n" % (
                    about, GENERATED)
            write(os.path.join(folder, kind + ".prototxt"), net.text(header))
        fields = [("net", "models/%s/train_val.prototxt" % model)] + SOLVERS[model]
        fields += [("snapshot_prefix", "models/%s/%s" % (model, model)),
                   ("solver_mode", Enum("GPU"))]
        header = "Solver for %s\n%s\n" % (about, GENERATED)
        lines = ["# " + line for line in header.strip().splitlines()] + render(fields)
        write(os.path.join(folder, "solver.prototxt"), "\n".join(lines) + "\n")
        print("wrote models/%s/{train_val,deploy,solver}.prototxt" % model)


# ----------------------------------------------------------------------------------------------
# --check: parse the written text back, filter by net state, infer shapes, count parameters
# ----------------------------------------------------------------------------------------------

def tokenize(text):
    tokens, i = [], 0
    while i < len(text):
        c = text[i]
        if c.isspace():
            i += 1
        elif c == "#":
            while i < len(text) and text[i] != "\n":
                i += 1
        elif c in "{}:":
            tokens.append(c)
            i += 1
        elif c == '"':
            j = text.index('"', i + 1)
            tokens.append(("str", text[i + 1:j]))
            i = j + 1
        else:
            j = i
            while j < len(text) and not text[j].isspace() and text[j] not in '{}:#"':
                j += 1
            tokens.append(text[i:j])
            i = j
    return tokens


def parse(tokens, pos=0):
    """Returns (message as {key: [values]}, next position)."""
    msg = {}
    while pos < len(tokens) and tokens[pos] != "}":
        key = tokens[pos]
        if tokens[pos + 1] == ":" and tokens[pos + 2] != "{":
            value = tokens[pos + 2]
            value = value[1] if isinstance(value, tuple) else value
            pos += 3
        else:
            pos += 2 if tokens[pos + 1] == "{" else 3
            value, pos = parse(tokens, pos)
            pos += 1  # "}"
        msg.setdefault(key, []).append(value)
    return msg, pos


def get(msg, key, default=None):
    values = msg.get(key)
    return values[0] if values else default


def rule_matches(rule, phase, stages):
    if "phase" in rule and get(rule, "phase") != phase:
        return False
    if any(s not in stages for s in rule.get("stage", [])):
        return False
    if any(s in stages for s in rule.get("not_stage", [])):
        return False
    return True


def included(layer, phase, stages):
    if "include" in layer:
        return any(rule_matches(r, phase, stages) for r in layer["include"])
    return not any(rule_matches(r, phase, stages) for r in layer.get("exclude", []))


def conv_out(size, kernel, stride, pad):
    return (size + 2 * pad - kernel) // stride + 1


def pool_out(size, kernel, stride, pad, ceil_mode=True):
    rounding = math.ceil if ceil_mode else math.floor  # Caffe rounds up unless told otherwise
    out = int(rounding((size + 2 * pad - kernel) / stride)) + 1
    if pad and (out - 1) * stride >= size + pad:
        out -= 1
    return out


def analyze(path, phase, stages):
    """Shapes of every blob and the parameter counts of the net in this state."""
    with open(path) as f:
        net, _ = parse(tokenize(f.read()))
    blobs = {}
    counts = {"conv_ip": 0, "scale": 0, "bn_stats": 0}
    for layer in net["layer"]:
        if not included(layer, phase, stages):
            continue
        name, kind = get(layer, "name"), get(layer, "type")
        bottoms = [blobs[b] for b in layer.get("bottom", [])]
        tops = layer.get("top", [])
        if kind == "DummyData":
            p = get(layer, "dummy_data_param")
            shapes = [[int(d) for d in s["dim"]] for s in p["shape"]]
        elif kind == "Input":
            shapes = [[int(d) for d in s["dim"]] for s in get(layer, "input_param")["shape"]]
        elif kind == "Convolution":
            p = get(layer, "convolution_param")
            n, c, h, w = bottoms[0]
            k, s = int(get(p, "kernel_size")), int(get(p, "stride", 1))
            pad, group = int(get(p, "pad", 0)), int(get(p, "group", 1))
            num = int(get(p, "num_output"))
            assert c % group == 0 and num % group == 0, name
            counts["conv_ip"] += num * (c // group) * k * k
            if get(p, "bias_term", "true") == "true":
                counts["conv_ip"] += num
            shapes = [[n, num, conv_out(h, k, s, pad), conv_out(w, k, s, pad)]]
        elif kind == "Pooling":
            p = get(layer, "pooling_param")
            n, c, h, w = bottoms[0]
            if get(p, "global_pooling") == "true":
                shapes = [[n, c, 1, 1]]
            else:
                k, s = int(get(p, "kernel_size")), int(get(p, "stride", 1))
                pad = int(get(p, "pad", 0))
                ceil_mode = get(p, "ceil_mode", "true") == "true"
                shapes = [[n, c, pool_out(h, k, s, pad, ceil_mode),
                           pool_out(w, k, s, pad, ceil_mode)]]
        elif kind == "InnerProduct":
            p = get(layer, "inner_product_param")
            num, fan_in = int(get(p, "num_output")), math.prod(bottoms[0][1:])
            counts["conv_ip"] += num * fan_in + num
            shapes = [[bottoms[0][0], num]]
        elif kind == "Concat":
            assert all(b[:1] + b[2:] == bottoms[0][:1] + bottoms[0][2:] for b in bottoms), name
            shapes = [[bottoms[0][0], sum(b[1] for b in bottoms)] + bottoms[0][2:]]
        elif kind == "Eltwise":
            assert all(b == bottoms[0] for b in bottoms), (name, bottoms)
            shapes = [bottoms[0]]
        elif kind == "BatchNorm":
            counts["bn_stats"] += 2 * bottoms[0][1] + 1
            shapes = [bottoms[0]]
        elif kind == "Scale":
            bias = get(get(layer, "scale_param", {}), "bias_term") == "true"
            counts["scale"] += bottoms[0][1] * (2 if bias else 1)
            shapes = [bottoms[0]]
        elif kind in ("ReLU", "Dropout", "LRN", "Softmax"):
            shapes = [bottoms[0]]
        elif kind in ("SoftmaxWithLoss", "Accuracy"):
            assert bottoms[1] == [bottoms[0][0]], (name, bottoms)
            shapes = [[]]
        else:
            raise ValueError("%s: layer type %s not handled by --check" % (name, kind))
        for top, s in zip(tops, shapes):
            blobs[top] = s
    return blobs, counts


def check_inputs(path):
    """In each phase: exactly one LMDB Data layer by default and one DummyData layer with stage
    dummy, of the same batch and crop."""
    with open(path) as f:
        net, _ = parse(tokenize(f.read()))
    for phase in ("TRAIN", "TEST"):
        real = [l for l in net["layer"] if included(l, phase, set())
                and get(l, "type") in ("Data", "DummyData", "Input")]
        dummy = [l for l in net["layer"] if included(l, phase, {"dummy"})
                 and get(l, "type") in ("Data", "DummyData", "Input")]
        assert [get(l, "type") for l in real] == ["Data"], (path, phase)
        assert [get(l, "type") for l in dummy] == ["DummyData"], (path, phase)
        data_param = get(real[0], "data_param")
        assert get(data_param, "backend") == "LMDB", path
        assert get(data_param, "source").endswith("_%s_lmdb" % (
            "train" if phase == "TRAIN" else "val")), path
        dims = [int(d) for d in get(dummy[0], "dummy_data_param")["shape"][0]["dim"]]
        assert dims[0] == int(get(data_param, "batch_size")), (path, phase)
        crop = int(get(get(real[0], "transform_param"), "crop_size", 0))
        assert crop in (0, dims[2]) and dims[2] == dims[3], (path, phase)


def check():
    print("%-14s %-6s %12s %12s %12s %10s" % (
        "model", "net", "conv+ip", "+scale", "bn_stats", "output"))
    for model in MODELS:
        folder = os.path.join(ROOT, "models", model)
        check_inputs(os.path.join(folder, "train_val.prototxt"))
        train, tc = analyze(os.path.join(folder, "train_val.prototxt"), "TRAIN", {"dummy"})
        test, _ = analyze(os.path.join(folder, "train_val.prototxt"), "TEST", {"dummy"})
        deploy, dc = analyze(os.path.join(folder, "deploy.prototxt"), "TEST", set())
        for label, counts, blobs in (("train", tc, train), ("deploy", dc, deploy)):
            out = blobs["prob"] if "prob" in blobs else blobs["loss" if "loss" in blobs
                                                              else "loss3/loss3"]
            print("%-14s %-6s %12s %12s %12s %10s" % (
                model, label, "{:,}".format(counts["conv_ip"]),
                "{:,}".format(counts["conv_ip"] + counts["scale"]),
                "{:,}".format(counts["bn_stats"]), "x".join(map(str, out)) or "scalar"))
        assert "accuracy" in test or "loss3/top-1" in test, model
        assert not any(k.startswith("accuracy") or k.endswith("top-1") for k in train), model


if __name__ == "__main__":
    if "--check" in sys.argv[1:]:
        check()
    else:
        generate()
