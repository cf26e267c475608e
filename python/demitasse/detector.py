"""Detector: classifies windows of images with a deploy net, as pycaffe's
caffe.Detector (R-CNN style):

    detector = demitasse.Detector("deploy.prototxt", "model.caffemodel",
                                  mean=np.array([104, 117, 123]), raw_scale=255,
                                  channel_swap=(2, 1, 0), context_pad=16)
    detections = detector.detect_windows([("cat.jpg", [[0, 0, 100, 120]])])

A window is (ymin, xmin, ymax, xmax) in pixels. Each is cut from its image,
optionally with `context_pad` pixels of surrounding context in the net's
input (the box is grown so the window maps to the input less the pad on
each side; what falls outside the image is filled with the mean), warped to
the input's size and preprocessed as Classifier does.
"""
import numpy as np

from . import io
from .net import Net
from .proto.caffe_pb2 import TEST


class Detector(Net):
    def __init__(self, model_file, pretrained_file, mean=None, input_scale=None, raw_scale=None,
                 channel_swap=None, context_pad=None):
        super().__init__(model_file, TEST, weights=pretrained_file)
        name = self.inputs[0]
        self.transformer = io.image_input_transformer(
            name, self.blobs[name].data.shape, mean, input_scale, raw_scale, channel_swap)
        self.crop_dims = np.array(self.blobs[name].data.shape[2:])
        self.configure_crop(context_pad)

    def detect_windows(self, images_windows):
        """[(image file, windows)] -> one dict per window, in order:
        {"window": (ymin, xmin, ymax, xmax), "prediction": the first output,
        "filename": its image}."""
        name = self.inputs[0]
        crops, index = [], []
        for filename, windows in images_windows:
            image = io.load_image(filename).astype(np.float32)
            for window in windows:
                crops.append(self.transformer.preprocess(name, self.crop(image, window)))
                index.append((filename, tuple(window)))
        if not crops:
            return []
        predictions = self.forward_all(**{name: np.stack(crops)})[self.outputs[0]]
        return [{"window": np.array(window), "prediction": prediction, "filename": filename}
                for (filename, window), prediction in zip(index, predictions)]

    def detect_selective_search(self, image_fnames):
        raise NotImplementedError(
            "detect_selective_search needs the selective_search_ijcv_with_python package, which "
            "Demitasse does not ship; compute the windows yourself and call detect_windows")

    def configure_crop(self, context_pad):
        """Sets the context padding, and the mean that fills context outside
        the image (the transformer's mean in image layout and raw units)."""
        self.context_pad = int(context_pad or 0)
        self.crop_mean = None
        if not self.context_pad:
            return
        name = self.inputs[0]
        mean = self.transformer.mean.get(name)
        if mean is None:
            self.crop_mean = np.zeros(1, np.float32)
            return
        mean = np.asarray(mean, np.float32)
        mean = mean.mean(axis=(1, 2)) if mean.ndim == 3 else mean.reshape(-1)
        if name in self.transformer.channel_swap:  # back to the image's channel order
            mean = mean[np.argsort(self.transformer.channel_swap[name])]
        self.crop_mean = mean / self.transformer.raw_scale.get(name, 1.0)

    def crop(self, image, window):
        """The window of `image` (H x W x K), with context, warped to the
        net's input size."""
        ymin, xmin, ymax, xmax = (float(v) for v in window)
        height, width = (int(d) for d in self.crop_dims)
        if not self.context_pad:
            region = image[int(ymin):int(ymax), int(xmin):int(xmax)]
            return io.resize_image(region, (height, width))
        # Grow the box so the window fills the input less the pad on each side.
        scale_y = height / max(height - 2.0 * self.context_pad, 1.0)
        scale_x = width / max(width - 2.0 * self.context_pad, 1.0)
        cy, cx = (ymin + ymax) / 2.0, (xmin + xmax) / 2.0
        half_h, half_w = (ymax - ymin) / 2.0 * scale_y, (xmax - xmin) / 2.0 * scale_x
        box = np.round([cy - half_h, cx - half_w, cy + half_h, cx + half_w]).astype(int)
        clipped = np.clip(box, 0, [image.shape[0], image.shape[1]] * 2)
        out = np.empty((height, width, image.shape[2]), np.float32)
        out[...] = self.crop_mean
        box_h, box_w = max(box[2] - box[0], 1), max(box[3] - box[1], 1)
        # Where the part inside the image lands in the warped input.
        top = int(round((clipped[0] - box[0]) * height / box_h))
        left = int(round((clipped[1] - box[1]) * width / box_w))
        size_h = min(int(round((clipped[2] - clipped[0]) * height / box_h)), height - top)
        size_w = min(int(round((clipped[3] - clipped[1]) * width / box_w)), width - left)
        if size_h > 0 and size_w > 0:
            region = image[clipped[0]:clipped[2], clipped[1]:clipped[3]]
            out[top:top + size_h, left:left + size_w] = io.resize_image(region, (size_h, size_w))
        return out
