// Caffe's `caffe` command: every command in one binary, as a sub-command that
// takes the flags of the separate tool of the same name, so Caffe's scripts
// run unchanged:
//   build/tools/caffe train --solver=models/lenet_fashion/solver.prototxt
//   build/tools/caffe test -model net.prototxt -weights net.caffemodel -iterations 100
//   build/tools/caffe classify --model=deploy.prototxt --weights=net.caffemodel image.png
//   build/tools/caffe help [COMMAND]
#include <algorithm>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "demi/tools/command.hpp"
#include "demi/util/cli.hpp"

namespace {

std::string Usage() {
  std::ostringstream out;
  out << "caffe: command line brew (Demitasse)\n"
      << "usage: caffe <command> <args>\n\ncommands:\n";
  for (const demi::Command& command : demi::Commands()) {
    out << "  " << std::left << std::setw(18) << command.name << command.summary << "\n";
  }
  out << "\n'caffe <command> --help' (or 'caffe help <command>') lists a command's flags.\n";
  return out.str();
}

bool IsHelp(const std::string& arg) {
  return arg == "help" || arg == "--help" || arg == "-help" || arg == "-h";
}

/// Where the sub-command stands: BVLC's gflags took flags anywhere on the
/// line, so `caffe --solver=s.prototxt train` and `caffe -gpu 0 train` ran
/// too. The first argument that names a command (or help), else 1.
int CommandPosition(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (IsHelp(argv[i]) || demi::FindCommand(argv[i]) != nullptr) return i;
  }
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  demi::BeginTool(argv);  // may run the process again, sub-command included
  if (argc < 2) {
    std::cerr << Usage();
    return 1;
  }
  if (argc == 2 && (std::string(argv[1]) == "--version" || std::string(argv[1]) == "-version")) {
    // BVLC's answer, whose formats and commands these are.
    std::cout << "caffe version 1.0.0 (Demitasse)\n";
    return 0;
  }
  // Flags before the sub-command go after it, for the command to parse.
  std::vector<char*> args(argv, argv + argc);
  const int position = CommandPosition(argc, argv);
  std::rotate(args.begin() + 1, args.begin() + position, args.begin() + position + 1);
  argv = args.data();
  const std::string name = argv[1];
  if (IsHelp(name)) {
    if (argc == 2) {
      std::cout << Usage();
      return 0;
    }
    // The command asked about: the first argument that names one.
    int asked = 2;
    while (asked + 1 < argc && demi::FindCommand(argv[asked]) == nullptr) ++asked;
    const demi::Command* command = demi::FindCommand(argv[asked]);
    if (command == nullptr) {
      std::cerr << "caffe: unknown command '" << argv[2] << "'\n" << Usage();
      return 1;
    }
    std::cout << demi::CommandHelp(*command, "caffe " + command->name);
    return 0;
  }
  const demi::Command* command = demi::FindCommand(name);
  if (command == nullptr) {
    std::cerr << "caffe: unknown command '" << name << "'\n" << Usage();
    return 1;
  }
  // The command sees `caffe FLAGS ARGS`: its sub-command taken off.
  std::vector<char*> rest = {argv[0]};
  rest.insert(rest.end(), argv + 2, argv + argc);
  rest.push_back(nullptr);
  return demi::RunCommand(*command, "caffe " + name, argc - 1, rest.data());
}
