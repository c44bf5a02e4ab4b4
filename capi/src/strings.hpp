#pragma once

#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

namespace hcp::capi {

// A malloc'ed NUL-terminated copy, released by the caller with hcp_free.
inline char* dup_for_caller(const std::string& text) {
  char* out = static_cast<char*>(std::malloc(text.size() + 1));
  if (out == nullptr) throw std::bad_alloc();
  std::memcpy(out, text.c_str(), text.size() + 1);
  return out;
}

}  // namespace hcp::capi
