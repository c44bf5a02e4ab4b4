// Values and paths: building words from pieces, and joining paths when there would be too many.
#include <fnmatch.h>

#include <algorithm>
#include <charconv>
#include <set>

#include "shell_interpreter.hpp"

namespace hcp::lint::shell {
namespace {

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\n'; }

bool same_value(const Var& a, const Var& b) {
  if (a.array != b.array || a.elements.size() != b.elements.size()) return false;
  for (size_t i = 0; i < a.elements.size(); ++i) {
    const Pieces& x = a.elements[i];
    const Pieces& y = b.elements[i];
    if (!all_known(x) || !all_known(y) || text_of(x) != text_of(y)) return false;
  }
  return true;
}

std::vector<const CommandNode*> chain(const std::shared_ptr<const CommandNode>& head) {
  std::vector<const CommandNode*> out;
  for (const CommandNode* n = head.get(); n; n = n->prev.get()) out.push_back(n);
  std::reverse(out.begin(), out.end());
  return out;
}

}  // namespace

void Fields::ensure_word() {
  if (!open_) {
    words_.emplace_back();
    open_ = true;
  }
}

void Fields::append(ShellPiece piece) {
  ensure_word();
  words_.back().push_back(std::move(piece));
}

void Fields::append_split(const Pieces& value) {
  if (!split_) {
    for (const ShellPiece& p : value) append(p);
    return;
  }
  for (const ShellPiece& p : value) {
    if (p.provenance == Provenance::unknown) {  // how many words an unknown value makes is unknown: keep one
      append(p);
      continue;
    }
    size_t i = 0;
    while (i < p.text.size()) {
      if (is_blank(p.text[i])) {
        open_ = false;
        while (i < p.text.size() && is_blank(p.text[i])) ++i;
        continue;
      }
      const size_t b = i;
      while (i < p.text.size() && !is_blank(p.text[i])) ++i;
      ShellPiece part = p;
      part.text = p.text.substr(b, i - b);
      // A word inside a multi-line string sits on a later line of it.
      const size_t newline = p.text.rfind('\n', b);
      if (newline != std::string::npos && part.loc.line > 0) {
        part.loc.line += static_cast<int>(std::count(p.text.begin(), p.text.begin() + static_cast<long>(b), '\n'));
        part.loc.col = static_cast<int>(b - newline);
      } else if (part.loc.col > 0) {
        part.loc.col += static_cast<int>(b);
      }
      append(std::move(part));
    }
  }
}

Pieces concat(const std::vector<Pieces>& words, const std::string& separator) {
  Pieces out;
  for (size_t i = 0; i < words.size(); ++i) {
    if (i > 0 && !separator.empty()) {
      ShellPiece sep;
      sep.text = separator;
      sep.provenance = Provenance::computed;
      if (!words[i - 1].empty()) sep.loc = words[i - 1].back().loc;
      out.push_back(std::move(sep));
    }
    out.insert(out.end(), words[i].begin(), words[i].end());
  }
  return out;
}

std::string text_of(const Pieces& p) {
  std::string s;
  for (const ShellPiece& x : p) s += x.text;
  return s;
}

bool all_known(const Pieces& p) {
  return std::none_of(p.begin(), p.end(), [](const ShellPiece& x) { return x.provenance == Provenance::unknown; });
}

ShellWord to_word(const Pieces& p) {
  ShellWord w;
  bool unknown_seen = false;
  for (const ShellPiece& x : p) {
    if (!w.loc.known() && x.loc.known() && !x.text.empty()) w.loc = x.loc;
    if (x.provenance == Provenance::unknown && !unknown_seen) {
      unknown_seen = true;
      w.known_prefix = w.text.size();
      w.why = x.why;
      w.provenance = Provenance::unknown;
    } else if (!unknown_seen && x.provenance > w.provenance) {
      w.provenance = x.provenance;
    }
    w.text += x.text;
  }
  if (!unknown_seen) w.known_prefix = w.text.size();
  if (!w.loc.known() && !p.empty()) w.loc = p.front().loc;
  return w;
}

ShellPiece literal_piece(std::string text, Location loc, Provenance provenance) {
  ShellPiece p;
  p.text = std::move(text);
  p.loc = std::move(loc);
  p.provenance = provenance;
  return p;
}

bool glob_match(const std::string& pattern, const std::string& text) {
  return ::fnmatch(pattern.c_str(), text.c_str(), FNM_EXTMATCH) == 0;
}

ShellPiece unknown_piece(std::string text, Location loc, std::string why) {
  ShellPiece p;
  p.text = std::move(text);
  p.loc = std::move(loc);
  p.provenance = Provenance::unknown;
  p.why = std::move(why);
  return p;
}

std::optional<int64_t> parse_shell_int(const std::string& text) {
  size_t b = 0, e = text.size();
  while (b < e && is_blank(text[b])) ++b;
  while (e > b && is_blank(text[e - 1])) --e;
  if (b == e) return std::nullopt;
  bool negative = false;
  if (text[b] == '+' || text[b] == '-') {
    negative = text[b] == '-';
    ++b;
  }
  int base = 10;
  if (e - b > 2 && text[b] == '0' && (text[b + 1] == 'x' || text[b + 1] == 'X')) {
    base = 16;
    b += 2;
  }
  int64_t v = 0;
  const auto r = std::from_chars(text.data() + b, text.data() + e, v, base);
  if (r.ec != std::errc() || r.ptr != text.data() + e) return std::nullopt;
  return negative ? -v : v;
}

State join_states(std::vector<State> states, const std::string& where) {
  State out = std::move(states.front());
  // Conditions: what every joined path shares.
  for (size_t i = 1; i < states.size(); ++i) {
    const auto& c = states[i].conditions;
    size_t n = 0;
    while (n < out.conditions.size() && n < c.size() && out.conditions[n] == c[n]) ++n;
    out.conditions.resize(n);
  }
  // Variables: equal known values stay, anything else is unknown from here on.
  std::set<std::string, std::less<>> names;
  for (const State& s : states) {
    for (const auto& [name, v] : s.vars.all()) names.insert(name);
  }
  for (const std::string& name : names) {
    const Var* first = out.vars.find(name);
    bool same = first != nullptr;
    for (size_t i = 1; same && i < states.size(); ++i) {
      const Var* other = states[i].vars.find(name);
      same = other && (other == first || same_value(*first, *other));
    }
    if (same) continue;
    Var v;
    v.exported = first && first->exported;
    Location at;
    if (first && !first->elements.empty() && !first->elements[0].empty()) at = first->elements[0][0].loc;
    v.elements.push_back({unknown_piece("$" + name, at, name + " differs between branches (" + where + ")")});
    out.vars.set(name, std::move(v));
  }
  // Commands: the first path's, then what each other path ran after the point they share. The same command run
  // with the same words on several paths is kept once, so that joins inside loops do not multiply commands.
  std::set<const CommandNode*> seen;
  std::set<std::string> same;
  auto identity = [](const ShellCommand& c) {
    std::string key = c.loc.text();
    for (const ShellWord& w : c.words) key.append("\x1f").append(w.text);
    return key;
  };
  for (const CommandNode* n : chain(out.commands)) {
    seen.insert(n);
    same.insert(identity(n->command));
  }
  for (size_t i = 1; i < states.size(); ++i) {
    for (const CommandNode* n : chain(states[i].commands)) {
      if (!seen.insert(n).second || !same.insert(identity(n->command)).second) continue;
      out.commands = std::make_shared<const CommandNode>(CommandNode{n->command, out.commands});
    }
  }
  for (size_t i = 1; i < states.size(); ++i) {
    for (const auto& [name, fn] : states[i].functions) out.functions.emplace(name, fn);
  }
  out.exited = false;
  return out;
}

}  // namespace hcp::lint::shell
