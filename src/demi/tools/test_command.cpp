// `test` (and `caffe test`): scores a trained net: runs its TEST phase for
// --iterations batches and logs the mean of every output, as Caffe's does:
//   test --model=net.prototxt --weights=net.caffemodel --iterations=50
#include <string>
#include <vector>

#include "demi/net.hpp"
#include "demi/output_means.hpp"
#include "demi/tools/commands.hpp"
#include "demi/tools/common_flags.hpp"
#include "demi/util/cli.hpp"

namespace demi {

namespace {

int Test() {
  DEMI_CHECK(!FLAGS_model.empty(), "--model is required: the net prototxt to score");
  DEMI_CHECK(!FLAGS_weights.empty(), "--weights is required: the .caffemodel to score");
  DEMI_CHECK(FLAGS_iterations > 0, "--iterations must be positive, got ", FLAGS_iterations);
  const Context context = ToolContext();
  ApplyThreadsFlag(FLAGS_threads);
  const NetParameter param = ReadTestNetParam(FLAGS_model);
  Net net(param, context, nullptr, FLAGS_model);
  net.CopyTrainedLayersFrom(SplitList(FLAGS_weights));
  LOG(INFO) << "Running for " << FLAGS_iterations << " iterations.";
  OutputMeans means;
  double loss = 0;
  const auto& outputs = net.output_blobs();
  for (int i = 0; i < FLAGS_iterations; ++i) {
    loss += net.Forward();
    means.Add(net);
    for (size_t j = 0; j < outputs.size(); ++j) {
      const std::string& name = net.blob_names()[net.output_blob_indices()[j]];
      const float* values = outputs[j]->cpu_data();
      for (int64_t k = 0; k < outputs[j]->count(); ++k) {
        LOG(INFO) << "Batch " << i << ", " << name << " = " << values[k];
      }
    }
  }
  LOG(INFO) << "Loss: " << loss / FLAGS_iterations;
  for (size_t i = 0; i < means.size(); ++i) {
    const int blob_id = means.blob_id(i);
    const float weight = net.blob_loss_weights()[blob_id];
    const double mean = means.mean(i);
    if (weight != 0) {
      LOG(INFO) << net.blob_names()[blob_id] << " = " << mean << " (* " << weight << " = "
                << weight * mean << " loss)";
    } else {
      LOG(INFO) << net.blob_names()[blob_id] << " = " << mean;
    }
  }
  return 0;
}

}  // namespace

Command TestCommand() {
  return MakeCommand(
      "test", "score a model on its TEST phase",
      "--model=net.prototxt --weights=net.caffemodel [--iterations=50] [--gpu=0] [--level=N] "
      "[--stage=a,b]",
      WithNetFlags({"model", "weights", "iterations"}), WithoutArgs(Test));
}

}  // namespace demi
