#ifndef DEMI_UTIL_SIGNAL_HPP_
#define DEMI_UTIL_SIGNAL_HPP_

#include <functional>
#include <string>

namespace demi {

/// What a running solver is asked to do between iterations.
enum class SolverAction { kNone, kStop, kSnapshot };

/// Parses "stop", "snapshot" or "none" (the values of Caffe's --sigint_effect
/// and --sighup_effect); anything else throws an Error.
SolverAction ParseSolverAction(const std::string& name);

/// @brief Installs SIGINT and SIGHUP handlers that only set a flag; the
/// solver polls GetActionFunction() once per iteration (and per test batch)
/// and acts there, outside the handler. At most one handler is installed at a
/// time; the destructor restores the previous handlers.
class SignalHandler {
 public:
  SignalHandler(SolverAction sigint_effect, SolverAction sighup_effect);
  ~SignalHandler();
  SignalHandler(const SignalHandler&) = delete;
  SignalHandler& operator=(const SignalHandler&) = delete;

  /// Returns the effect of a signal received since the last call (SIGINT
  /// first), or kNone; clears what it returns.
  SolverAction CheckForSignals() const;
  /// A function for Solver::SetActionFunction that calls CheckForSignals.
  std::function<SolverAction()> GetActionFunction() const;

 private:
  SolverAction sigint_effect_;
  SolverAction sighup_effect_;
};

}  // namespace demi

#endif  // DEMI_UTIL_SIGNAL_HPP_
