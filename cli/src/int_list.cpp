#include "int_list.hpp"

#include <charconv>

#include "hcp/error.hpp"

namespace hcp::cli {
namespace {

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

// Out of range is said with the bound that was passed: "does not fit in 64 bits" was also said of values that fit
// 64 bits unsigned, such as 2^64 - 1.
std::string int_error(const std::string& item, std::errc ec) {
  if (ec != std::errc::result_out_of_range) return "'" + item + "' is not an integer";
  const bool negative = item.find('-') != std::string::npos;
  return "'" + item + "' is " + (negative ? "below the smallest integer accepted, -9223372036854775808"
                                          : "above the largest integer accepted, 9223372036854775807 (2^63 - 1)");
}

bool parse_exact(const std::string& item, int64_t& v, std::errc& ec) {
  const auto r = std::from_chars(item.data(), item.data() + item.size(), v);
  ec = r.ec;
  return !item.empty() && r.ec == std::errc() && r.ptr == item.data() + item.size();
}

}  // namespace

int64_t parse_int(const std::string& text, const char* option) {
  int64_t v = 0;
  std::errc ec{};
  if (!parse_exact(trim(text), v, ec)) throw Error(Errc::invalid_config, std::string(option) + ": " + int_error(text, ec));
  return v;
}

std::vector<int64_t> parse_int_list(const std::string& text, const char* option) {
  std::string body = trim(text);
  if (body.size() >= 2 && body.front() == '[' && body.back() == ']') body = body.substr(1, body.size() - 2);
  // "2,4" and "2, 4" split on commas; "2 4" (Megatron-LM's nargs='+' style) on blanks.
  const char sep = body.find(',') != std::string::npos ? ',' : ' ';
  std::vector<int64_t> values;
  size_t pos = 0;
  for (int entry = 1;; ++entry) {
    size_t end = body.find(sep, pos);
    if (end == std::string::npos) end = body.size();
    const std::string item = trim(body.substr(pos, end - pos));
    if (!(sep == ' ' && item.empty() && end < body.size())) {
      int64_t v = 0;
      std::errc ec{};
      if (!parse_exact(item, v, ec)) {
        throw Error(Errc::invalid_config, std::string(option) + ": '" + text + "' is not a list of integers (entry " +
                                              std::to_string(entry) + ": " + int_error(item, ec) + ")");
      }
      values.push_back(v);
    }
    if (end >= body.size()) break;
    pos = end + 1;
  }
  return values;
}

}  // namespace hcp::cli
