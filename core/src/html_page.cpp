#include "hcp/html_page.hpp"

#include "hcp/printable.hpp"

namespace hcp {

std::string html_escape(std::string_view raw) {
  const std::string text = printable(raw);  // control characters from inputs shown as escapes, not passed on
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string html_begin(std::string_view title) {
  std::string s =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>";
  s += html_escape(title);
  s +=
      "</title>\n<style>\n"
      "body{font-family:sans-serif;margin:24px;color:#212529;background:#fff}\n"
      "h1{font-size:22px}h2{font-size:17px;margin-top:28px}\n"
      "table{border-collapse:collapse;font-size:13px}\n"
      "th,td{border:1px solid #dee2e6;padding:4px 8px;text-align:left;vertical-align:top}\n"
      "th{background:#f1f3f5}td.num{text-align:right;font-variant-numeric:tabular-nums}\n"
      ".verdict{font-size:15px;padding:10px 14px;border-left:5px solid #1971c2;background:#e7f5ff}\n"
      ".bad{border-left-color:#c92a2a;background:#fff5f5}.good{border-left-color:#2b8a3e;background:#ebfbee}\n"
      ".warn{border-left-color:#e8590c;background:#fff4e6}\n"
      ".muted{color:#868e96}.chart{margin:8px 0 18px}\n"
      "code{background:#f1f3f5;padding:1px 4px}\n"
      "</style>\n</head>\n<body>\n<h1>";
  s += html_escape(title);
  s += "</h1>\n";
  return s;
}

std::string html_end() { return "</body>\n</html>\n"; }

}  // namespace hcp
