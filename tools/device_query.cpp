// build/tools/device_query: the same command as `caffe device_query`
// (src/demi/tools/device_query_command.cpp).
#include "demi/tools/command.hpp"

int main(int argc, char** argv) { return demi::RunCommandTool("device_query", argc, argv); }
