// build/tools/memory: the same command as `caffe memory` (src/demi/tools/memory_command.cpp).
#include "demi/tools/command.hpp"

int main(int argc, char** argv) { return demi::RunCommandTool("memory", argc, argv); }
