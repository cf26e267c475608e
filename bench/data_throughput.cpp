// Images per second of the data pipeline (build/bench/data_throughput):
//  1. decode + augmentation to 224 x 224 of real JPEGs (opencv-doc's example
//     images, in an LMDB made as convert_imageset --encoded makes it), with 1
//     and 2 decode threads, through the Data layer and its prefetch thread;
//  2. the Data layer feeding LeNet on 28 x 28 MNIST-format records
//     (Fashion-MNIST's test set when installed, else synthetic): how long a
//     CPU training step waits for its data.
// With --source, only one row: the Data layer on that LMDB with
// --transform, --decode_threads and --batch_size (bench/data_vs_torch.sh runs it).
#include <gflags/gflags.h>
#include <glog/logging.h>

// jpeglib.h needs FILE and size_t declared before it.
// clang-format off
#include <cstdio>
#include <jpeglib.h>
// clang-format on

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "demi/data/convert.hpp"
#include "demi/data/db.hpp"
#include "demi/layer_registry.hpp"
#include "demi/layers/base_data_layer.hpp"
#include "demi/layers/data_layer.hpp"
#include "demi/net.hpp"
#include "demi/tools/common_flags.hpp"
#include "demi/util/device.hpp"
#include "demi/util/io.hpp"
#include "demi/util/upgrade_proto.hpp"

DEFINE_string(images_dir, "/usr/share/doc/opencv-doc/examples/data",
              "Folder of the JPEGs to decode (every *.jpg in it).");
DEFINE_string(fashion_mnist_dir, "/usr/share/datasets/fashion-mnist",
              "Folder of Fashion-MNIST's IDX files.");
DEFINE_string(lenet, "models/lenet/lenet_dummy.prototxt", "LeNet net to feed.");
DEFINE_double(seconds, 3.0, "Time to measure each configuration for.");
DEFINE_string(source, "", "One row only: the Data layer on this LMDB (see --transform).");
DEFINE_string(transform, "", "One row: the Data layer's transform_param { ... }.");
DEFINE_int32(decode_threads, 1, "One row: decode threads.");
DEFINE_int32(batch_size, 64, "One row: batch size.");
DEFINE_string(train_net, "",
              "With --source: train this net (a train_val prototxt) on the CPU, its TRAIN Data "
              "layer reading --source, and report how long each step waited for data.");
DEFINE_int32(steps, 0, "Training steps to time (0: --seconds).");
DEFINE_int32(make_source, 0,
             "First write this many synthetic ImageNet-sized JPEGs as an encoded LMDB at "
             "--source (for hosts without opencv-doc: bench/gpu.sh).");

namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// A directory under the temp dir, removed at exit.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "demi_bench_XXXXXX").string();
    CHECK(mkdtemp(pattern.data()) != nullptr);
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code error;
    std::filesystem::remove_all(path_, error);
  }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

/// Steady-state images/s of a Data layer: batches taken through Forward
/// while the prefetch thread produces them.
double DataLayerRate(const std::string& source, const std::string& transform, int batch_size,
                     int threads) {
  demi::LayerParameter param;
  demi::ParseProtoText("name: 'data' type: 'Data' " + transform + " data_param { source: '" +
                           source + "' backend: LMDB batch_size: " + std::to_string(batch_size) +
                           " prefetch: 4 }",
                       "data_throughput", &param);
  auto layer = demi::LayerRegistry::Create(param);
  static_cast<demi::DataLayer*>(layer.get())->set_decode_threads(threads);
  demi::Blob data, label;
  std::vector<demi::Blob*> top{&data, &label};
  layer->SetUp({}, top);
  // Warm up: past the first fill of every prefetch buffer (prefetch: 4),
  // whose fresh pages are not the steady state.
  for (int i = 0; i < 6; ++i) layer->Forward({}, top);
  int64_t images = 0;
  const auto start = Clock::now();
  while (SecondsSince(start) < FLAGS_seconds) {
    layer->Forward({}, top);
    images += batch_size;
  }
  return images / SecondsSince(start);
}

void JpegThroughput(const ScratchDir& scratch) {
  std::vector<std::string> names;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(FLAGS_images_dir, error)) {
    if (entry.path().extension() == ".jpg") names.push_back(entry.path().filename().string());
  }
  if (names.empty()) {
    std::printf("JPEG decode: skipped, no *.jpg in %s (apt-get install opencv-doc)\n",
                FLAGS_images_dir.c_str());
    return;
  }
  std::string list;
  for (size_t i = 0; i < names.size(); ++i) list += names[i] + " " + std::to_string(i % 10) + "\n";
  demi::WriteFileAtomically(scratch / "list.txt", list);
  demi::ImageSetOptions options;
  options.encoded = true;
  demi::ConvertImageSet(FLAGS_images_dir + "/", scratch / "list.txt", scratch / "jpeg_lmdb",
                        options);
  std::printf("JPEG decode + augmentation to 3x224x224, %zu JPEGs of %s, batch 32:\n", names.size(),
              FLAGS_images_dir.c_str());
  const std::vector<std::pair<std::string, std::string>> configs = {
      {"resize shorter side 256 + random crop 224 + mirror",
       "transform_param { resize_shorter_side: 256 crop_size: 224 mirror: true force_color: true "
       "mean_value: 104 mean_value: 117 mean_value: 123 }"},
      {"random-resized crop 224 + mirror + color jitter",
       "transform_param { random_resized_crop: true crop_size: 224 mirror: true force_color: true "
       "brightness: 0.4 contrast: 0.4 saturation: 0.4 "
       "mean_value: 104 mean_value: 117 mean_value: 123 }"}};
  for (const auto& [description, transform] : configs) {
    for (int threads : {1, 2}) {
      const double rate = DataLayerRate(scratch / "jpeg_lmdb", transform, 32, threads);
      std::printf("  %-52s %d thread(s): %8.1f images/s\n", description.c_str(), threads, rate);
    }
  }
}

/// Trains `param` (its first layer a Data layer; phase set to TRAIN here)
/// on `context`'s device for --seconds or --steps and prints the step time
/// and how long the Data layer's Forward took of it (waiting for a batch,
/// then moving it into the top), and at how many steps no batch was ready.
/// On a GPU the steps are queued and timed together, the device waited for
/// at the end.
void TrainWithData(demi::NetParameter param, const std::string& name, int batch_size,
                   const demi::Context& context = demi::Context()) {
  param.mutable_state()->set_phase(demi::TRAIN);
  demi::Net net(param, context);
  const bool gpu = context.device == demi::Device::kGPU;
  const int last = static_cast<int>(net.layers().size()) - 1;
  net.ForwardBackward();  // warm up
  if (gpu) demi::SynchronizeDevice();
  double data_seconds = 0;
  std::vector<double> data_ms;
  const auto start = Clock::now();
  while (FLAGS_steps > 0 ? static_cast<int>(data_ms.size()) < FLAGS_steps
                         : SecondsSince(start) < FLAGS_seconds) {
    const auto step = Clock::now();
    net.ForwardFromTo(0, 0);
    const double data = SecondsSince(step);
    net.ForwardFromTo(1, last);
    net.Backward();
    data_seconds += data;
    data_ms.push_back(1e3 * data);
  }
  if (gpu) demi::SynchronizeDevice();
  const double step_seconds = SecondsSince(start);
  const auto iterations = static_cast<double>(data_ms.size());
  std::sort(data_ms.begin(), data_ms.end());
  const auto& layer = static_cast<const demi::BaseDataLayer&>(*net.layers()[0]);
  const demi::Prefetcher& prefetcher = layer.prefetcher();
  std::printf(
      "  %s %s training step (batch %d, %s batches, %d decode threads): %.2f ms (%.0f images/s "
      "consumed); the Data layer's Forward takes %.3f ms of it on average (%.2f%%), median %.3f "
      "ms, max %.3f ms;\n  no batch was ready at %lld of %lld steps (%.3f ms waited in all, %.3f "
      "ms a step)\n",
      name.c_str(), gpu ? "GPU" : "CPU", batch_size, layer.byte_batches() ? "byte" : "float",
      layer.decode_threads(), 1e3 * step_seconds / iterations,
      batch_size * iterations / step_seconds, 1e3 * data_seconds / iterations,
      100 * data_seconds / step_seconds, data_ms[data_ms.size() / 2], data_ms.back(),
      static_cast<long long>(prefetcher.waits()), static_cast<long long>(prefetcher.next_calls()),
      1e3 * prefetcher.waited_seconds(),
      1e3 * prefetcher.waited_seconds() / std::max<double>(1, prefetcher.next_calls()));
}

/// --train_net: its TRAIN Data layer reads --source with --transform and
/// --batch_size (and --decode_threads where given); on GPU N with --gpu=N
/// (the tools' flag), in TF32.
void TrainNetWithData() {
  demi::NetParameter param;
  demi::ReadNetParamsFromTextFile(FLAGS_train_net, &param);
  demi::NetParameter kept = param;
  kept.clear_layer();
  bool found = false;
  for (const demi::LayerParameter& layer : param.layer()) {
    const bool test_only = layer.include_size() > 0 && layer.include(0).has_phase() &&
                           layer.include(0).phase() == demi::TEST;
    if (layer.type() == "Data" && (test_only || found)) continue;
    demi::LayerParameter* copy = kept.add_layer();
    *copy = layer;
    if (layer.type() != "Data") continue;
    found = true;
    copy->clear_include();
    copy->mutable_data_param()->set_source(FLAGS_source);
    copy->mutable_data_param()->set_batch_size(FLAGS_batch_size);
    if (!gflags::GetCommandLineFlagInfoOrDie("decode_threads").is_default) {
      copy->mutable_data_param()->set_threads(FLAGS_decode_threads);
    }
    demi::LayerParameter transform;
    demi::ParseProtoText(FLAGS_transform, "--transform", &transform);
    *copy->mutable_transform_param() = transform.transform_param();
  }
  CHECK(found && kept.layer(0).type() == "Data")
      << FLAGS_train_net << ": the first layer must be its TRAIN Data layer";
  demi::Context context;
  if (!FLAGS_gpu.empty()) {
    context.device = demi::Device::kGPU;
    context.device_id = std::stoi(FLAGS_gpu);
    demi::SetCurrentDevice(context.device_id);
    context.gpu_math = demi::GpuMath::kTensorOps;
  }
  TrainWithData(kept, kept.name(), FLAGS_batch_size, context);
}

/// A BGR image as a baseline JPEG of `quality`, through libjpeg: a bundle
/// leaves OpenCV's codecs out (util/lazy_imgcodecs.cpp), and GPU hosts have
/// no photos to convert.
std::string EncodeJpeg(const cv::Mat& image, int quality) {
  jpeg_compress_struct info{};
  jpeg_error_mgr errors{};
  info.err = jpeg_std_error(&errors);  // exits on error: a bench, fixed input
  jpeg_create_compress(&info);
  unsigned char* buffer = nullptr;
  unsigned long size = 0;  // NOLINT(runtime/int): libjpeg's type
  jpeg_mem_dest(&info, &buffer, &size);
  info.image_width = static_cast<JDIMENSION>(image.cols);
  info.image_height = static_cast<JDIMENSION>(image.rows);
  info.input_components = 3;
  info.in_color_space = JCS_EXT_BGR;
  jpeg_set_defaults(&info);
  jpeg_set_quality(&info, quality, TRUE);
  jpeg_start_compress(&info, TRUE);
  while (info.next_scanline < info.image_height) {
    JSAMPROW row = const_cast<JSAMPROW>(image.ptr<uchar>(static_cast<int>(info.next_scanline)));
    jpeg_write_scanlines(&info, &row, 1);
  }
  jpeg_finish_compress(&info);
  jpeg_destroy_compress(&info);
  std::string encoded(reinterpret_cast<const char*>(buffer), size);
  std::free(buffer);
  return encoded;
}

/// --make_source: `count` ImageNet-sized JPEGs (500 x 375 and 375 x 500,
/// quality 90) as an encoded LMDB, for hosts without opencv-doc's photos
/// (bench/gpu.sh). Photo-like rather than real: smooth shading, a few hard
/// edges and noise, so that they code to about a photo's bytes.
void MakeSyntheticJpegs(const std::string& path, int count) {
  std::mt19937 engine(2026);
  std::shared_ptr<demi::LMDB> db = demi::LMDB::Open(path, demi::DBMode::kNew);
  std::unique_ptr<demi::LMDBTransaction> txn = db->NewTransaction();
  int64_t bytes = 0;
  for (int i = 0; i < count; ++i) {
    const int rows = i % 2 == 0 ? 375 : 500, cols = i % 2 == 0 ? 500 : 375;
    cv::Mat image(rows, cols, CV_8UC3);
    const int tilt = static_cast<int>(engine() % 7) + 1, band = static_cast<int>(engine() % 97);
    for (int h = 0; h < rows; ++h) {
      for (int w = 0; w < cols; ++w) {
        const int edge = ((h / 61 + w / 83 + band) % 3) * 40;
        for (int c = 0; c < 3; ++c) {
          const int shade = (h * tilt + w * (c + 2)) / 7 + band + edge;
          const int noise = static_cast<int>(engine() % 25) - 12;
          image.at<cv::Vec3b>(h, w)[c] = cv::saturate_cast<uchar>(shade % 256 + noise);
        }
      }
    }
    const std::string encoded = EncodeJpeg(image, 90);
    demi::Datum datum;
    datum.set_data(encoded);
    datum.set_encoded(true);
    datum.set_label(i % 1000);
    bytes += static_cast<int64_t>(encoded.size());
    char key[16];
    std::snprintf(key, sizeof(key), "%08d", i);
    txn->Put(key, datum.SerializeAsString());
  }
  txn->Commit();
  std::printf("wrote %d synthetic JPEGs (500 x 375, %.0f KB on average) to %s\n", count,
              bytes / 1024.0 / std::max(1, count), path.c_str());
}

void LeNetFeed(const ScratchDir& scratch) {
  const std::string images = FLAGS_fashion_mnist_dir + "/t10k-images-idx3-ubyte.gz";
  const std::string labels = FLAGS_fashion_mnist_dir + "/t10k-labels-idx1-ubyte.gz";
  const std::string db = scratch / "mnist_lmdb";
  std::string what;
  if (std::filesystem::exists(images) && std::filesystem::exists(labels)) {
    demi::ConvertMnist(images, labels, db);
    what = "Fashion-MNIST t10k";
  } else {
    // 10000 synthetic 28 x 28 images.
    std::string pixels(10000 * 784, '\0'), label_bytes(10000, '\0');
    for (size_t i = 0; i < pixels.size(); ++i)
      pixels[i] = static_cast<char>((i * 2654435761u) >> 24);
    for (size_t i = 0; i < label_bytes.size(); ++i) label_bytes[i] = static_cast<char>(i % 10);
    auto idx = [](std::vector<uint32_t> dims, const std::string& values) {
      std::string bytes = {0, 0, 0x08, static_cast<char>(dims.size())};
      for (uint32_t d : dims) {
        for (int shift = 24; shift >= 0; shift -= 8) bytes.push_back(static_cast<char>(d >> shift));
      }
      return bytes + values;
    };
    demi::WriteFileAtomically(scratch / "images.idx", idx({10000, 28, 28}, pixels));
    demi::WriteFileAtomically(scratch / "labels.idx", idx({10000}, label_bytes));
    demi::ConvertMnist(scratch / "images.idx", scratch / "labels.idx", db);
    what = "synthetic (Fashion-MNIST not installed)";
  }
  const std::string transform = "transform_param { scale: 0.00390625 }";
  std::printf("MNIST-format 1x28x28 records (%s), batch 64:\n", what.c_str());
  for (int threads : {1, 2}) {
    std::printf("  Data layer alone, %d thread(s): %10.1f images/s\n", threads,
                DataLayerRate(db, transform, 64, threads));
  }

  for (const char* type : {"Convolution", "Pooling", "InnerProduct", "SoftmaxWithLoss"}) {
    if (!demi::LayerRegistry::Has(type) || !std::filesystem::exists(FLAGS_lenet)) {
      std::printf("  LeNet step: skipped (%s or layer %s missing)\n", FLAGS_lenet.c_str(), type);
      return;
    }
  }
  // LeNet with its DummyData replaced by the Data layer.
  demi::NetParameter param;
  demi::ReadNetParamsFromTextFile(FLAGS_lenet, &param);
  demi::LayerParameter* data = param.mutable_layer(0);
  data->set_type("Data");
  data->clear_dummy_data_param();
  data->mutable_data_param()->set_source(db);
  data->mutable_data_param()->set_backend(demi::DataParameter::LMDB);
  data->mutable_data_param()->set_batch_size(64);
  data->mutable_transform_param()->set_scale(0.00390625f);
  TrainWithData(param, "LeNet", 64);
}

}  // namespace

int main(int argc, char** argv) {
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  google::InitGoogleLogging(argv[0]);
  FLAGS_minloglevel = google::WARNING;
  FLAGS_logtostderr = true;
  std::printf("data_throughput: %u hardware threads\n", std::thread::hardware_concurrency());
  if (FLAGS_make_source > 0) {
    try {
      MakeSyntheticJpegs(FLAGS_source, FLAGS_make_source);
    } catch (const demi::Error& error) {
      LOG(ERROR) << error.what();
      return 1;
    }
    if (FLAGS_train_net.empty() && FLAGS_transform.empty()) return 0;  // made, nothing to time
  }
  if (!FLAGS_train_net.empty()) {
    try {
      TrainNetWithData();
    } catch (const demi::Error& error) {
      LOG(ERROR) << error.what();
      return 1;
    }
    return 0;
  }
  if (!FLAGS_source.empty()) {
    try {
      const double rate =
          DataLayerRate(FLAGS_source, FLAGS_transform, FLAGS_batch_size, FLAGS_decode_threads);
      std::printf("RESULT images_per_s=%.1f\n", rate);
    } catch (const demi::Error& error) {
      LOG(ERROR) << error.what();
      return 1;
    }
    return 0;
  }
  ScratchDir scratch;
  try {
    JpegThroughput(scratch);
    LeNetFeed(scratch);
  } catch (const demi::Error& error) {
    LOG(ERROR) << error.what();
    return 1;
  }
  return 0;
}
