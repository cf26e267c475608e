#ifndef DEMI_UTIL_CLI_HPP_
#define DEMI_UTIL_CLI_HPP_

#include <exception>
#include <functional>
#include <string>
#include <vector>

#include "demi/common.hpp"

namespace demi {

/// Splits "a,b,,c" into {"a", "b", "c"} (empty items dropped).
std::vector<std::string> SplitList(const std::string& text, char separator = ',');

/// Reads the number `text` starts with, as std::stod (a double) or std::stol
/// (a long) reads it, into `*value`; returns how many characters it took, 0
/// when `text` does not start with a number or the number is out of range.
size_t ReadNumber(const std::string& text, double* value);
size_t ReadNumber(const std::string& text, long* value);

/// Parses a --gpu value ("", "0,1", "all") into device ids. Any request on a
/// machine without a CUDA device throws an Error saying so.
std::vector<int> ParseGpuFlag(const std::string& gpu);

/// The context for a tool that runs one net: the CPU for "", else the one
/// device --gpu names (made current). More than one device throws an Error.
Context ContextForGpuFlag(const std::string& gpu);

/// Applies a tool's --threads flag (0: DefaultThreads()) to OpenMP and
/// OpenBLAS, and logs "Using N threads" once.
void ApplyThreadsFlag(int threads);

/// The one line a tool logs for an exception that ended it: a demi::Error's
/// message; "out of memory: ..." with a `memory --fit` hint for
/// std::bad_alloc; an OpenCV error's message and function; any other
/// std::exception's what().
std::string DescribeToolError(const std::exception_ptr& error);

/// The steps every tool takes before parsing its flags: the threading
/// environment (how idle OpenMP threads wait, OpenBLAS's kernels; setting it
/// runs the process again, with `argv` unchanged) and
/// logging to stderr. `caffe` calls it before taking its sub-command off argv.
void BeginTool(char** argv);
/// gflags::ParseCommandLineNonHelpFlags(argc, argv, true), except that a
/// positional argument that is a negative number ("-3") stays an argument:
/// gflags would end the process calling it the unknown flag "3", where the
/// tool can say what is wrong with the number. The value of a flag given as
/// "--flag -3" stays the flag's.
void ParseFlagsKeepingNegativeNumbers(int* argc, char*** argv);
/// The steps after parsing flags: glog, its failure handler, and SIGXFSZ
/// ignored (a write past `ulimit -f` then fails with EFBIG, named with the file).
void InitToolLogging(const char* program);
/// Runs `body`; an exception it throws becomes one ERROR line (see
/// DescribeToolError) and exit status 1.
int RunReportingErrors(const std::function<int()>& body);

/// Runs a tool's body: initializes glog and gflags, catches every exception
/// (logged as one line, see DescribeToolError; no abort, no stack trace) and
/// returns the process exit code: 1 for an exception.
int RunTool(int argc, char** argv, const std::string& usage, const std::function<int()>& body);
/// The same, for tools that take positional arguments after their flags
/// (Caffe's convert_* and compute_image_mean): `body` receives them. The
/// tool takes the flags its own file (tools/NAME.cpp) defines and, of the
/// commands' (src/demi/tools/), `shared_flags`; --help lists those, and
/// another command's flag is refused, as the commands refuse it.
int RunToolWithArgs(int argc, char** argv, const std::string& usage,
                    const std::function<int(const std::vector<std::string>&)>& body,
                    const std::vector<std::string>& shared_flags = {});

/// Throws an Error for a flag given that the commands define (one binary
/// links them all) but `takes` lacks: it would be ignored otherwise.
void RefuseFlagsNotTaken(const std::vector<std::string>& takes, const std::string& invocation);
/// "--name  description / type, default" lines for --help.
std::string FlagsHelp(const std::vector<std::string>& names);
/// Whether --help was given.
bool HelpRequested();

}  // namespace demi

#endif  // DEMI_UTIL_CLI_HPP_
