#ifndef DEMI_UTIL_TEMPORARY_FILES_HPP_
#define DEMI_UTIL_TEMPORARY_FILES_HPP_

#include <string>
#include <vector>

namespace demi {

// Files and databases are written under a temporary name, PATH.tmp.PID, and
// renamed to PATH only when complete. A process killed meanwhile (SIGKILL, a
// crash, a lost node) leaves its temporary behind; the next run that writes
// to the same place removes it, knowing its writer is dead by the PID.

/// PATH.tmp.<this process's pid>.
std::string TemporaryPathFor(const std::string& path);

/// Whether a process with this pid exists (kill(pid, 0) does not report
/// ESRCH). A pid in use by an unrelated process counts as alive: its
/// temporary is kept, never wrongly removed.
bool ProcessIsAlive(long pid);

/// Removes every file or directory named PREFIX*.tmp.PID (in PREFIX's
/// directory) whose PID is not alive, logging one INFO line for each, and
/// returns their paths. Temporaries of live processes, ours included, stay.
std::vector<std::string> RemoveStaleTemporaries(const std::string& prefix);

}  // namespace demi

#endif  // DEMI_UTIL_TEMPORARY_FILES_HPP_
