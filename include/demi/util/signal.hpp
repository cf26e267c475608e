#ifndef DEMI_UTIL_SIGNAL_HPP_
#define DEMI_UTIL_SIGNAL_HPP_

#include <functional>
#include <string>

namespace demi {

/// What a running solver is asked to do between iterations. kStop snapshots
/// only if snapshot_after_train; kSnapshotStop always snapshots, then stops.
enum class SolverAction { kNone, kStop, kSnapshot, kSnapshotStop };

/// Parses "stop", "snapshot" or "none" (the values of Caffe's --sigint_effect
/// and --sighup_effect) and "snapshot_stop"; anything else throws an Error.
SolverAction ParseSolverAction(const std::string& name);

inline bool ActionSnapshots(SolverAction action) {
  return action == SolverAction::kSnapshot || action == SolverAction::kSnapshotStop;
}
inline bool ActionStops(SolverAction action) {
  return action == SolverAction::kStop || action == SolverAction::kSnapshotStop;
}

/// @brief Installs SIGINT, SIGHUP and SIGTERM handlers that only set a flag; the
/// solver polls GetActionFunction() once per iteration (and per test batch)
/// and acts there, outside the handler. At most one handler is installed at a
/// time; the destructor restores the previous handlers.
class SignalHandler {
 public:
  SignalHandler(SolverAction sigint_effect, SolverAction sighup_effect,
                SolverAction sigterm_effect);
  ~SignalHandler();
  SignalHandler(const SignalHandler&) = delete;
  SignalHandler& operator=(const SignalHandler&) = delete;

  /// Returns the effect of a signal received since the last call (SIGTERM
  /// first, then SIGINT), or kNone; clears what it returns.
  SolverAction CheckForSignals() const;
  /// A function for Solver::SetActionFunction that calls CheckForSignals.
  std::function<SolverAction()> GetActionFunction() const;
  /// "SIGTERM", "SIGINT" or "SIGHUP" when a signal whose effect stops was
  /// received and not yet checked, else ""; clears nothing. Code that blocks
  /// before training (ranks meeting, replica set-up) polls it to give up.
  std::string PendingStop() const;
  /// A function that calls PendingStop.
  std::function<std::string()> GetStopFunction() const;

 private:
  SolverAction sigint_effect_;
  SolverAction sighup_effect_;
  SolverAction sigterm_effect_;
};

}  // namespace demi

#endif  // DEMI_UTIL_SIGNAL_HPP_
