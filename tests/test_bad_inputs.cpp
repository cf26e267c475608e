// The bad-input suite: the real tools run on the inputs of tests/bad_inputs/
// (and on what a case's setup makes), as a hostile user would run them. A
// failing case must exit 1 with its error as the one last line of the log,
// naming the file, layer or record, and leave nothing behind. Add a case by
// adding a row to kCases (and its input files to tests/bad_inputs/).
#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "demi/util/io.hpp"
#include "solver_test_util.hpp"
#include "tool_test_util.hpp"

namespace demi {
namespace {

namespace fs = std::filesystem;

/// One bad input. `setup` and `command` are bash, run in a fresh scratch
/// directory with $IN (tests/bad_inputs, absolute) and $TOOLS (build/tools)
/// set, glog to stderr, and `wait_for PATTERN FILE` (waits up to 60 s for
/// PATTERN to appear in FILE) defined.
struct BadInput {
  std::string name;
  /// Makes the scene ("" for none); its files are not leftovers. Exit status
  /// 77 skips the case (the machine cannot make the scene).
  std::string setup;
  std::string command;   ///< the run under test
  std::string expected;  ///< status 1: the error line holds it; status 0: the log holds it
  int status = 1;
  /// Regexes of the paths (relative to the scratch directory) the command
  /// must leave, each matched at least once; any other new path is a leftover.
  std::vector<std::string> outputs = {};
};

/// A setup: db, an LMDB of 64 records of images/good.jpg (48 x 48 color,
/// 440 KB), its data.mdb then cut to half.
const char* const kTruncatedLmdb =
    "for i in $(seq 64); do echo 'good.jpg 0'; done > list && "
    "$TOOLS/convert_imageset $IN/images/ list db && "
    "truncate -s $(( $(stat -c %s db/data.mdb) / 2 )) db/data.mdb";

/// A setup: disk, a 256 KiB tmpfs (skipped unless this process may mount),
/// and MNIST files of 1000 28 x 28 images (784 KB) that do not fit it.
const char* const kFullDisk =
    "mkdir disk && { mount -t tmpfs -o size=256k demitasse_full_disk disk || exit 77; } && "
    "printf '\\x00\\x00\\x08\\x03\\x00\\x00\\x03\\xe8\\x00\\x00\\x00\\x1c"
    "\\x00\\x00\\x00\\x1c' > images && head -c 784000 /dev/urandom >> images && "
    "printf '\\x00\\x00\\x08\\x01\\x00\\x00\\x03\\xe8' > labels && "
    "head -c 1000 /dev/zero >> labels";

/// Ends a command run on kFullDisk's disk: unmounts it, failing (status 3)
/// if the command left anything on it.
const char* const kUnmountDisk =
    "s=$?; left=$(ls -A disk); umount disk; "
    "[ -z \"$left\" ] || { echo \"left on the full disk: $left\"; exit 3; }; exit $s";

/// A setup that skips its case in sanitizer builds, whose shadow memory
/// reserves far more address space than any ulimit -v the case sets.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
const char* const kUnlessSanitized = "exit 77";
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
const char* const kUnlessSanitized = "exit 77";
#else
const char* const kUnlessSanitized = "";
#endif
#else
const char* const kUnlessSanitized = "";
#endif

// clang-format off
const std::vector<BadInput> kCases = {
    // Nets.
    {"a prototxt syntax error names file, line and column", "",
     "$TOOLS/time --model=$IN/syntax_error.prototxt",
     "syntax_error.prototxt:4:7: "},
    {"an unknown layer type names the layer and the type", "",
     "$TOOLS/time --model=$IN/unknown_layer_type.prototxt",
     "'InnerProdct'"},

    // Conversions write a temporary database and rename it when complete.
    {"convert_imageset: a missing image fails and leaves no database", "",
     "$TOOLS/convert_imageset $IN/images/ $IN/images/list_missing.txt db",
     "list_missing.txt:2: image '$IN/images/missing.jpg' does not exist"},
    {"convert_imageset: after a failure, the --skip_bad_records rerun works",
     "$TOOLS/convert_imageset $IN/images/ $IN/images/list_missing.txt db && exit 1; true",
     "$TOOLS/convert_imageset --skip_bad_records $IN/images/ $IN/images/list_missing.txt db",
     "Wrote 1 images to db, skipped 1 bad ones", 0, {"db", "db/data\\.mdb", "db/lock\\.mdb"}},
    {"convert_imageset: an existing database is refused by name", "mkdir db",
     "$TOOLS/convert_imageset $IN/images/ $IN/images/list_good.txt db",
     "LMDB 'db' already exists"},
    {"convert_imageset: the temporary of a killed conversion is removed",
     "(exit 0) & dead=$!; wait $dead; mkdir db.tmp.$dead; echo partial > db.tmp.$dead/data.mdb",
     "$TOOLS/convert_imageset $IN/images/ $IN/images/list_good.txt db",
     "which died while writing it", 0, {"db", "db/data\\.mdb", "db/lock\\.mdb"}},
    {"convert_imageset: a label that is not a number names list and line", "",
     "$TOOLS/convert_imageset $IN/images/ $IN/images/list_bad_label.txt db",
     "list_bad_label.txt:1: label 'cat' is not an integer"},
    {"convert_imageset: a label past 32 bits is out of range, not 'not an integer'", "",
     "$TOOLS/convert_imageset $IN/images/ $IN/images/list_label_out_of_range.txt db",
     "list_label_out_of_range.txt:1: label '99999999999' is out of range"},
    {"convert_imageset: a JPEG whose middle is corrupt is named", "",
     "$TOOLS/convert_imageset $IN/images/ $IN/images/list_corrupt.txt db",
     "list_corrupt.txt:2: image '$IN/images/corrupt.jpg' is a corrupt JPEG: bad Huffman code"},
    {"convert_imageset: --skip_bad_records skips and counts a corrupt JPEG", "",
     "$TOOLS/convert_imageset --skip_bad_records $IN/images/ $IN/images/list_corrupt.txt db",
     "Wrote 1 images to db, skipped 1 bad ones", 0, {"db", "db/data\\.mdb", "db/lock\\.mdb"}},

    // Truncated images are named, not decoded grey.
    {"convert_imageset: a truncated JPEG is named", "",
     "$TOOLS/convert_imageset $IN/images/ $IN/images/list_truncated.txt db",
     "truncated.jpg' is a truncated JPEG"},
    {"ImageData: a truncated JPEG is named with its list line", "cp -r $IN/images images",
     "$TOOLS/time --model=$IN/image_data_truncated.prototxt --iterations=1",
     "image 'images/truncated.jpg' (line 2 of 'images/list_truncated.txt') is a truncated JPEG"},

    // A truncated LMDB (a copy cut short) is named when opened, not read
    // past its end (SIGBUS) or trained on.
    {"test: a truncated LMDB is named", kTruncatedLmdb,
     "$TOOLS/test --model=$IN/lmdb_net.prototxt --weights=unread.caffemodel --iterations=1",
     "LMDB 'db' is truncated: its data.mdb holds"},
    {"compute_image_mean: a truncated LMDB is named", kTruncatedLmdb,
     "$TOOLS/compute_image_mean db mean.binaryproto", "LMDB 'db' is truncated"},
    {"train: a truncated LMDB is named", StrCat(kTruncatedLmdb, " && cp $IN/lmdb_net.prototxt ."),
     "$TOOLS/train --solver=$IN/solver_lmdb.prototxt", "LMDB 'db' is truncated"},

    // A full disk is named as such, not as LMDB's "Input/output error". As
    // root, a 256 KiB tmpfs is the full disk; elsewhere the case is skipped.
    {"convert_mnist: a full disk is named", kFullDisk,
     StrCat("$TOOLS/convert_mnist images labels disk/db; ", kUnmountDisk),
     "commit failed: the filesystem holding it is full"},
    {"extract_features: a full disk is named",
     StrCat(kFullDisk, " && cp $IN/features_net.prototxt . && "
            "$TOOLS/train --solver=$IN/solver_features.prototxt"),
     StrCat("$TOOLS/extract_features features_iter_1.caffemodel features_net.prototxt ip "
            "disk/features 20 lmdb; ", kUnmountDisk),
     "commit failed: the filesystem holding it is full"},

    // Values no run can mean.
    {"train: a DummyData batch of 0 is refused naming the layer",
     "sed 's/dim: 4 dim: 16/dim: 0 dim: 16/' $IN/solver_small.prototxt > solver.prototxt",
     "$TOOLS/train --solver=solver.prototxt",
     "DummyData layer 'data': top 0 has shape 0 16 (0), which holds no values"},
    {"train: a negative max_iter is refused naming the field and the file",
     "sed 's/max_iter: 4/max_iter: -5/' $IN/solver_small.prototxt > solver.prototxt",
     "$TOOLS/train --solver=solver.prototxt", "solver.prototxt: max_iter is -5"},
    {"train: a negative base_lr is refused at set-up",
     "sed 's/base_lr: 0.01/base_lr: -0.01/' $IN/solver_small.prototxt > solver.prototxt",
     "$TOOLS/train --solver=solver.prototxt", "solver.prototxt: base_lr is -0.01"},
    {"train: a NaN base_lr is refused at set-up",
     "sed 's/base_lr: 0.01/base_lr: nan/' $IN/solver_small.prototxt > solver.prototxt",
     "$TOOLS/train --solver=solver.prototxt", "solver.prototxt: base_lr is nan"},
    {"train: --cpu_replicas far past the cores is refused with the figures", "",
     "$TOOLS/train --solver=$IN/solver_small.prototxt --cpu_replicas=1000",
     "--cpu_replicas=1000 is more than 4 times the"},
    {"train: --memory_budget=0 is refused, not read as no budget", "",
     "$TOOLS/train --solver=$IN/solver_small.prototxt --memory_budget=0",
     "--memory_budget=0 would leave the train net no memory at all"},
    {"train: --memory_budget in GB is read as powers of 1000, and logged", "",
     "$TOOLS/train --solver=$IN/solver_small.prototxt --memory_budget=1.5GB",
     "--memory_budget=1.5GB: 1500000000 bytes", 0,
     {"run_iter_4\\.caffemodel", "run_iter_4\\.solverstate"}},
    {"time: an Input with 0 channels is named, not a filler's complaint", "",
     "$TOOLS/time --model=$IN/input_zero_channels.prototxt --iterations=1",
     "Input layer 'data': top 0 has shape 1 0 28 28 (0), whose axis 1 is 0"},

    // Arguments and paths.
    {"extract_features: a negative batch count is named, not taken for a flag", "",
     "$TOOLS/extract_features w.caffemodel $IN/../../models/lenet_fashion/deploy.prototxt prob f "
     "-3 lmdb",
     "NUM_MINI_BATCHES is -3: it cannot be negative"},
    {"draw_net: a missing output directory is named, not a temporary", "",
     "$TOOLS/draw_net $IN/../../models/lenet_fashion/deploy.prototxt missing/net.png",
     "cannot write 'missing/net.png': the directory 'missing' does not exist"},

    // Snapshots.
    {"train: a second trainer on one snapshot_prefix is refused, naming the first", "",
     "$TOOLS/train --solver=$IN/solver_forever.prototxt > first.log 2>&1 & first=$!; "
     "wait_for 'Iteration 20,' first.log || kill -9 $first; "
     "$TOOLS/train --solver=$IN/solver_forever.prototxt > second.log 2>&1; s=$?; "
     "kill -TERM $first; wait $first || s=3; "
     "grep -q \"PID $first on host $(hostname),\" second.log || s=4; cat second.log; exit $s",
     "snapshot_prefix 'run' is in use by another process", 1,
     {"first\\.log", "second\\.log", "run_iter_\\d+\\.caffemodel",
      "run_iter_\\d+\\.solverstate"}},
    {"train: a snapshot temporary of a dead process is removed",
     "(exit 0) & dead=$!; wait $dead; echo partial > run_iter_2.caffemodel.tmp.$dead",
     "$TOOLS/train --solver=$IN/solver_small.prototxt",
     "which died while writing it", 0,
     {"run_iter_4\\.caffemodel", "run_iter_4\\.solverstate"}},
    {"train: a snapshot over ulimit -f fails naming the file and the reason", "",
     "ulimit -f 2; exec $TOOLS/train --solver=$IN/solver_small.prototxt",
     "cannot write 'run_iter_4.caffemodel': File too large"},
    {"train: a bad DEMI_GEMM is named with its values", "",
     "DEMI_GEMM=mkl $TOOLS/train --solver=$IN/solver_small.prototxt",
     "the environment variable DEMI_GEMM is 'mkl'; set it to dnnl or openblas"},
    {"train: a CPU run fits ulimit -v 600000 (a CUDA build maps no CUDA library at start)",
     kUnlessSanitized,
     // Two threads: each thread's stack and malloc arena take address space,
     // so the figure would otherwise depend on the machine's cores.
     "ulimit -v 600000; OMP_NUM_THREADS=2 exec $TOOLS/train --solver=$IN/solver_small.prototxt",
     "Optimization Done.", 0, {"run_iter_4\\.caffemodel", "run_iter_4\\.solverstate"}},
    {"train: SIGTERM snapshots and stops cleanly", "",
     "$TOOLS/train --solver=$IN/solver_forever.prototxt > log 2>&1 & pid=$!; "
     "wait_for 'Iteration 20,' log || kill -9 $pid; kill -TERM $pid; wait $pid; s=$?; cat log; "
     "exit $s",
     "Optimization stopped early.", 0,
     {"log", "run_iter_\\d+\\.caffemodel", "run_iter_\\d+\\.solverstate"}},
};
// clang-format on

/// Every path under `dir`, relative to it.
std::set<std::string> PathsUnder(const std::string& dir) {
  std::set<std::string> paths;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    paths.insert(fs::relative(entry.path(), dir).string());
  }
  return paths;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream stream(text);
  for (std::string line; std::getline(stream, line);) {
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

/// glog's prefix of an ERROR or FATAL line: "E[2024]0123 12:34:56.789012  4567 file.cpp:89] ".
bool IsErrorLine(const std::string& line) {
  static const std::regex prefix(R"(^[EF]\d{4,8} \d\d:\d\d:\d\d\.\d+ +\d+ \S+:\d+\] )");
  return std::regex_search(line, prefix);
}

/// Signs of a crash or of a problem reported outside the one error line.
const char* const kForbidden[] = {"*** ",  // glog's failure handler: a signal or a CHECK
                                  "terminate called",
                                  "Aborted",
                                  "Segmentation fault",
                                  "Premature end of JPEG file",
                                  "Corrupt JPEG data"};

/// Runs `script` (kept in `script_file`) in `dir`; returns the status and the output.
Result RunIn(const std::string& dir, const std::string& script_file, const std::string& script) {
  const std::string in = fs::absolute("tests/bad_inputs").string();
  const std::string tools = fs::path(ToolPath("train")).parent_path().string();
  const std::string prelude =
      "wait_for() { for i in $(seq 600); do grep -q \"$1\" \"$2\" && return 0; sleep 0.1; done; "
      "return 1; }\n";
  WriteFileAtomically(script_file, prelude + script + "\n");
  return RunShell(StrCat("cd ", dir, " && IN=", in, " TOOLS=", tools,
                         " GLOG_logtostderr=1 timeout 120 bash ", script_file));
}

/// gtest names a failing case by this, not by the struct's bytes.
void PrintTo(const BadInput& bad, std::ostream* out) { *out << "'" << bad.name << "'"; }

class BadInputTest : public ::testing::TestWithParam<BadInput> {};

TEST_P(BadInputTest, FailsCleanly) {
  const BadInput& bad = GetParam();
  ASSERT_TRUE(fs::is_directory("tests/bad_inputs")) << "run the tests from the repository root";
  ScratchDir scratch;
  const std::string dir = scratch.file("work");
  fs::create_directory(dir);
  if (!bad.setup.empty()) {
    const Result setup = RunIn(dir, scratch.file("setup.sh"), bad.setup);
    if (setup.status == 77) GTEST_SKIP() << "the setup cannot run here:\n" << setup.output;
    ASSERT_EQ(setup.status, 0) << "setup failed:\n" << setup.output;
  }
  const std::set<std::string> before = PathsUnder(dir);
  const Result run = RunIn(dir, scratch.file("command.sh"), bad.command);
  const std::string in = fs::absolute("tests/bad_inputs").string();
  const std::string expected = std::regex_replace(bad.expected, std::regex(R"(\$IN)"), in);
  const std::vector<std::string> lines = Lines(run.output);

  EXPECT_EQ(run.status, bad.status) << run.output;
  for (const char* sign : kForbidden) {
    EXPECT_EQ(run.output.find(sign), std::string::npos) << "'" << sign << "' in:\n" << run.output;
  }
  int error_lines = 0;
  for (const std::string& line : lines) error_lines += IsErrorLine(line) ? 1 : 0;
  if (bad.status == 1) {
    ASSERT_FALSE(lines.empty());
    EXPECT_TRUE(IsErrorLine(lines.back())) << "the last line is not the error:\n" << run.output;
    EXPECT_EQ(error_lines, 1) << run.output;
    EXPECT_NE(lines.back().find(expected), std::string::npos)
        << "the error line lacks '" << expected << "':\n"
        << run.output;
  } else {
    EXPECT_EQ(error_lines, 0) << run.output;
    EXPECT_NE(run.output.find(expected), std::string::npos)
        << "the log lacks '" << expected << "':\n"
        << run.output;
  }

  // Nothing left behind: no temporary anywhere, no new path but the outputs.
  std::vector<bool> output_seen(bad.outputs.size(), false);
  for (const std::string& path : PathsUnder(dir)) {
    EXPECT_FALSE(std::regex_search(path, std::regex(R"(\.tmp\.\d+$)"))) << "left behind: " << path;
    if (before.count(path) != 0) continue;
    bool expected_output = false;
    for (size_t i = 0; i < bad.outputs.size(); ++i) {
      if (std::regex_match(path, std::regex(bad.outputs[i])))
        output_seen[i] = expected_output = true;
    }
    EXPECT_TRUE(expected_output) << "left behind: " << path;
  }
  for (size_t i = 0; i < bad.outputs.size(); ++i) {
    EXPECT_TRUE(output_seen[i]) << "no output matches " << bad.outputs[i] << ":\n" << run.output;
  }
}

std::string CaseName(const ::testing::TestParamInfo<BadInput>& info) {
  std::string name;
  for (char c : info.param.name) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return StrCat(info.index, "_", name.substr(0, 60));
}

INSTANTIATE_TEST_SUITE_P(BadInputs, BadInputTest, ::testing::ValuesIn(kCases), CaseName);

}  // namespace
}  // namespace demi
