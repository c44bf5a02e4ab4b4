#include "shell_words.hpp"

#include <cctype>

namespace hcp::lint {
namespace {

struct Variable {
  std::string value;
  Location loc;
};

bool is_name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// "NAME=..." or "NAME+=..." -> length of the name, else 0.
size_t assignment_name_length(const std::string& w, bool* append) {
  if (w.empty() || !is_name_start(w[0])) return 0;
  size_t i = 1;
  while (i < w.size() && is_name_char(w[i])) ++i;
  *append = i + 1 < w.size() && w[i] == '+' && w[i + 1] == '=';
  if (*append) return i;
  return i < w.size() && w[i] == '=' ? i : 0;
}

class Lexer {
 public:
  explicit Lexer(const SourceText& src) : src_(src), s_(src.text) {}

  ShellScan run() {
    while (i_ < s_.size()) step();
    finish_word();
    end_command();
    return std::move(out_);
  }

 private:
  Location here() const { return {src_.name, line_, col_}; }

  void advance() {
    if (s_[i_] == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    ++i_;
  }

  void start_word_if_needed() {
    if (!in_word_) {
      in_word_ = true;
      word_loc_ = here();
      word_.clear();
      word_unresolved_ = false;
      word_quoted_ = false;
    }
  }

  void step() {
    const char c = s_[i_];
    if (c == '\\' && i_ + 1 < s_.size() && s_[i_ + 1] == '\n') {
      advance();
      advance();
      return;
    }
    if (c == '\\' && i_ + 1 < s_.size()) {
      start_word_if_needed();
      advance();
      word_ += s_[i_];
      advance();
      return;
    }
    if (c == '#' && !in_word_) {
      while (i_ < s_.size() && s_[i_] != '\n') advance();
      return;
    }
    if (c == '\n' || c == ' ' || c == '\t' || c == '\r') {
      finish_word();
      if (c == '\n' && array_depth_ == 0) end_command();
      advance();
      return;
    }
    if (c == ';' || c == '&' || c == '|') {
      finish_word();
      if (array_depth_ == 0) end_command();
      advance();
      return;
    }
    if (c == '(' && in_word_ && !word_quoted_ && at_command_start_ && !word_.empty() && word_.back() == '=') {
      bool append = false;
      const size_t n = assignment_name_length(word_, &append);
      if (n > 0 && n + (append ? 2 : 1) == word_.size()) {  // NAME=( or NAME+=(
        in_word_ = false;
        ++array_depth_;
        end_command();  // the array's words form their own command
        advance();
        return;
      }
    }
    if (c == ')' && array_depth_ > 0) {
      finish_word();
      --array_depth_;
      end_command();
      advance();
      return;
    }
    if (c == '(' || c == ')') {
      finish_word();
      advance();
      return;
    }
    start_word_if_needed();
    if (c == '\'') {
      word_quoted_ = true;
      advance();
      while (i_ < s_.size() && s_[i_] != '\'') {
        word_ += s_[i_];
        advance();
      }
      if (i_ < s_.size()) advance();
      return;
    }
    if (c == '"') {
      word_quoted_ = true;
      advance();
      while (i_ < s_.size() && s_[i_] != '"') {
        if (s_[i_] == '\\' && i_ + 1 < s_.size() && std::string_view("\"\\$`").find(s_[i_ + 1]) != std::string_view::npos) {
          advance();
        } else if (s_[i_] == '$') {
          word_ += expansion(true);
          continue;
        }
        word_ += s_[i_];
        advance();
      }
      if (i_ < s_.size()) advance();
      return;
    }
    if (c == '`') {
      word_ += raw_until('`');
      word_unresolved_ = true;
      return;
    }
    if (c == '$') {
      const bool whole_word = word_.empty() && !word_quoted_;
      const Location at = here();
      const std::string value = expansion(false);
      if (whole_word && last_variable_ && at_word_end()) {
        // An unquoted $VAR standing alone: its value splits into words placed at the assignment.
        split_variable(*last_variable_);
        return;
      }
      (void)at;
      word_ += value;
      return;
    }
    word_ += c;
    advance();
  }

  bool at_word_end() const {
    return i_ >= s_.size() || std::string_view(" \t\r\n;&|)").find(s_[i_]) != std::string_view::npos;
  }

  std::string raw_until(char close) {
    std::string out(1, s_[i_]);
    advance();
    while (i_ < s_.size() && s_[i_] != close) {
      out += s_[i_];
      advance();
    }
    if (i_ < s_.size()) {
      out += s_[i_];
      advance();
    }
    return out;
  }

  // At '$'. Returns the expansion's value; sets last_variable_ when it named a defined scalar variable.
  std::string expansion(bool quoted) {
    (void)quoted;
    last_variable_ = nullptr;
    advance();  // '$'
    if (i_ >= s_.size()) return "$";
    if (s_[i_] == '(') {
      word_unresolved_ = true;
      int depth = 0;
      std::string out = "$";
      while (i_ < s_.size()) {
        if (s_[i_] == '(') ++depth;
        if (s_[i_] == ')' && --depth == 0) {
          out += ')';
          advance();
          break;
        }
        out += s_[i_];
        advance();
      }
      return out;
    }
    std::string name, fallback;
    bool has_fallback = false, indexed = false;
    if (s_[i_] == '{') {
      advance();
      while (i_ < s_.size() && is_name_char(s_[i_])) {
        name += s_[i_];
        advance();
      }
      if (i_ < s_.size() && s_[i_] == '[') indexed = true;
      if (i_ < s_.size() && (s_[i_] == ':' || s_[i_] == '-' || s_[i_] == '=')) {
        if (s_[i_] == ':') advance();
        if (i_ < s_.size() && (s_[i_] == '-' || s_[i_] == '=')) {
          advance();
          has_fallback = true;
        }
      }
      while (i_ < s_.size() && s_[i_] != '}') {
        if (has_fallback) fallback += s_[i_];
        advance();
      }
      if (i_ < s_.size()) advance();
    } else if (is_name_start(s_[i_])) {
      while (i_ < s_.size() && is_name_char(s_[i_])) {
        name += s_[i_];
        advance();
      }
    } else {
      // $1, $@, $#: arguments of the script, unknown here.
      const char c = s_[i_];
      advance();
      word_unresolved_ = true;
      return std::string("$") + c;
    }
    if (indexed) return "";  // "${ARRAY[@]}": the array's words were read where it was written
    const auto it = vars_.find(name);
    if (it != vars_.end()) {
      last_variable_ = &it->second;
      return it->second.value;
    }
    if (has_fallback) return fallback;
    word_unresolved_ = true;
    return "${" + name + "}";
  }

  void split_variable(const Variable& v) {
    in_word_ = false;
    size_t p = 0;
    while (p < v.value.size()) {
      while (p < v.value.size() && std::isspace(static_cast<unsigned char>(v.value[p]))) ++p;
      const size_t b = p;
      while (p < v.value.size() && !std::isspace(static_cast<unsigned char>(v.value[p]))) ++p;
      if (p > b) {
        Location loc = v.loc;
        if (loc.col > 0) loc.col += static_cast<int>(b);
        emit({v.value.substr(b, p - b), loc, command_, false});
      }
    }
  }

  void emit(ShellWord w) {
    w.command = command_;
    out_.words.push_back(std::move(w));
    at_command_start_ = false;
    flush_prefix_assignments(true);
  }

  void finish_word() {
    if (!in_word_) return;
    in_word_ = false;
    bool append = false;
    const size_t n = at_command_start_ && array_depth_ == 0 ? assignment_name_length(word_, &append) : 0;
    if (n > 0) {
      const std::string name = word_.substr(0, n);
      const std::string value = word_.substr(n + (append ? 2 : 1));
      Location value_loc = word_loc_;
      value_loc.col += static_cast<int>(n + (append ? 2 : 1));
      if (word_quoted_) value_loc.col += 1;  // NAME="..." : the value starts after the quote
      Variable& v = vars_[name];
      v.value = append ? v.value + value : value;
      v.loc = value_loc;
      pending_.push_back({name, v.value, word_loc_});
      if (exporting_) {
        out_.exports.push_back({name, v.value, word_loc_});
        pending_.pop_back();
      }
      return;
    }
    if (at_command_start_ && array_depth_ == 0 && !word_quoted_ &&
        (word_ == "export" || word_ == "declare" || word_ == "local" || word_ == "readonly" || word_ == "typeset")) {
      exporting_ = word_ == "export";
      return;
    }
    if (exporting_ && array_depth_ == 0) {
      if (word_.rfind('-', 0) == 0) return;  // export -n / declare -x options
      const auto it = vars_.find(word_);
      if (it != vars_.end()) out_.exports.push_back({word_, it->second.value, word_loc_});
      return;
    }
    emit({word_, word_loc_, command_, word_unresolved_});
  }

  // Assignments directly before a command word are that command's environment.
  void flush_prefix_assignments(bool command_follows) {
    if (command_follows) {
      for (auto& e : pending_) out_.exports.push_back(e);
    }
    pending_.clear();
  }

  void end_command() {
    flush_prefix_assignments(false);
    ++command_;
    at_command_start_ = true;
    exporting_ = false;
  }

  const SourceText& src_;
  const std::string& s_;
  size_t i_ = 0;
  int line_ = 1, col_ = 1;
  bool in_word_ = false, word_quoted_ = false, word_unresolved_ = false;
  std::string word_;
  Location word_loc_;
  int command_ = 0;
  int array_depth_ = 0;
  bool at_command_start_ = true, exporting_ = false;
  std::map<std::string, Variable> vars_;
  const Variable* last_variable_ = nullptr;
  std::vector<ShellExport> pending_;
  ShellScan out_;
};

}  // namespace

ShellScan scan_shell(const SourceText& source) { return Lexer(source).run(); }

}  // namespace hcp::lint
