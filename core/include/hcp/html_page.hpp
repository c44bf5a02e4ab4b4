// The frame of hcp's self-contained HTML reports (`hcp plan --html`, `hcp-logscan --format html`): one file with its
// CSS inline, no scripts, no fonts or images from anywhere, so it opens the same offline, from CI artifacts and in
// mail. Text from inputs (config values, log lines) always goes through html_escape.
#pragma once

#include <string>
#include <string_view>

namespace hcp {

std::string html_escape(std::string_view text);

// <!DOCTYPE html> ... <body> with the shared style and `title` (escaped) as <title> and <h1>.
std::string html_begin(std::string_view title);
std::string html_end();  // </body></html>

}  // namespace hcp
