// build/tools/extract_features: the same command as `caffe extract_features`
// (src/demi/tools/extract_features_command.cpp).
#include "demi/tools/command.hpp"

int main(int argc, char** argv) { return demi::RunCommandTool("extract_features", argc, argv); }
