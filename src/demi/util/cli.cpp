#include "demi/util/cli.hpp"

#include <gflags/gflags.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <limits>
#include <new>
#include <opencv2/core.hpp>
#include <sstream>
#include <utility>

#include "demi/util/cpu_load.hpp"
#include "demi/util/device.hpp"
#include "demi/util/math.hpp"
#include "demi/util/threads.hpp"

namespace demi {

std::vector<std::string> SplitList(const std::string& text, char separator) {
  std::vector<std::string> items;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, separator)) {
    if (!item.empty()) items.push_back(item);
  }
  return items;
}

namespace {

/// `read` is std::stod or std::stol; an exception it throws means no number.
template <typename T, typename Read>
size_t ReadNumberWith(const std::string& text, T* value, const Read& read) {
  size_t end = 0;
  try {
    *value = read(text, &end);
  } catch (const std::exception&) {
    return 0;
  }
  return end;
}

}  // namespace

size_t ReadNumber(const std::string& text, double* value) {
  return ReadNumberWith(text, value,
                        [](const std::string& s, size_t* end) { return std::stod(s, end); });
}

size_t ReadNumber(const std::string& text, long* value) {
  return ReadNumberWith(text, value,
                        [](const std::string& s, size_t* end) { return std::stol(s, end); });
}

std::vector<int> ParseGpuFlag(const std::string& gpu) {
  if (gpu.empty()) return {};
  // The syntax first: a typo is named as such, on any machine.
  std::vector<int> ids;
  if (gpu != "all") {
    for (const std::string& item : SplitList(gpu)) {
      char* end = nullptr;
      errno = 0;
      const long id = std::strtol(item.c_str(), &end, 10);
      DEMI_CHECK(!item.empty() && std::isdigit(static_cast<unsigned char>(item[0])) &&
                     *end == '\0' && errno == 0 && id <= std::numeric_limits<int>::max(),
                 "--gpu: '", item, "' is not a device id or 'all'");
      ids.push_back(static_cast<int>(id));
    }
    DEMI_CHECK(!ids.empty(), "--gpu: '", gpu, "' names no device id; give ids (0,1) or 'all'");
  }
  const int count = DeviceCount();
  DEMI_CHECK(count > 0, "--gpu=", gpu, " was given but no CUDA device is available",
             kBuiltWithCuda ? "" : " (this build is CPU_ONLY)",
             "; run without --gpu to use the CPU");
  if (gpu == "all") {
    for (int i = 0; i < count; ++i) ids.push_back(i);
    return ids;
  }
  for (int id : ids) {
    DEMI_CHECK(id < count, "--gpu: device ", id, " does not exist (", count, " device(s) present)");
  }
  return ids;
}

Context ContextForGpuFlag(const std::string& gpu) {
  const std::vector<int> ids = ParseGpuFlag(gpu);
  DEMI_CHECK(ids.size() <= 1, "--gpu=", gpu, " names ", ids.size(),
             " devices; this tool runs on one");
  Context context;
  if (!ids.empty()) {
    context.device = Device::kGPU;
    context.device_id = ids[0];
    SetCurrentDevice(ids[0]);
  }
  return context;
}

namespace {

/// Where PrepareThreadingEnvironment leaves the load that made it choose
/// passive waiting, for ApplyThreadsFlag's log line.
constexpr char kBusyCoresVariable[] = "DEMI_BUSY_CORES_AT_START";

/// ", idle threads waiting passively ..." when this process chose to because
/// of the load it found; "" otherwise. Reads the note once.
std::string DescribeWaitPolicyChoice() {
  const char* busy = std::getenv(kBusyCoresVariable);
  if (busy == nullptr) return "";
  std::ostringstream line;
  line << ", idle threads waiting passively: " << std::fixed << std::setprecision(1)
       << std::atof(busy) << " cores were busy at start (set OMP_WAIT_POLICY or GOMP_SPINCOUNT "
       << "to choose)";
  unsetenv(kBusyCoresVariable);  // processes this one starts inherit the policy, not the note
  return line.str();
}

}  // namespace

void ApplyThreadsFlag(int threads) {
  DEMI_CHECK(threads >= 0,
             "--threads must be 0 (the default: OMP_NUM_THREADS, else all cores) "
             "or positive, got ",
             threads);
  SetThreads(threads);
  LOG(INFO) << "Using " << Threads() << " threads"
            << (std::getenv("OPENBLAS_NUM_THREADS") != nullptr
                    ? StrCat(" (OpenBLAS: ", BlasThreads(), ", from OPENBLAS_NUM_THREADS)")
                    : std::string())
            << DescribeWaitPolicyChoice();
}

namespace {

/// libgomp reads how its idle threads wait only when it loads, before main.
/// Its default spins about 300,000 times in every barrier before sleeping:
/// the fastest on idle cores, and many times slower on cores other processes
/// also use, where the spinning threads take the time the working ones need
/// (and, with OpenBLAS's GEMMs, DEMI_GEMM=openblas, the cores its own
/// threads need). So a tool that finds neither OMP_WAIT_POLICY nor
/// GOMP_SPINCOUNT in the environment looks at the cores it may run on for
/// kLoadSampleSeconds: idle, it keeps libgomp's spinning; with at least
/// kBusyCoresForPassiveWaiting of them busy, it sets OMP_WAIT_POLICY=PASSIVE
/// and runs itself again (once: the second run finds it set), leaving the
/// measurement in kBusyCoresVariable for the log. Load that starts later is
/// not seen. bench/loaded_threads.sh (results/loaded_threads.md): a LeNet
/// step with 2 threads on 2 cores, each also running a busy process, took
/// 2.2-2.4x its one-thread time spinning and 0.8-1.2x passive; on idle
/// cores passive waiting cost up to 29 % of the step.
/// On a CPU model OpenBLAS does not know, OPENBLAS_CORETYPE names the
/// vectorised kernels it would otherwise skip.
constexpr double kLoadSampleSeconds = 0.05;
constexpr double kBusyCoresForPassiveWaiting = 0.5;

void PrepareThreadingEnvironment(char** argv) {
  const bool openblas = CurrentGemmLibrary() == GemmLibrary::kOpenBlas;
  bool changed = false;
  if (std::getenv("OMP_WAIT_POLICY") == nullptr && std::getenv("GOMP_SPINCOUNT") == nullptr) {
    const double busy = MeasureBusyCores(kLoadSampleSeconds);
    if (busy >= kBusyCoresForPassiveWaiting) {
      setenv("OMP_WAIT_POLICY", "PASSIVE", 1);
      setenv(kBusyCoresVariable, StrCat(busy).c_str(), 1);
      changed = true;
    }
  }
  const std::string core_type = openblas ? OpenBlasCoreTypeForThisCpu() : std::string();
  if (!core_type.empty()) {
    setenv("OPENBLAS_CORETYPE", core_type.c_str(), 1);
    changed = true;
  }
  if (changed) execv("/proc/self/exe", argv);  // returns only if it failed: run on as we are
}

}  // namespace

std::string DescribeToolError(const std::exception_ptr& error) {
  std::string line;
  try {
    std::rethrow_exception(error);
  } catch (const Error& e) {
    line = e.what();
  } catch (const std::bad_alloc& e) {
    line = StrCat("out of memory: ", e.what(),
                  "; try: build/tools/memory --model=... (see --fit) to size the net");
  } catch (const cv::Exception& e) {
    // Its what() spans lines (version, file and line); the message and the
    // function it came from say what matters.
    line = StrCat("OpenCV: ", e.err, e.func.empty() ? "" : StrCat(" (in ", e.func, ")"));
  } catch (const std::exception& e) {
    line = StrCat("unexpected error: ", e.what());
  } catch (...) {
    line = "unexpected error of an unknown type";
  }
  // One line, whatever the message holds.
  for (char& c : line) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return line;
}

void BeginTool(char** argv) {
  FLAGS_alsologtostderr = true;
  // Caffe's lines (glog 0.3) start "I1207 19:05:21.123456": Debian's glog
  // puts the year in front of the month, which Caffe's parse_log.py and
  // extract_seconds.py then read as the month. A flag given still wins, and
  // so does glog's GLOG_log_year_in_prefix.
  if (std::getenv("GLOG_log_year_in_prefix") == nullptr) FLAGS_log_year_in_prefix = false;
  try {
    PrepareThreadingEnvironment(argv);
  } catch (...) {
    // A bad DEMI_GEMM, found before logging starts: reported as every tool
    // error is, in one line, and the tool stops.
    InitToolLogging(argv[0]);
    std::exit(RunReportingErrors([]() -> int { throw; }));
  }
}

void InitToolLogging(const char* program) {
  google::InitGoogleLogging(program);
  google::InstallFailureSignalHandler();
  // glog takes SIGTERM as a crash: its handler prints a stack trace and then
  // flushes the logs with calls that are not async-signal-safe, while the
  // other threads (OpenMP's, inside oneDNN) run on. A polite request to end
  // gets the default action instead, or train's own handler.
  std::signal(SIGTERM, SIG_DFL);
  std::signal(SIGXFSZ, SIG_IGN);
}

int RunReportingErrors(const std::function<int()>& body) {
  try {
    return body();
  } catch (...) {
    LOG(ERROR) << DescribeToolError(std::current_exception());
    return 1;
  }
}

namespace {

bool IsNegativeNumber(const char* text) {
  return text[0] == '-' && (std::isdigit(static_cast<unsigned char>(text[1])) ||
                            (text[1] == '.' && std::isdigit(static_cast<unsigned char>(text[2]))));
}

/// Whether `arg` is "-name" or "--name" (no "=value") of a flag that takes
/// the next argument as its value: any known flag but a bool.
bool TakesNextArgument(const std::string& arg) {
  if (arg.size() < 2 || arg[0] != '-' || arg.find('=') != std::string::npos) return false;
  const std::string name = arg.substr(arg[1] == '-' ? 2 : 1);
  gflags::CommandLineFlagInfo info;
  return gflags::GetCommandLineFlagInfo(name.c_str(), &info) && info.type != "bool";
}

}  // namespace

void ParseFlagsKeepingNegativeNumbers(int* argc, char*** argv) {
  // Each such argument is swapped for a placeholder gflags leaves alone, and
  // put back where gflags moved it (by pointer: gflags reorders argv).
  static char placeholder[] = "negative number";
  std::vector<std::pair<int, char*>> negatives;  // argv index, original
  for (int i = 1; i < *argc && std::string((*argv)[i]) != "--"; ++i) {
    if (IsNegativeNumber((*argv)[i]) && !TakesNextArgument((*argv)[i - 1])) {
      negatives.emplace_back(i, (*argv)[i]);
      (*argv)[i] = placeholder;
    }
  }
  gflags::ParseCommandLineNonHelpFlags(argc, argv, true);
  size_t next = 0;  // gflags keeps the positional arguments in their order
  for (int i = 1; i < *argc && next < negatives.size(); ++i) {
    if ((*argv)[i] == placeholder) (*argv)[i] = negatives[next++].second;
  }
}

namespace {

/// Flags the commands define (src/demi/tools/), as opposed to glog's and
/// gflags' own, which every tool takes, and a tool's own (tools/NAME.cpp).
bool DefinedByCommands(const gflags::CommandLineFlagInfo& info) {
  return info.filename.find("demi/tools/") != std::string::npos;
}

bool DefinedByToolFile(const gflags::CommandLineFlagInfo& info) {
  return !DefinedByCommands(info) && info.filename.rfind("tools/", 0) == 0;
}

}  // namespace

void RefuseFlagsNotTaken(const std::vector<std::string>& takes, const std::string& invocation) {
  std::vector<gflags::CommandLineFlagInfo> flags;
  gflags::GetAllFlags(&flags);
  for (const gflags::CommandLineFlagInfo& info : flags) {
    const bool taken = std::find(takes.begin(), takes.end(), info.name) != takes.end();
    DEMI_CHECK(!DefinedByCommands(info) || info.is_default || taken, "--", info.name,
               " is not a flag of ", invocation, " (see ", invocation, " --help)");
  }
}

std::string FlagsHelp(const std::vector<std::string>& names) {
  std::ostringstream out;
  if (!names.empty()) out << "\nFlags (--name=value or -name value):\n";
  for (const std::string& name : names) {
    gflags::CommandLineFlagInfo info;
    CHECK(gflags::GetCommandLineFlagInfo(name.c_str(), &info)) << "no file defines --" << name;
    const std::string value =
        info.type == "string" ? "\"" + info.default_value + "\"" : info.default_value;
    out << "  --" << name << "  " << info.description << "\n"
        << "      type: " << info.type << "  default: " << value << "\n";
  }
  return out.str();
}

bool HelpRequested() {
  std::string value;
  return gflags::GetCommandLineOption("help", &value) && value == "true";
}

int RunToolWithArgs(int argc, char** argv, const std::string& usage,
                    const std::function<int(const std::vector<std::string>&)>& body,
                    const std::vector<std::string>& shared_flags) {
  BeginTool(argv);
  std::vector<std::string> takes = shared_flags;
  std::vector<gflags::CommandLineFlagInfo> flags;
  gflags::GetAllFlags(&flags);
  for (const gflags::CommandLineFlagInfo& info : flags) {
    if (DefinedByToolFile(info)) takes.push_back(info.name);
  }
  const std::string help = usage + "\n" + FlagsHelp(takes);
  gflags::SetUsageMessage(help);
  ParseFlagsKeepingNegativeNumbers(&argc, &argv);
  if (HelpRequested()) {
    std::cout << help;
    return 0;
  }
  gflags::HandleCommandLineHelpFlags();  // --helpfull, --version, ...: they exit
  InitToolLogging(argv[0]);
  const std::vector<std::string> args(argv + 1, argv + argc);
  const std::string invocation = std::filesystem::path(argv[0]).filename().string();
  return RunReportingErrors([&] {
    RefuseFlagsNotTaken(takes, invocation);
    return body(args);
  });
}

int RunTool(int argc, char** argv, const std::string& usage, const std::function<int()>& body) {
  return RunToolWithArgs(argc, argv, usage, [&](const std::vector<std::string>& args) {
    DEMI_CHECK(args.empty(), "unexpected argument '", args.empty() ? "" : args[0],
               "'; this tool takes flags only (see --help)");
    return body();
  });
}

}  // namespace demi
