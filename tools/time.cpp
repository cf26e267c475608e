// build/tools/time: the same command as `caffe time` (src/demi/tools/time_command.cpp).
#include "demi/tools/command.hpp"

int main(int argc, char** argv) { return demi::RunCommandTool("time", argc, argv); }
