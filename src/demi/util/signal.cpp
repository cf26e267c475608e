#include "demi/util/signal.hpp"

#include <signal.h>

#include <atomic>

#include "demi/common.hpp"

namespace demi {

namespace {

volatile sig_atomic_t g_got_sigint = 0;
volatile sig_atomic_t g_got_sighup = 0;
volatile sig_atomic_t g_got_sigterm = 0;
std::atomic<bool> g_installed{false};
struct sigaction g_previous_sigint;
struct sigaction g_previous_sighup;
struct sigaction g_previous_sigterm;

void HandleSignal(int signal) {
  if (signal == SIGINT) g_got_sigint = 1;
  if (signal == SIGHUP) g_got_sighup = 1;
  if (signal == SIGTERM) g_got_sigterm = 1;
}

}  // namespace

SolverAction ParseSolverAction(const std::string& name) {
  if (name == "stop") return SolverAction::kStop;
  if (name == "snapshot") return SolverAction::kSnapshot;
  if (name == "snapshot_stop") return SolverAction::kSnapshotStop;
  if (name == "none") return SolverAction::kNone;
  ThrowError(
      StrCat("unknown signal effect '", name, "'; use stop, snapshot, snapshot_stop or none"));
}

SignalHandler::SignalHandler(SolverAction sigint_effect, SolverAction sighup_effect,
                             SolverAction sigterm_effect)
    : sigint_effect_(sigint_effect),
      sighup_effect_(sighup_effect),
      sigterm_effect_(sigterm_effect) {
  CHECK(!g_installed.exchange(true)) << "only one SignalHandler may be installed at a time";
  g_got_sigint = 0;
  g_got_sighup = 0;
  g_got_sigterm = 0;
  struct sigaction action = {};
  action.sa_handler = &HandleSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // interrupted reads and writes resume
  CHECK_EQ(sigaction(SIGINT, &action, &g_previous_sigint), 0) << "cannot install SIGINT handler";
  CHECK_EQ(sigaction(SIGHUP, &action, &g_previous_sighup), 0) << "cannot install SIGHUP handler";
  // Replaces glog's failure handler, which treats SIGTERM as a crash.
  CHECK_EQ(sigaction(SIGTERM, &action, &g_previous_sigterm), 0) << "cannot install SIGTERM handler";
}

SignalHandler::~SignalHandler() {
  sigaction(SIGINT, &g_previous_sigint, nullptr);
  sigaction(SIGHUP, &g_previous_sighup, nullptr);
  sigaction(SIGTERM, &g_previous_sigterm, nullptr);
  g_installed = false;
}

SolverAction SignalHandler::CheckForSignals() const {
  if (g_got_sigterm) {
    g_got_sigterm = 0;
    return sigterm_effect_;
  }
  if (g_got_sigint) {
    g_got_sigint = 0;
    return sigint_effect_;
  }
  if (g_got_sighup) {
    g_got_sighup = 0;
    return sighup_effect_;
  }
  return SolverAction::kNone;
}

std::function<SolverAction()> SignalHandler::GetActionFunction() const {
  return [this] { return CheckForSignals(); };
}

std::string SignalHandler::PendingStop() const {
  if (g_got_sigterm && ActionStops(sigterm_effect_)) return "SIGTERM";
  if (g_got_sigint && ActionStops(sigint_effect_)) return "SIGINT";
  if (g_got_sighup && ActionStops(sighup_effect_)) return "SIGHUP";
  return "";
}

std::function<std::string()> SignalHandler::GetStopFunction() const {
  return [this] { return PendingStop(); };
}

}  // namespace demi
