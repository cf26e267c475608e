// Draws a net prototxt with Graphviz: layers, blobs and the memory plan.
//   build/tools/draw_net --model=models/lenet_fashion/train_val.prototxt --output=lenet.png
//   build/tools/draw_net models/lenet_fashion/deploy.prototxt lenet.svg   (Caffe's form)
// The output's extension picks the format: .dot writes the DOT text; any
// other (.png, .svg, .pdf) is rendered by Graphviz's `dot -T<extension>`.
#include "demi/util/draw_net.hpp"

#include <gflags/gflags.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "demi/net.hpp"
#include "demi/tools/common_flags.hpp"
#include "demi/util/batch_size.hpp"
#include "demi/util/cli.hpp"
#include "demi/util/io.hpp"
#include "demi/util/temporary_files.hpp"
#include "demi/util/upgrade_proto.hpp"

extern char** environ;

// --model (or the first positional argument), --phase (when empty: TEST for a
// deploy net, else TRAIN),
// --batch, --level and --stage are the commands' shared flags (the library
// defines them once).
DEFINE_string(output, "", "net.png, net.svg, net.pdf or net.dot (or the second positional).");
DEFINE_string(rankdir, "LR", "Graph direction: LR (left to right), TB, RL or BT.");

namespace {

demi::PlanStrategy StrategyOf(demi::MemoryOptimization optimization) {
  switch (optimization) {
    case demi::NONE:
      return demi::PlanStrategy::kNone;
    case demi::SLOTS:
      return demi::PlanStrategy::kSlots;
    default:
      return demi::PlanStrategy::kArena;
  }
}

/// The DOT of --model in the requested state, planned as its prototxt says.
std::string DrawModel(const std::string& model) {
  demi::NetParameter param;
  demi::ReadNetParamsFromTextFile(model, &param);
  // No --phase: a deploy net draws as TEST (how it runs), others as TRAIN.
  const std::string phase = !FLAGS_phase.empty()                     ? FLAGS_phase
                            : demi::DrawPhaseOf(param) == demi::TEST ? "TEST"
                                                                     : "TRAIN";
  DEMI_CHECK(phase == "TRAIN" || phase == "TEST", "--phase must be TRAIN or TEST, not '",
             FLAGS_phase, "'");
  DEMI_CHECK(FLAGS_rankdir == "LR" || FLAGS_rankdir == "TB" || FLAGS_rankdir == "RL" ||
                 FLAGS_rankdir == "BT",
             "--rankdir must be LR, TB, RL or BT, not '", FLAGS_rankdir, "'");
  demi::NetState* state = param.mutable_state();
  state->set_phase(phase == "TRAIN" ? demi::TRAIN : demi::TEST);
  state->set_level(FLAGS_level);
  for (const std::string& stage : demi::SplitList(FLAGS_stage)) state->add_stage(stage);
  if (FLAGS_batch > 0) demi::SetBatchSize(&param, FLAGS_batch);
  demi::DrawNetOptions options;
  options.rankdir = FLAGS_rankdir;
  // An explicit --rankdir is drawn as asked, however large.
  options.fit_rankdir = gflags::GetCommandLineFlagInfoOrDie("rankdir").is_default;
  options.strategy = StrategyOf(param.memory_optimization());
  options.keep = {param.keep_blob().begin(), param.keep_blob().end()};
  param.set_memory_optimization(demi::NONE);  // plan here, allocate nothing
  const demi::Net net(param, demi::Context(), nullptr, model);
  return demi::NetToDot(net, options);
}

/// Runs `dot -T<format> dot_path -o output_path`; a missing Graphviz is an
/// error that says what to install.
void RunDot(const std::string& format, const std::string& dot_path,
            const std::string& output_path) {
  const std::string type = "-T" + format;
  const char* argv[] = {"dot", type.c_str(), dot_path.c_str(), "-o", output_path.c_str(), nullptr};
  pid_t pid = 0;
  const int error = posix_spawnp(&pid, "dot", nullptr, nullptr, const_cast<char**>(argv), environ);
  DEMI_CHECK(error != ENOENT,
             "Graphviz's 'dot' is not on PATH: install it (apt-get install graphviz) or write "
             "--output=NAME.dot");
  DEMI_CHECK(error == 0, "cannot run Graphviz's 'dot': ", std::strerror(error));
  int status = 0;
  DEMI_CHECK(waitpid(pid, &status, 0) == pid, "waiting for 'dot': ", std::strerror(errno));
  DEMI_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "'dot ", type,
             "' failed (its message is above); is '", format,
             "' a Graphviz output format? Try .png, .svg, .pdf or .dot");
}

int Run(const std::vector<std::string>& args) {
  DEMI_CHECK(args.size() <= 2, "unexpected argument '", args.size() > 2 ? args[2] : "",
             "'; give MODEL OUTPUT or --model and --output");
  const std::string model = args.size() >= 1 ? args[0] : FLAGS_model;
  const std::string output = args.size() >= 2 ? args[1] : FLAGS_output;
  DEMI_CHECK(!model.empty(), "give the net prototxt: --model=net.prototxt (see --help)");
  DEMI_CHECK(!output.empty(), "give where to write: --output=net.png, .svg, .pdf or .dot");
  const std::string extension = std::filesystem::path(output).extension().string();
  DEMI_CHECK(extension.size() > 1, "--output '", output,
             "' has no extension to pick a format (.png, .svg, .pdf or .dot)");
  const std::string format = extension.substr(1);
  // Before the temporaries below, whose names would stand in for it in the error.
  demi::CheckCanCreateFile(output);
  demi::RemoveStaleTemporaries(output);
  const std::string dot = DrawModel(model);
  if (format == "dot" || format == "gv") {
    demi::WriteFileAtomically(output, dot);
  } else {
    // Rendered through temporaries, renamed only when dot succeeded.
    const std::string dot_path = demi::TemporaryPathFor(output + ".dot");
    const std::string rendered = demi::TemporaryPathFor(output);
    demi::WriteFileAtomically(dot_path, dot);
    try {
      RunDot(format, dot_path, rendered);
    } catch (...) {
      std::remove(dot_path.c_str());
      std::remove(rendered.c_str());
      throw;
    }
    std::remove(dot_path.c_str());
    DEMI_CHECK(std::rename(rendered.c_str(), output.c_str()) == 0, "cannot rename ", rendered,
               " to ", output, ": ", std::strerror(errno));
  }
  std::cout << "Wrote " << output << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  FLAGS_minloglevel = google::WARNING;
  return demi::RunToolWithArgs(
      argc, argv,
      "Draw a net with Graphviz: layers, blobs and the memory plan as colour.\n"
      "Usage: draw_net --model=net.prototxt --output=net.png|.svg|.pdf|.dot [--phase=TRAIN|TEST] "
      "[--rankdir=LR|TB] [--batch=N] [--stage=a,b] [--level=N]\n"
      "   or: draw_net net.prototxt net.png",
      Run, {"model", "phase", "batch", "level", "stage"});
}
