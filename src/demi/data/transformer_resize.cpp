// NVCaffe's random resize and stretch (TransformationParameter fields 10-20),
// with NVCaffe's meaning (its DataTransformer::image_random_resize):
//  1. img_rand_resize_lower/upper (both > 0): the shorter side becomes a
//     length drawn uniformly from [lower, upper], the aspect ratio kept;
//  2. rand_resize_ratio_lower/upper (lower >= 1, upper > 1): the longer side
//     becomes the shorter one times a ratio drawn from [lower, upper] (a
//     square image draws which side);
//  3. vertical_stretch_lower/upper, horizontal_stretch_lower/upper (both >
//     0): the height, then the width, times a factor drawn from the range;
//  4. each side at least crop_size and, without allow_upscale, at most the
//     image's; resized with interpolation_algo_down where neither side grows,
//     else interpolation_algo_up (OpenCV's numbers: NEAREST 0 ... AREA 3).
// A step whose fields are unset or out of those ranges is skipped, as in
// NVCaffe. It runs in both phases, as NVCaffe's does, before the crop.
#include <algorithm>
#include <cmath>
#include <opencv2/imgproc.hpp>

#include "demi/data/transformer.hpp"

namespace demi {

bool Transformer::RandomResizes() const {
  const TransformationParameter& p = param_;
  return p.img_rand_resize_lower() != 0 || p.img_rand_resize_upper() != 0 ||
         p.has_rand_resize_ratio_lower() || p.has_rand_resize_ratio_upper() ||
         p.has_vertical_stretch_lower() || p.has_vertical_stretch_upper() ||
         p.has_horizontal_stretch_lower() || p.has_horizontal_stretch_upper();
}

namespace {

/// A factor drawn from [a, b] in either order (NVCaffe accepts both).
float DrawFactor(float a, float b, RandomEngine* engine) {
  return RandomUniform(engine, std::min(a, b), std::max(a, b));
}

}  // namespace

cv::Mat Transformer::RandomResize(const cv::Mat& image, RandomEngine* engine) const {
  const TransformationParameter& p = param_;
  const int rows = image.rows, cols = image.cols;
  int shorter = std::min(rows, cols);
  if (p.img_rand_resize_lower() > 0 && p.img_rand_resize_upper() > 0) {
    const uint32_t lower = p.img_rand_resize_lower(), upper = p.img_rand_resize_upper();
    shorter = static_cast<int>(lower + RandomIndex(engine, upper - lower + 1));
  }
  const float scale = static_cast<float>(shorter) / static_cast<float>(std::min(rows, cols));
  float height = scale * static_cast<float>(rows), width = scale * static_cast<float>(cols);
  if (p.rand_resize_ratio_lower() >= 1 && p.rand_resize_ratio_upper() > 1) {
    const float ratio =
        DrawFactor(p.rand_resize_ratio_lower(), p.rand_resize_ratio_upper(), engine);
    const bool stretch_width = width > height || (width == height && RandomIndex(engine, 2) == 1);
    if (stretch_width) {
      width = height * ratio;
    } else {
      height = width * ratio;
    }
  }
  if (p.vertical_stretch_lower() > 0 && p.vertical_stretch_upper() > 0) {
    height *= DrawFactor(p.vertical_stretch_lower(), p.vertical_stretch_upper(), engine);
  }
  if (p.horizontal_stretch_lower() > 0 && p.horizontal_stretch_upper() > 0) {
    width *= DrawFactor(p.horizontal_stretch_lower(), p.horizontal_stretch_upper(), engine);
  }
  const int crop = static_cast<int>(p.crop_size());
  int new_rows = std::max(crop, static_cast<int>(std::lround(height)));
  int new_cols = std::max(crop, static_cast<int>(std::lround(width)));
  if (!p.allow_upscale()) {
    new_rows = std::min(new_rows, rows);
    new_cols = std::min(new_cols, cols);
  }
  if (new_rows == rows && new_cols == cols) return image;
  const bool shrinks = new_rows <= rows && new_cols <= cols;
  cv::Mat resized;
  cv::resize(image, resized, cv::Size(new_cols, new_rows), 0, 0,
             shrinks ? p.interpolation_algo_down() : p.interpolation_algo_up());
  return resized;
}

}  // namespace demi
