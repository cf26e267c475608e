// `classify` (and `caffe classify`): the top-k classes of image files under a
// trained model, prepared as pycaffe's Classifier prepares them (a mean file
// of another size: its per-channel means, as cpp_classification takes them),
// printed in the form of Caffe's cpp_classification example:
//   classify --model=models/lenet_fashion/deploy.prototxt
//            --weights=build/lenet_fashion_iter_2000.caffemodel
//            --labels=models/lenet_fashion/labels.txt --input_scale=0.00390625 shoe.png
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <numeric>
#include <string>
#include <vector>

#include "demi/data/image_file.hpp"
#include "demi/data/image_input.hpp"
#include "demi/data/transformer.hpp"
#include "demi/net.hpp"
#include "demi/tools/commands.hpp"
#include "demi/tools/common_flags.hpp"
#include "demi/util/batch_size.hpp"
#include "demi/util/cli.hpp"
#include "demi/util/io.hpp"

DEFINE_string(labels, "",
              "A file of class names, one per line in class order (Caffe's synset_words.txt "
              "form); none: classes are printed as numbers.");
DEFINE_string(images, "", "A file listing image paths, one per line (besides any arguments).");
DEFINE_int32(top_k, 5, "How many classes to print per image.");
DEFINE_string(mean_file, "",
              "A .binaryproto mean image (compute_image_mean) subtracted from each input: per "
              "pixel when its size is the input's, else its per-channel means.");
DEFINE_string(mean_value, "",
              "Mean subtracted from each input: one value, or one per channel (104,117,123).");
DEFINE_string(resize, "",
              "Resize images to S x S or H,W, then crop the input's size from the center "
              "(none: resize to the input's size).");
DEFINE_string(channel_swap, "2,1,0",
              "Input channel order, as indices into the image's R, G, B (2,1,0: BGR, as "
              "Caffe's models expect); ignored for gray inputs.");
DEFINE_double(raw_scale, 255, "Pixels are read in [0, raw_scale] (pycaffe's raw_scale).");
DEFINE_double(input_scale, 1,
              "Multiplies the input after the mean is subtracted (LeNet: 0.00390625).");

namespace demi {

namespace {

/// The numbers of a comma-separated flag value.
std::vector<double> ParseNumbers(const std::string& flag, const std::string& text) {
  std::vector<double> values;
  for (const std::string& item : SplitList(text)) {
    double value = 0;
    const size_t end = ReadNumber(item, &value);
    DEMI_CHECK(end == item.size() && end > 0, "--", flag, ": '", item, "' is not a number");
    values.push_back(value);
  }
  return values;
}

/// Non-empty lines of `path`, trailing spaces and CR removed.
std::vector<std::string> ReadLines(const std::string& flag, const std::string& path) {
  std::ifstream in(path);
  DEMI_CHECK(in.good(), "--", flag, ": cannot open '", path, "'");
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) {
    line.erase(line.find_last_not_of(" \t\r") + 1);
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

/// The mean of --mean_file for an input of C x H x W: per element when the
/// file's image has that size, else one value per channel, as Caffe's
/// cpp_classification reduces it.
std::vector<float> ReadMeanFile(const std::string& path, int64_t channels, int64_t height,
                                int64_t width) {
  BlobProto proto;
  ReadProtoFromBinaryFile(path, &proto);
  Blob mean;
  mean.FromProto(proto);  // float or double values
  std::vector<int64_t> shape = ShapeFromProto(proto);
  while (shape.size() > 3 && shape.front() == 1) shape.erase(shape.begin());
  DEMI_CHECK(shape.size() == 3 && shape[0] == channels && mean.count() > 0, "--mean_file '", path,
             "' holds a mean of shape ", mean.shape_string(), "; the input needs ", channels,
             " x H x W");
  const float* data = mean.cpu_data();
  if (mean.count() == channels * height * width) {
    return std::vector<float>(data, data + mean.count());
  }
  const int64_t spatial = mean.count() / channels;
  std::vector<float> per_channel(channels);
  for (int64_t c = 0; c < channels; ++c) {
    const double sum = std::accumulate(data + c * spatial, data + (c + 1) * spatial, 0.0);
    per_channel[c] = static_cast<float>(sum / spatial);
  }
  LOG(WARNING) << "--mean_file " << path << " is " << mean.shape_string()
               << ", not the input's size: subtracting its per-channel means";
  return per_channel;
}

ImageInputOptions ReadOptions(int64_t channels, int64_t height, int64_t width) {
  ImageInputOptions options;
  const std::vector<double> resize = ParseNumbers("resize", FLAGS_resize);
  DEMI_CHECK(resize.size() <= 2, "--resize takes S or H,W, got '", FLAGS_resize, "'");
  if (!resize.empty()) {
    options.resize_height = static_cast<int>(resize[0]);
    options.resize_width = static_cast<int>(resize.back());
    DEMI_CHECK(options.resize_height > 0 && options.resize_width > 0,
               "--resize must be positive, got '", FLAGS_resize, "'");
  }
  if (channels == 3) {
    for (double index : ParseNumbers("channel_swap", FLAGS_channel_swap)) {
      options.channel_swap.push_back(static_cast<int>(index));
    }
  }
  options.raw_scale = static_cast<float>(FLAGS_raw_scale);
  options.input_scale = static_cast<float>(FLAGS_input_scale);
  DEMI_CHECK(FLAGS_mean_file.empty() || FLAGS_mean_value.empty(),
             "give --mean_file or --mean_value, not both");
  if (!FLAGS_mean_file.empty())
    options.mean = ReadMeanFile(FLAGS_mean_file, channels, height, width);
  for (double value : ParseNumbers("mean_value", FLAGS_mean_value)) {
    options.mean.push_back(static_cast<float>(value));
  }
  DEMI_CHECK(options.mean.size() <= 1 || options.mean.size() == static_cast<size_t>(channels) ||
                 !FLAGS_mean_file.empty(),
             "--mean_value gives ", options.mean.size(), " values; give one, or one per channel (",
             channels, ")");
  return options;
}

/// The net, TEST phase, with its weights and --batch applied.
std::unique_ptr<Net> LoadNet(const Context& context) {
  NetParameter param = ReadTestNetParam(FLAGS_model);
  ApplyBatchFlag(&param);
  auto net = std::make_unique<Net>(param, context, nullptr, FLAGS_model);
  net->CopyTrainedLayersFrom(SplitList(FLAGS_weights));
  DEMI_CHECK(net->input_blobs().size() == 1 && net->input_blobs()[0]->num_axes() == 4, FLAGS_model,
             ": classify feeds one N x C x H x W Input blob; the net has ",
             net->input_blobs().size(), " Input blob(s)",
             net->input_blobs().size() == 1 ? " of shape " + net->input_blobs()[0]->shape_string()
                                            : std::string());
  DEMI_CHECK(!net->output_blobs().empty(), FLAGS_model, " has no output blob to classify with");
  return net;
}

/// Prints `path` and its `top_k` most probable classes.
void PrintTopK(const std::string& path, const float* scores, int64_t classes,
               const std::vector<std::string>& labels) {
  std::vector<int64_t> order(classes);
  std::iota(order.begin(), order.end(), 0);
  const int64_t k = std::min<int64_t>(FLAGS_top_k, classes);
  std::partial_sort(order.begin(), order.begin() + k, order.end(),
                    [&](int64_t a, int64_t b) { return scores[a] > scores[b]; });
  std::cout << path << "\n";
  for (int64_t i = 0; i < k; ++i) {
    char score[32];
    std::snprintf(score, sizeof(score), "%.4f", scores[order[i]]);
    const std::string label = labels.empty() ? std::to_string(order[i]) : labels[order[i]];
    std::cout << "  " << score << " - \"" << label << "\"\n";
  }
}

int Classify(const std::vector<std::string>& args) {
  DEMI_CHECK(!FLAGS_model.empty(), "--model is required: the deploy prototxt");
  DEMI_CHECK(!FLAGS_weights.empty(), "--weights is required: the trained .caffemodel");
  DEMI_CHECK(FLAGS_top_k > 0, "--top_k must be positive, got ", FLAGS_top_k);
  std::vector<std::string> images = args;
  if (!FLAGS_images.empty()) {
    for (const std::string& path : ReadLines("images", FLAGS_images)) images.push_back(path);
  }
  DEMI_CHECK(!images.empty(), "give the image files to classify, as arguments or --images");
  const std::vector<std::string> labels =
      FLAGS_labels.empty() ? std::vector<std::string>() : ReadLines("labels", FLAGS_labels);
  const Context context = ToolContext();
  ApplyThreadsFlag(FLAGS_threads);
  std::unique_ptr<Net> net = LoadNet(context);
  Blob* input = net->input_blobs()[0];
  const int64_t batch = input->shape(0), channels = input->shape(1);
  const int64_t height = input->shape(2), width = input->shape(3);
  DEMI_CHECK(channels == 1 || channels == 3, FLAGS_model, ": the input has ", channels,
             " channels; classify reads images as gray (1) or color (3)");
  const ImageInputOptions options = ReadOptions(channels, height, width);
  const int64_t image_size = channels * height * width;
  for (size_t start = 0; start < images.size(); start += batch) {
    const int64_t n = std::min<int64_t>(batch, images.size() - start);
    if (input->shape(0) != n) {  // the last, partial batch
      input->Reshape({n, channels, height, width});
      net->Reshape();
    }
    float* data = input->mutable_cpu_data();
    for (int64_t i = 0; i < n; ++i) {
      const std::string& path = images[start + i];
      try {
        ImageToInput(ReadImageFile(path, channels == 3), options, channels, height, width,
                     data + i * image_size);
      } catch (const BadRecordError& error) {
        ThrowError(StrCat(path, ": ", error.what()));
      }
    }
    net->Forward();
    const Blob* output = net->output_blobs()[0];
    const int64_t classes = output->count() / n;
    DEMI_CHECK(labels.empty() || static_cast<int64_t>(labels.size()) == classes, "--labels ",
               FLAGS_labels, " has ", labels.size(), " lines but the net's output '",
               net->blob_names()[net->output_blob_indices()[0]], "' has ", classes, " classes");
    for (int64_t i = 0; i < n; ++i) {
      PrintTopK(images[start + i], output->cpu_data() + i * classes, classes, labels);
    }
  }
  return 0;
}

}  // namespace

Command ClassifyCommand() {
  Command command = MakeCommand(
      "classify", "print the top classes of image files under a trained model",
      "--model=deploy.prototxt --weights=net.caffemodel [--labels=labels.txt] "
      "[--mean_file=mean.binaryproto | --mean_value=104,117,123] [--top_k=5] [--batch=N] "
      "[--images=list.txt] IMAGE...",
      WithNetFlags({"model", "weights", "labels", "images", "top_k", "mean_file", "mean_value",
                    "resize", "channel_swap", "raw_scale", "input_scale", "batch"}),
      Classify);
  command.quiet = true;
  command.takes_args = true;
  return command;
}

}  // namespace demi
