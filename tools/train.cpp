// build/tools/train: the same command as `caffe train` (src/demi/tools/train_command.cpp).
#include "demi/tools/command.hpp"

int main(int argc, char** argv) { return demi::RunCommandTool("train", argc, argv); }
