// Which files a script's `source` / `.` may make hcp-lint read: only files inside the folder of the script the user
// named (symbolic links resolved first), as docs/lint.md promises. Anything else - an absolute path, `../`, a link
// that leads out - is never opened and stays unknown with the reason, so a pull request's script cannot make a CI
// job read the runner's files (/etc/shadow, credentials) into a public report.
#pragma once

#include <functional>
#include <string>

namespace hcp::lint {

// For the script `script_name` (a path as given; "<stdin>" and other non-files allow nothing): returns the
// ShellOptions::may_source check - empty when `path` may be read, otherwise why not.
std::function<std::string(const std::string& path)> source_sandbox(const std::string& script_name);

}  // namespace hcp::lint
