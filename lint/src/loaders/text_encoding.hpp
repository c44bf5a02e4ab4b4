// Config text in the encodings editors save with a byte-order mark: UTF-8 with a BOM, UTF-16 and UTF-32 in either
// byte order (Windows editors, PowerShell's `>`). Without decoding, a UTF-16 YAML or shell script looks like
// binary with NUL bytes: it was skipped with exit 0, so a real finding in it passed green.
#pragma once

#include <string>

namespace hcp::lint {

// Decodes `text` in place to UTF-8 when it starts with a byte-order mark (which is dropped); text without one is
// left as it is. Throws Error{parse} naming `name` and the byte offset of a malformed sequence (an odd length, an
// unpaired surrogate, a code point past U+10FFFF).
void decode_byte_order_mark(const std::string& name, std::string& text);

}  // namespace hcp::lint
