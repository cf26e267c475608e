// build/tools/classify: the same command as `caffe classify` (src/demi/tools/classify_command.cpp).
#include "demi/tools/command.hpp"

int main(int argc, char** argv) { return demi::RunCommandTool("classify", argc, argv); }
