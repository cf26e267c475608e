// `test` (and `caffe test`): scores a trained net: runs its TEST phase for
// --iterations batches and logs the mean of every output, as Caffe's does:
//   test --model=net.prototxt --weights=net.caffemodel --iterations=50
#include <string>
#include <vector>

#include "demi/net.hpp"
#include "demi/tools/commands.hpp"
#include "demi/tools/common_flags.hpp"
#include "demi/util/cli.hpp"
#include "demi/util/engine.hpp"
#include "demi/util/upgrade_proto.hpp"

namespace demi {

namespace {

int Test() {
  DEMI_CHECK(!FLAGS_model.empty(), "--model is required: the net prototxt to score");
  DEMI_CHECK(!FLAGS_weights.empty(), "--weights is required: the .caffemodel to score");
  DEMI_CHECK(FLAGS_iterations > 0, "--iterations must be positive, got ", FLAGS_iterations);
  const Context context = ContextForGpuFlag(FLAGS_gpu);
  ApplyThreadsFlag(FLAGS_threads);
  NetParameter param;
  ReadNetParamsFromTextFile(FLAGS_model, &param);
  param.mutable_state()->set_phase(TEST);
  param.mutable_state()->set_level(FLAGS_level);
  for (const std::string& stage : SplitList(FLAGS_stage)) param.mutable_state()->add_stage(stage);
  Engine engine;
  if (ParseEngineFlag(FLAGS_engine, &engine)) param.set_engine(engine);
  Net net(param, context, nullptr, FLAGS_model);
  net.CopyTrainedLayersFrom(SplitList(FLAGS_weights));
  LOG(INFO) << "Running for " << FLAGS_iterations << " iterations.";
  std::vector<double> sums;
  std::vector<int> output_of;
  double loss = 0;
  const auto& outputs = net.output_blobs();
  for (int i = 0; i < FLAGS_iterations; ++i) {
    loss += net.Forward();
    size_t index = 0;
    for (size_t j = 0; j < outputs.size(); ++j) {
      const std::string& name = net.blob_names()[net.output_blob_indices()[j]];
      const float* values = outputs[j]->cpu_data();
      for (int64_t k = 0; k < outputs[j]->count(); ++k, ++index) {
        if (i == 0) {
          sums.push_back(values[k]);
          output_of.push_back(static_cast<int>(j));
        } else {
          sums[index] += values[k];
        }
        LOG(INFO) << "Batch " << i << ", " << name << " = " << values[k];
      }
    }
  }
  LOG(INFO) << "Loss: " << loss / FLAGS_iterations;
  for (size_t i = 0; i < sums.size(); ++i) {
    const int blob_id = net.output_blob_indices()[output_of[i]];
    const float weight = net.blob_loss_weights()[blob_id];
    const double mean = sums[i] / FLAGS_iterations;
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
      {"model", "weights", "iterations", "gpu", "engine", "threads", "level", "stage"},
      WithoutArgs(Test));
}

}  // namespace demi
