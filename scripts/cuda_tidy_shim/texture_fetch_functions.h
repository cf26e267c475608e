// Stand-in for a header CUDA 12 removed but clang's CUDA runtime wrapper
// (through LLVM 19) still includes. Demitasse uses no texture references,
// so an empty header lets clang-tidy parse our .cu files; only
// scripts/tidy_cuda.sh puts this directory on the include path.
#pragma once
