// build/tools/test: the same command as `caffe test` (src/demi/tools/test_command.cpp).
#include "demi/tools/command.hpp"

int main(int argc, char** argv) { return demi::RunCommandTool("test", argc, argv); }
