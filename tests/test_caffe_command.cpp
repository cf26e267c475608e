// `caffe <command>` against the separate tools: the same results from the
// same flags in Caffe's spellings (--flag=value, -flag value), its usage and
// help, and the refusal of unknown commands and of other commands' flags.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "demi/util/io.hpp"
#include "solver_test_util.hpp"
#include "tool_test_util.hpp"

namespace demi {
namespace {

namespace fs = std::filesystem;

/// `caffe SUBCOMMAND ARGS` (SUBCOMMAND may be empty).
Result Caffe(const std::string& subcommand, const std::string& args) {
  const std::string path = ToolPath("caffe");
  EXPECT_TRUE(fs::exists(path)) << path << " is missing: build the tools (make tools)";
  return RunShell("timeout 120 " + path + " " + subcommand + " " + args);
}

/// A separate tool, build/tools/NAME.
Result Tool(const std::string& name, const std::string& args) {
  return RunShell("timeout 120 " + ToolPath(name) + " " + args);
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

/// Every match of `pattern`'s first group.
std::vector<std::string> Matches(const std::string& text, const std::string& pattern) {
  std::vector<std::string> found;
  const std::regex re(pattern);
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator();
       ++it) {
    found.push_back((*it)[1].str());
  }
  return found;
}

/// LeNet on DummyData (models/lenet) for 40 iterations, snapshotting into `dir`.
std::string WriteLenetSolver(const ScratchDir& dir) {
  SolverParameter param;
  ReadProtoFromTextFile("models/lenet/lenet_dummy_solver.prototxt", &param);
  param.set_max_iter(40);
  param.set_display(10);
  param.set_test_interval(20);
  param.set_test_iter(0, 2);
  param.set_snapshot(0);
  param.set_snapshot_prefix(dir.file("lenet"));
  const std::string path = dir.file("solver.prototxt");
  WriteProtoToTextFile(param, path);
  return path;
}

TEST(CaffeCommandTest, TrainAndTestMatchTheSeparateTools) {
  ScratchDir tool_dir, caffe_dir;
  const Result tool = Tool("train", "--logtostderr --solver=" + WriteLenetSolver(tool_dir));
  ASSERT_EQ(tool.status, 0) << tool.output;
  // Caffe's scripts' spelling: one dash, the value after a space.
  const Result caffe = Caffe("train", "-logtostderr -solver " + WriteLenetSolver(caffe_dir));
  ASSERT_EQ(caffe.status, 0) << caffe.output;
  const std::string loss = R"(\] (Iteration \d+, loss = \S+))";
  EXPECT_EQ(Matches(caffe.output, loss), Matches(tool.output, loss));
  EXPECT_EQ(Matches(caffe.output, loss).size(), 5u) << caffe.output;  // 0, 10, ..., 40
  const std::string tool_model = tool_dir.file("lenet_iter_40.caffemodel");
  const std::string caffe_model = caffe_dir.file("lenet_iter_40.caffemodel");
  ASSERT_TRUE(fs::exists(tool_model)) << tool.output;
  ASSERT_TRUE(fs::exists(caffe_model)) << caffe.output;
  EXPECT_EQ(ReadFileToString(caffe_model), ReadFileToString(tool_model));

  const std::string flags = "--model=models/lenet/lenet_dummy.prototxt --weights=" + tool_model;
  const Result test = Tool("test", "--logtostderr " + flags + " --iterations=3");
  ASSERT_EQ(test.status, 0) << test.output;
  const Result caffe_test = Caffe("test", "--logtostderr " + flags + " -iterations 3");
  ASSERT_EQ(caffe_test.status, 0) << caffe_test.output;
  const std::string accuracy = R"(\] (accuracy = \S+))";
  ASSERT_EQ(Matches(test.output, accuracy).size(), 1u) << test.output;
  EXPECT_EQ(Matches(caffe_test.output, accuracy), Matches(test.output, accuracy));
  EXPECT_EQ(Matches(caffe_test.output, R"(\] (Loss: \S+))"),
            Matches(test.output, R"(\] (Loss: \S+))"));
}

TEST(CaffeCommandTest, TimeMemoryAndDeviceQueryRun) {
  const std::string model = "models/lenet/lenet_dummy.prototxt";
  const Result time = Caffe("time", "--logtostderr -model " + model + " -iterations 2");
  EXPECT_EQ(time.status, 0) << time.output;
  EXPECT_TRUE(Contains(time.output, "Average Forward-Backward:")) << time.output;
  const Result test_phase =
      Caffe("time", "--logtostderr --model=" + model + " --iterations=1 --phase=TEST");
  EXPECT_EQ(test_phase.status, 0) << test_phase.output;
  EXPECT_FALSE(Contains(test_phase.output, "Average Backward pass")) << test_phase.output;
  const Result memory = Caffe("memory", "--model=" + model + " --batch=8");
  EXPECT_EQ(memory.status, 0) << memory.output;
  EXPECT_TRUE(Contains(memory.output, "net LeNet (TRAIN, batch 8)")) << memory.output;
  EXPECT_TRUE(Contains(memory.output, "net LeNet (TEST, batch 8)")) << memory.output;
  EXPECT_EQ(Caffe("device_query", "--logtostderr").status, 0);
  // Flags before the command, as BVLC's gflags took them anywhere.
  const Result before = Caffe("--logtostderr -model " + model + " -iterations 1", "time");
  EXPECT_EQ(before.status, 0) << before.output;
  EXPECT_TRUE(Contains(before.output, "Average Forward-Backward:")) << before.output;
  const Result negative = Caffe("time", "--model=" + model + " --batch=-1");
  EXPECT_EQ(negative.status, 1);
  EXPECT_TRUE(Contains(negative.output, "--batch must be positive")) << negative.output;
}

TEST(CaffeCommandTest, UsageHelpAndBadCommands) {
  const std::vector<std::string> commands = {
      "train", "test", "time", "device_query", "memory", "classify", "extract_features"};
  const Result none = Caffe("", "");
  EXPECT_EQ(none.status, 1);
  EXPECT_TRUE(Contains(none.output, "usage: caffe <command> <args>")) << none.output;
  for (const std::string& command : commands) {
    EXPECT_TRUE(Contains(none.output, "  " + command + " ")) << command << ":\n" << none.output;
  }
  const Result version = Caffe("--version", "");
  EXPECT_EQ(version.status, 0);
  EXPECT_TRUE(Contains(version.output, "caffe version 1.0.0")) << version.output;
  const Result unknown = Caffe("frobnicate", "--solver=x");
  EXPECT_EQ(unknown.status, 1);
  EXPECT_TRUE(Contains(unknown.output, "unknown command 'frobnicate'")) << unknown.output;
  EXPECT_TRUE(Contains(unknown.output, "usage: caffe")) << unknown.output;
  for (const char* help : {"help", "--help", "-help"}) {
    const Result run = Caffe(help, "");
    EXPECT_EQ(run.status, 0) << help;
    EXPECT_TRUE(Contains(run.output, "usage: caffe")) << help << ":\n" << run.output;
  }
  // Each command's help lists its own flags, not the others'.
  const Result train_help = Caffe("train", "--help");
  EXPECT_EQ(train_help.status, 0);
  EXPECT_TRUE(Contains(train_help.output, "Usage: caffe train --solver=")) << train_help.output;
  EXPECT_TRUE(Contains(train_help.output, "--sigint_effect")) << train_help.output;
  EXPECT_FALSE(Contains(train_help.output, "--model")) << train_help.output;
  const Result flagged_help = Caffe("-logtostderr help", "train");
  EXPECT_EQ(flagged_help.status, 0) << flagged_help.output;
  EXPECT_TRUE(Contains(flagged_help.output, "--sigint_effect")) << flagged_help.output;
  const Result test_help = Caffe("help", "test");
  EXPECT_EQ(test_help.status, 0);
  EXPECT_TRUE(Contains(test_help.output, "--iterations")) << test_help.output;
  EXPECT_FALSE(Contains(test_help.output, "--solver")) << test_help.output;
  const Result tool_help = Tool("classify", "--help");
  EXPECT_EQ(tool_help.status, 0);
  EXPECT_TRUE(Contains(tool_help.output, "Usage: classify --model=")) << tool_help.output;
  // A flag of another command is refused, as an unknown flag was.
  const Result foreign = Caffe("train", "--logtostderr --solver=x --model=y");
  EXPECT_EQ(foreign.status, 1);
  EXPECT_TRUE(Contains(foreign.output, "--model is not a flag of caffe train")) << foreign.output;
  const Result tool_foreign = Tool("test", "--logtostderr --solver=x");
  EXPECT_EQ(tool_foreign.status, 1);
  EXPECT_TRUE(Contains(tool_foreign.output, "--solver is not a flag of test"))
      << tool_foreign.output;
  // So do the convert tools, whose --help lists their own flags alone.
  const Result convert_help = Tool("convert_imageset", "--help");
  EXPECT_EQ(convert_help.status, 0);
  EXPECT_TRUE(Contains(convert_help.output, "Usage: convert_imageset [FLAGS]"))
      << convert_help.output;
  EXPECT_TRUE(Contains(convert_help.output, "--resize_height")) << convert_help.output;
  EXPECT_FALSE(Contains(convert_help.output, "--top_k")) << convert_help.output;
  EXPECT_FALSE(Contains(convert_help.output, "--logtostderr")) << convert_help.output;
  const Result convert_foreign = Tool("convert_imageset", "--logtostderr --gpu=0 a b c");
  EXPECT_EQ(convert_foreign.status, 1);
  EXPECT_TRUE(Contains(convert_foreign.output, "--gpu is not a flag of convert_imageset"))
      << convert_foreign.output;
  const Result draw_help = Tool("draw_net", "--help");
  EXPECT_TRUE(Contains(draw_help.output, "--stage")) << draw_help.output;
  EXPECT_TRUE(Contains(draw_help.output, "--rankdir")) << draw_help.output;
  const Result argument = Caffe("test", "--logtostderr stray");
  EXPECT_EQ(argument.status, 1);
  EXPECT_TRUE(Contains(argument.output, "unexpected argument 'stray'")) << argument.output;
  const Result missing = Caffe("test", "--logtostderr --model=models/lenet/lenet_dummy.prototxt");
  EXPECT_EQ(missing.status, 1);
  EXPECT_TRUE(Contains(missing.output, "--weights is required")) << missing.output;
}

}  // namespace
}  // namespace demi
