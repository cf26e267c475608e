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

std::string CommandHelp(const Command& command, const std::string& invocation) {
  return StrCat(invocation, ": ", command.summary, "\nUsage: ", invocation, " ", command.usage,
                "\n", FlagsHelp(command.flags));
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
    RefuseFlagsNotTaken(command.flags, invocation);
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
