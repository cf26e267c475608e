#include "demi/tools/command.hpp"

#include <gflags/gflags.h>
#include <glog/logging.h>

#include <algorithm>
#include <iostream>
#include <sstream>
#include <utility>

#include "demi/tools/commands.hpp"
#include "demi/util/cli.hpp"

namespace demi {

const std::vector<Command>& Commands() {
  static const std::vector<Command> commands = {
      TrainCommand(),  TestCommand(),     TimeCommand(),           DeviceQueryCommand(),
      MemoryCommand(), ClassifyCommand(), ExtractFeaturesCommand()};
  return commands;
}

Command MakeCommand(std::string name, std::string summary, std::string usage,
                    std::vector<std::string> flags, CommandBody run) {
  Command command;
  command.name = std::move(name);
  command.summary = std::move(summary);
  command.usage = std::move(usage);
  command.flags = std::move(flags);
  command.run = std::move(run);
  return command;
}

std::vector<std::string> WithNetFlags(std::vector<std::string> own) {
  for (const char* flag :
       {"gpu", "deterministic", "engine", "precision", "threads", "level", "stage"}) {
    own.emplace_back(flag);
  }
  return own;
}

CommandBody WithoutArgs(int (*body)()) {
  return [body](const std::vector<std::string>&) { return body(); };
}

const Command* FindCommand(const std::string& name) {
  for (const Command& command : Commands()) {
    if (command.name == name) return &command;
  }
  return nullptr;
}

namespace {

/// The flags the commands define (in src/demi/tools/), as opposed to glog's
/// and gflags' own, which every command takes.
bool IsCommandFlag(const gflags::CommandLineFlagInfo& info) {
  return info.filename.find("demi/tools/") != std::string::npos;
}

bool Takes(const Command& command, const std::string& flag) {
  return std::find(command.flags.begin(), command.flags.end(), flag) != command.flags.end();
}

/// One binary defines every command's flags; a flag of another command
/// would otherwise be silently ignored.
void CheckFlagsSet(const Command& command, const std::string& invocation) {
  std::vector<gflags::CommandLineFlagInfo> flags;
  gflags::GetAllFlags(&flags);
  for (const gflags::CommandLineFlagInfo& info : flags) {
    DEMI_CHECK(!IsCommandFlag(info) || info.is_default || Takes(command, info.name), "--",
               info.name, " is not a flag of ", invocation, " (see ", invocation, " --help)");
  }
}

bool HelpRequested() {
  std::string value;
  return gflags::GetCommandLineOption("help", &value) && value == "true";
}

}  // namespace

std::string CommandHelp(const Command& command, const std::string& invocation) {
  std::ostringstream out;
  out << invocation << ": " << command.summary << "\n"
      << "Usage: " << invocation << " " << command.usage << "\n";
  if (!command.flags.empty()) out << "\nFlags (--name=value or -name value):\n";
  for (const std::string& name : command.flags) {
    gflags::CommandLineFlagInfo info;
    CHECK(gflags::GetCommandLineFlagInfo(name.c_str(), &info))
        << command.name << " lists --" << name << ", which no file defines";
    const std::string value =
        info.type == "string" ? "\"" + info.default_value + "\"" : info.default_value;
    out << "  --" << name << "  " << info.description << "\n"
        << "      type: " << info.type << "  default: " << value << "\n";
  }
  return out.str();
}

int RunCommand(const Command& command, const std::string& invocation, int argc, char** argv) {
  if (command.quiet) FLAGS_minloglevel = google::WARNING;
  gflags::SetUsageMessage(CommandHelp(command, invocation));
  ParseFlagsKeepingNegativeNumbers(&argc, &argv);
  if (HelpRequested()) {
    std::cout << CommandHelp(command, invocation);
    return 0;
  }
  gflags::HandleCommandLineHelpFlags();  // --helpfull, --version, ...: they exit
  InitToolLogging(argv[0]);
  const std::vector<std::string> args(argv + 1, argv + argc);
  return RunReportingErrors([&] {
    CheckFlagsSet(command, invocation);
    DEMI_CHECK(command.takes_args || args.empty(), "unexpected argument '",
               args.empty() ? "" : args[0], "'; ", invocation, " takes flags only (see ",
               invocation, " --help)");
    return command.run(args);
  });
}

int RunCommandTool(const std::string& name, int argc, char** argv) {
  BeginTool(argv);
  const Command* command = FindCommand(name);
  CHECK(command != nullptr) << "no command is named " << name;
  return RunCommand(*command, name, argc, argv);
}

}  // namespace demi
