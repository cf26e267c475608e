// demitasse.io's native half: decoding and resizing images with OpenCV, and
// reading BlobProto files (mean images).
#include <pybind11/numpy.h>

#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "demi/util/io.hpp"

namespace demi {
namespace python {

namespace {

using FloatArray = py::array_t<float, py::array::c_style | py::array::forcecast>;

/// A copy of a float matrix as an H x W x C array.
FloatArray ToArray(const cv::Mat& image) {
  FloatArray array({image.rows, image.cols, image.channels()});
  cv::Mat target(image.rows, image.cols, CV_32FC(image.channels()), array.mutable_data());
  image.copyTo(target);
  return array;
}

/// Caffe's load_image: float32 in [0, 1], H x W x 3 in RGB order, or
/// H x W x 1 when `color` is false.
FloatArray LoadImage(const std::string& path, bool color) {
  cv::Mat decoded = cv::imread(path, color ? cv::IMREAD_COLOR : cv::IMREAD_GRAYSCALE);
  DEMI_CHECK(!decoded.empty(), "cannot read image '", path,
             "': it is missing, unreadable or not in a format OpenCV decodes");
  if (color) cv::cvtColor(decoded, decoded, cv::COLOR_BGR2RGB);
  cv::Mat scaled;
  decoded.convertTo(scaled, CV_32F, 1.0 / 255.0);
  return ToArray(scaled);
}

int Interpolation(int order) {
  switch (order) {
    case 0:
      return cv::INTER_NEAREST;
    case 1:
      return cv::INTER_LINEAR;
    default:
      return cv::INTER_CUBIC;
  }
}

/// An H x W x K (or H x W) float image resized to `height` x `width`.
FloatArray ResizeImage(const FloatArray& image, int height, int width, int interp_order) {
  DEMI_CHECK(image.ndim() == 2 || image.ndim() == 3, "resize_image takes an H x W x K image, got ",
             image.ndim(), " dimensions");
  DEMI_CHECK(height > 0 && width > 0, "resize_image: the new size must be positive, got ", height,
             " x ", width);
  const int channels = image.ndim() == 3 ? static_cast<int>(image.shape(2)) : 1;
  DEMI_CHECK(channels >= 1 && channels <= CV_CN_MAX, "resize_image: ", channels,
             " channels; OpenCV handles 1 to ", CV_CN_MAX);
  DEMI_CHECK(image.shape(0) > 0 && image.shape(1) > 0, "resize_image: the image is empty");
  const cv::Mat source(static_cast<int>(image.shape(0)), static_cast<int>(image.shape(1)),
                       CV_32FC(channels), const_cast<float*>(image.data()));
  cv::Mat resized;
  cv::resize(source, resized, cv::Size(width, height), 0, 0, Interpolation(interp_order));
  return ToArray(resized);
}

/// A BlobProto file (a .binaryproto mean) as an array of its shape.
FloatArray ReadBlobProto(const std::string& path) {
  BlobProto proto;
  ReadProtoFromBinaryFile(path, &proto);
  Blob blob;
  blob.FromProto(proto);
  std::vector<py::ssize_t> shape(blob.shape().begin(), blob.shape().end());
  FloatArray array(shape);
  std::copy(blob.cpu_data(), blob.cpu_data() + blob.count(), array.mutable_data());
  return array;
}

}  // namespace

void DefineIo(py::module_& module) {
  module.def("load_image", &LoadImage, py::arg("path"), py::arg("color"));
  module.def("resize_image", &ResizeImage, py::arg("image"), py::arg("height"), py::arg("width"),
             py::arg("interp_order"));
  module.def("read_blobproto", &ReadBlobProto, py::arg("path"));
}

}  // namespace python
}  // namespace demi
