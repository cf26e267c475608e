#ifndef DEMI_TOOLS_COMMANDS_HPP_
#define DEMI_TOOLS_COMMANDS_HPP_

#include "demi/tools/command.hpp"

namespace demi {

// Each command, defined in src/demi/tools/<name>_command.cpp.
Command TrainCommand();
Command TestCommand();
Command TimeCommand();
Command DeviceQueryCommand();
Command MemoryCommand();
Command ClassifyCommand();
Command ExtractFeaturesCommand();

}  // namespace demi

#endif  // DEMI_TOOLS_COMMANDS_HPP_
