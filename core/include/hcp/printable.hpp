// Text from inputs (config values, file names, log lines) made safe to show on a terminal or in a report: control
// characters would otherwise reach the reader's terminal (an OSC sequence retitles it, ESC [2J clears it, U+009B is
// an 8-bit CSI) or forge output lines. Every text and GitHub renderer of hcp-lint and hcp-logscan, and the HTML
// pages, pass what they print through here; JSON and SARIF have their own escaping.
#pragma once

#include <string>
#include <string_view>

namespace hcp {

// C0 controls but tab and newline, DEL, the C1 controls (U+0080..U+009F) and bytes that are not UTF-8 become
// visible escapes: \x1b, \x7f, \u009b, \xff. Valid UTF-8 text, tabs and newlines are kept as they are.
std::string printable(std::string_view text);

// The same for one line: newlines are escaped too (\x0a), so a value cannot start a line of its own.
std::string printable_line(std::string_view text);

// For text under which a caret points at a byte column: tabs and every byte printable_line() would escape become
// one space each.
std::string printable_aligned(std::string_view text);

}  // namespace hcp
