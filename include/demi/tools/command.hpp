#ifndef DEMI_TOOLS_COMMAND_HPP_
#define DEMI_TOOLS_COMMAND_HPP_

#include <functional>
#include <string>
#include <vector>

namespace demi {

/// @brief One command-line command: a sub-command of `caffe` (`caffe train`)
/// and the separate tool of the same name (`build/tools/train`), which run
/// the same body with the same flags.
struct Command {
  std::string name;     ///< "train"
  std::string summary;  ///< one line, for caffe's list of commands
  std::string usage;    ///< what follows the command's name on its usage line
  /// The flags it reads: its --help lists them, and setting another flag of
  /// another command is an error (as gflags' unknown flag was when each tool
  /// had its own).
  std::vector<std::string> flags;
  /// Its output is a report on stdout: INFO logging is off unless
  /// --minloglevel turns it back on.
  bool quiet = false;
  /// It takes positional arguments (else one is an error).
  bool takes_args = false;
  /// The body; receives the positional arguments (flags removed).
  std::function<int(const std::vector<std::string>& args)> run;
};

using CommandBody = std::function<int(const std::vector<std::string>& args)>;

/// A command from its parts (quiet and takes_args false: set them on the
/// result where they differ).
Command MakeCommand(std::string name, std::string summary, std::string usage,
                    std::vector<std::string> flags, CommandBody run);
/// `own` flags, then those of every command that builds a net on a device:
/// gpu, deterministic, engine, precision, threads, level and stage.
std::vector<std::string> WithNetFlags(std::vector<std::string> own);
/// The body of a command that takes no positional arguments.
CommandBody WithoutArgs(int (*body)());

/// Every command, in caffe's order: train, test, time, device_query, then
/// Demitasse's memory, classify and extract_features.
const std::vector<Command>& Commands();
/// The command named `name`, or nullptr.
const Command* FindCommand(const std::string& name);

/// The --help text of `command` run as `invocation` ("caffe train" or
/// "train"): summary, usage line, and each of its flags with its default.
std::string CommandHelp(const Command& command, const std::string& invocation);

/// Parses the flags of `argv` (argv[0] the program, the sub-command already
/// removed), answers --help, refuses flags of other commands and runs
/// `command` with RunReportingErrors; returns the exit status. BeginTool
/// must have run first.
int RunCommand(const Command& command, const std::string& invocation, int argc, char** argv);

/// The main of build/tools/<name>: BeginTool, then RunCommand.
int RunCommandTool(const std::string& name, int argc, char** argv);

}  // namespace demi

#endif  // DEMI_TOOLS_COMMAND_HPP_
