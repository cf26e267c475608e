"""Classifier: a deploy net that classifies images, as pycaffe's
caffe.Classifier (Caffe's classify.py and the classification notebooks):

    classifier = demitasse.Classifier("deploy.prototxt", "model.caffemodel",
                                      image_dims=(256, 256), mean=np.array([104, 117, 123]),
                                      raw_scale=255, channel_swap=(2, 1, 0))
    probabilities = classifier.predict([demitasse.io.load_image("cat.jpg")])
"""
import numpy as np

from . import io
from .net import Net
from .proto.caffe_pb2 import TEST


class Classifier(Net):
    """A TEST-phase net over `model_file` with the weights of
    `pretrained_file`, whose first input takes images: predict() resizes
    them to `image_dims` (default: the input's size), crops the input's size
    (ten crops, or the centre), preprocesses them with `transformer` (H x W x
    K to K x H x W, then `channel_swap`, `raw_scale`, `mean`, `input_scale`
    as Transformer applies them) and returns the first output per image."""

    def __init__(self, model_file, pretrained_file, image_dims=None, mean=None,
                 input_scale=None, raw_scale=None, channel_swap=None):
        super().__init__(model_file, TEST, weights=pretrained_file)
        name = self.inputs[0]
        self.transformer = io.image_input_transformer(
            name, self.blobs[name].data.shape, mean, input_scale, raw_scale, channel_swap)
        self.crop_dims = np.array(self.blobs[name].data.shape[2:])
        self.image_dims = self.crop_dims if image_dims is None else np.array(image_dims)

    def predict(self, inputs, oversample=True):
        """The first output for each H x W x K image of `inputs`: averaged
        over the ten crops of io.oversample, or of the centre crop alone
        when `oversample` is false. Returns N x outputs."""
        height, width = (int(dim) for dim in self.image_dims)
        images = np.stack([image if image.shape[:2] == (height, width) else
                           io.resize_image(image, (height, width)) for image in inputs])
        crop_h, crop_w = (int(dim) for dim in self.crop_dims)
        if oversample:
            crops = io.oversample(images, (crop_h, crop_w))
        else:
            top, left = (height - crop_h) // 2, (width - crop_w) // 2
            crops = images[:, top:top + crop_h, left:left + crop_w, :]
        name = self.inputs[0]
        data = np.stack([self.transformer.preprocess(name, crop) for crop in crops])
        predictions = self.forward_all(**{name: data})[self.outputs[0]]
        if oversample:
            predictions = predictions.reshape(len(inputs), 10, -1).mean(axis=1)
        return predictions
