#include "suppressions.hpp"

#include <cctype>
#include <string_view>

#include "hcp/lint/rule.hpp"

namespace hcp::lint {
namespace {

constexpr std::string_view kMarker = "hcp-lint:";

struct Code {
  std::string code;
  size_t column;  // 0-based, in the line
};

std::vector<Code> codes_after(std::string_view line, size_t pos) {
  std::vector<Code> codes;
  std::string current;
  size_t start = pos;
  bool after_comma = false;  // "HCP010, HCP011": a space after a comma goes on to the next code
  for (; pos <= line.size(); ++pos) {
    const char c = pos < line.size() ? line[pos] : ' ';
    if (std::isalnum(static_cast<unsigned char>(c))) {
      if (current.empty()) start = pos;
      current += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      after_comma = false;
    } else if (c == ',' || c == ' ') {
      if (!current.empty()) codes.push_back({current, start});
      current.clear();
      if (c == ',') after_comma = true;
      if (c == ' ' && !codes.empty() && !after_comma) break;
    } else {
      break;
    }
  }
  if (!current.empty()) codes.push_back({current, start});
  return codes;
}

bool is_shell(const SourceText& s) {
  const std::string& n = s.name;
  for (const char* ext : {".sh", ".bash", ".args", ".slurm", ".sbatch"}) {
    const std::string_view e(ext);
    if (n.size() >= e.size() && n.compare(n.size() - e.size(), e.size(), e) == 0) return true;
  }
  return s.text.rfind("#!", 0) == 0 && s.text.substr(0, s.text.find('\n')).find("sh") != std::string::npos;
}

// The lines of `text`, and for each whether the next line continues its command: a trailing backslash, and in a
// shell script a quoted string still open at the end of the line (here-documents are skipped: their text is no
// shell syntax). A lexer of quotes and comments only, enough to tell where a command ends.
std::vector<bool> continues_next(const std::vector<std::string_view>& lines, bool shell) {
  std::vector<bool> cont(lines.size(), false);
  char quote = 0;                // ' or " while a string is open
  std::string heredoc_end;  // the word that ends a here-document, skipped from the next line on
  bool strip_tabs = false;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string_view line = lines[i];
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!heredoc_end.empty()) {
      std::string_view t = line;
      while (strip_tabs && !t.empty() && t.front() == '\t') t.remove_prefix(1);
      if (t == heredoc_end) heredoc_end.clear();
      continue;
    }
    if (!shell) {
      cont[i] = !line.empty() && line.back() == '\\';
      continue;
    }
    bool escaped = false;
    for (size_t j = 0; j < line.size(); ++j) {
      const char c = line[j];
      if (escaped) {
        escaped = false;
      } else if (quote == '\'') {
        if (c == '\'') quote = 0;
      } else if (c == '\\') {
        escaped = true;
      } else if (quote == '"') {
        if (c == '"') quote = 0;
      } else if (c == '\'' || c == '"') {
        quote = c;
      } else if (c == '#' && (j == 0 || std::isspace(static_cast<unsigned char>(line[j - 1])) || line[j - 1] == ';')) {
        break;  // a comment to the end of the line
      } else if (c == '<' && j + 1 < line.size() && line[j + 1] == '<' && (j + 2 >= line.size() || line[j + 2] != '<')) {
        size_t k = j + 2;
        strip_tabs = k < line.size() && line[k] == '-';
        if (strip_tabs) ++k;
        while (k < line.size() && line[k] == ' ') ++k;
        std::string word;
        for (; k < line.size() && !std::isspace(static_cast<unsigned char>(line[k])) && line[k] != ';' &&
               line[k] != '|' && line[k] != '&' && line[k] != ')';
             ++k)
          if (line[k] != '\'' && line[k] != '"' && line[k] != '\\') word += line[k];
        if (!word.empty()) heredoc_end = word;
        j = k - 1;
      }
    }
    cont[i] = escaped || quote != 0;  // a backslash before the newline, or a string that goes on
  }
  return cont;
}

}  // namespace

Suppressions::Suppressions(const SourceText& source) {
  const std::string_view text = source.text;
  // Most files have no directive: nothing more to do than this search.
  if (text.find(kMarker) == std::string_view::npos) return;
  std::vector<std::string_view> lines;
  for (size_t start = 0; start <= text.size();) {
    const size_t end = text.find('\n', start);
    lines.push_back(text.substr(start, (end == std::string_view::npos ? text.size() : end) - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  const std::vector<bool> cont = continues_next(lines, is_shell(source));
  command_start_.assign(lines.size() + 2, 0);
  for (size_t i = 0; i < lines.size(); ++i)
    command_start_[i + 1] = i > 0 && cont[i - 1] ? command_start_[i] : static_cast<int>(i + 1);

  auto blank_or_comment = [&](std::string_view l) {
    const size_t p = l.find_first_not_of(" \t\r");
    return p == std::string_view::npos || l[p] == '#';
  };
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string_view line = lines[i];
    const size_t at = line.find(kMarker);
    if (at == std::string_view::npos) continue;
    size_t p = at + kMarker.size();
    while (p < line.size() && line[p] == ' ') ++p;
    const bool whole_file = line.substr(p).rfind("disable-file=", 0) == 0;
    if (!whole_file && line.substr(p).rfind("disable=", 0) != 0) continue;
    const std::vector<Code> codes = codes_after(line, p + (whole_file ? 13 : 8));
    for (const Code& c : codes) {
      if (c.code != "ALL" && !find_rule(c.code))
        unknown_.push_back({Location{source.name, static_cast<int>(i + 1), static_cast<int>(c.column + 1)}, c.code});
    }
    std::set<std::string>* into = &file_;
    if (!whole_file) {
      // Alone on a comment line (outside a command that goes on), it is about the next command.
      size_t target = i;
      const bool own_line = command_start_[i + 1] == static_cast<int>(i + 1) && blank_or_comment(line);
      if (own_line) {
        target = i + 1;
        while (target < lines.size() && blank_or_comment(lines[target])) ++target;
        if (target == lines.size()) continue;
      }
      into = &by_command_[command_start_[target + 1]];
    }
    for (const Code& c : codes) into->insert(c.code);
  }
}

int Suppressions::command_of(int line) const {
  if (line < 1 || static_cast<size_t>(line) >= command_start_.size()) return line;
  return command_start_[static_cast<size_t>(line)];
}

bool Suppressions::suppressed(const std::string& code, int line) const {
  if (file_.count(code) || file_.count("ALL")) return true;
  const auto it = by_command_.find(command_of(line));
  return it != by_command_.end() && (it->second.count(code) || it->second.count("ALL"));
}

}  // namespace hcp::lint
