// Word expansion: quotes, escapes, parameter expansion, command and arithmetic substitution, word splitting.
#include <algorithm>
#include <cctype>

#include "shell_interpreter.hpp"

namespace hcp::lint::shell {
namespace {

ShellPiece literal(std::string text, Location loc, Provenance p = Provenance::literal) {
  return literal_piece(std::move(text), std::move(loc), p);
}

// An unquoted word's text without its backslashes (\x is x; a backslash-newline is nothing).
std::string unescape_word(std::string_view raw) {
  std::string out;
  for (size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] == '\\' && i + 1 < raw.size()) {
      ++i;
      if (raw[i] == '\n') continue;
    }
    out += raw[i];
  }
  return out;
}

// Inside double quotes a backslash escapes only $ ` " \ and newline.
std::string unescape_double_quoted(std::string_view raw) {
  std::string out;
  for (size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] == '\\' && i + 1 < raw.size() && std::string_view("$`\"\\\n").find(raw[i + 1]) != std::string_view::npos) {
      ++i;
      if (raw[i] == '\n') continue;
    }
    out += raw[i];
  }
  return out;
}

std::string ansi_c(std::string_view raw) {  // $'...'
  std::string out;
  for (size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] != '\\' || i + 1 >= raw.size()) {
      out += raw[i];
      continue;
    }
    const char c = raw[++i];
    switch (c) {
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'r': out += '\r'; break;
      case 'a': out += '\a'; break;
      case 'e': case 'E': out += '\x1b'; break;
      default: out += c;
    }
  }
  return out;
}

std::string upper(std::string s, bool all) {
  for (size_t i = 0; i < s.size(); ++i) {
    if (all || i == 0) s[i] = static_cast<char>(std::toupper(static_cast<unsigned char>(s[i])));
  }
  return s;
}

std::string lower(std::string s, bool all) {
  for (size_t i = 0; i < s.size(); ++i) {
    if (all || i == 0) s[i] = static_cast<char>(std::tolower(static_cast<unsigned char>(s[i])));
  }
  return s;
}

// A piece list as one computed piece at the place of the first (for values changed by an operator).
Pieces computed(const Pieces& from, std::string text) {
  Location at = from.empty() ? Location{} : from.front().loc;
  Provenance p = Provenance::computed;
  for (const ShellPiece& x : from) p = std::max(p, x.provenance);
  return {literal(std::move(text), at, p)};
}

}  // namespace

std::vector<Pieces> Interpreter::lookup(const std::string& name, const Location& at, State& s, bool* set) {
  *set = true;
  const bool digits = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; });
 if (name == "0") return {{literal(script_name_, at, Provenance::computed)}};
  if (digits || name == "@" || name == "*" || name == "#") {
    if (!s.positional) {
      const std::string why = name == "#" ? "the number of the script's arguments ($#)"
                              : digits    ? "positional parameter $" + name
                                          : "the script's arguments ($" + name + ")";
      return {{unknown_piece(name.size() == 1 ? "$" + name : "${" + name + "}", at, why)}};
    }
    const auto& args = *s.positional;
    if (name == "#") return {{literal(std::to_string(args.size()), at, Provenance::computed)}};
    if (!digits) return args;
    const size_t i = std::stoul(name.size() > 6 ? std::string("999999") : name);
    if (i == 0) return {{literal(script_name_, at, Provenance::computed)}};
    if (i > args.size()) {
      *set = false;
      return {{}};
    }
    return {args[i - 1]};
  }
  if (name.size() == 1 && std::string_view("?$!-_").find(name[0]) != std::string_view::npos) {
    return {{unknown_piece("$" + name, at, "special parameter $" + name)}};
  }
  if (const Var* v = s.vars.find(name)) return v->elements;
  *set = false;
  return {{unknown_piece("${" + name + "}", at, "environment variable " + name + " (not set in the script)")}};
}

void Interpreter::expand_parameter(BashNode n, State& s, Fields& out, bool quoted) {
  const Location at = loc(n);
  if (n.is("simple_expansion")) {
    const BashNode name = n.named_child(0);
    if (name.null()) return out.append(literal("$", at));
    bool set = false;
    const std::string id(name.text());
    auto values = lookup(id, at, s, &set);
    const bool many = id == "@" || (id == "*" && !quoted);
    if (many && !quoted) {
      for (const Pieces& v : values) out.append_split(v);
    } else if (many) {
      out.mark_word();
      for (size_t i = 0; i < values.size(); ++i) {
        if (i > 0) out.break_word();
        for (const ShellPiece& p : values[i]) out.append(p);
      }
    } else {
      const Pieces v = id == "*" ? concat(values, " ") : values.empty() ? Pieces{} : values[0];
      quoted ? (void)std::for_each(v.begin(), v.end(), [&](const ShellPiece& p) { out.append(p); })
             : out.append_split(v);
    }
    return;
  }
  // ${ [prefix op] name-or-subscript [operator operands...] }
  std::string prefix_op, op, name;
  BashNode subscript;
  std::vector<BashNode> operands;
  bool seen_name = false;
  for (uint32_t i = 0; i < n.child_count(); ++i) {
    const BashNode c = n.child(i);
    const std::string_view t = c.type();
    if (t == "${" || t == "}") continue;
    if (!seen_name && (c.is("variable_name") || c.is("special_variable_name"))) {
      name = std::string(c.text());
      seen_name = true;
    } else if (!seen_name && c.is("subscript")) {
      subscript = c;
      name = std::string(c.field("name").text());
      seen_name = true;
    } else if (!seen_name && !c.named()) {
      prefix_op += std::string(t);
    } else if (seen_name && !c.named() && operands.empty()) {
      op += std::string(c.text());
    } else if (seen_name && c.named()) {
      operands.push_back(c);
    }
  }
  const std::string raw(n.text());
  if (!seen_name || prefix_op == "!") {
    return out.append(unknown_piece(raw, at, prefix_op == "!" ? "indirect expansion " + raw : "expansion " + raw));
  }
  bool set = false;
  std::vector<Pieces> values = lookup(name, at, s, &set);
  bool array_all = false;
  if (!subscript.null()) {
    const std::string index(subscript.field("index").text());
    if (index == "@" || index == "*") {
      array_all = true;
    } else {
      const auto i = parse_shell_int(index);
      if (!i) return out.append(unknown_piece(raw, at, "array index " + index));
      if (*i < 0 || static_cast<size_t>(*i) >= values.size()) {
        values = {{}};
        set = false;
      } else {
        values = {values[static_cast<size_t>(*i)]};
      }
    }
  } else if (values.size() > 1 && name != "@" && name != "*") {
    values.resize(1);  // $A of an array is its first element
  }
  const bool env_unknown = !set && values.size() == 1 && !values[0].empty() && !all_known(values[0]) &&
                           values[0][0].why.rfind("environment variable", 0) == 0;
  if (prefix_op == "#") {  // length
    if (array_all) return out.append(literal(std::to_string(values.size()), at, Provenance::computed));
    const Pieces v = values.empty() ? Pieces{} : values[0];
    if (!all_known(v)) return out.append(unknown_piece(raw, at, "length of an unknown value"));
    return out.append(literal(std::to_string(text_of(v).size()), at, Provenance::computed));
  }
  auto operand_value = [&](size_t from) {
    Fields f;
    for (size_t i = from; i < operands.size(); ++i) expand_into(operands[i], s, f, true);
    auto words = f.take();
    return words.empty() ? Pieces{} : concat(words, "");
  };
  auto emit = [&](const std::vector<Pieces>& vs) {
    if (array_all && quoted) {
      out.mark_word();
      for (size_t i = 0; i < vs.size(); ++i) {
        if (i > 0) out.break_word();
        for (const ShellPiece& p : vs[i]) out.append(p);
      }
      return;
    }
    const Pieces v = vs.size() == 1 ? vs[0] : concat(vs, " ");
    if (quoted) {
      for (const ShellPiece& p : v) out.append(p);
    } else {
      out.append_split(v);
    }
  };
  const bool empty = values.empty() || (values.size() == 1 && values[0].empty()) ||
                     (values.size() == 1 && all_known(values[0]) && text_of(values[0]).empty());
  if (op.empty()) return emit(values);
  const bool colon = op[0] == ':' && op.size() == 2;
  const char kind = colon ? op[1] : op[0];
  if (op.size() <= 2 && (kind == '-' || kind == '=' || kind == '+' || kind == '?') && (colon || op.size() == 1)) {
    const bool use_operand = kind == '+' ? (set && !(colon && empty)) : (!set || (colon && empty));
    if (env_unknown && kind != '?') {
      // The environment may set it: with a default, the default is what the script gives, as a default.
      if (kind == '+') return out.append(unknown_piece(raw, at, values[0][0].why));
      Pieces d = operand_value(0);
      if (d.empty()) d.push_back(literal("", at));  // ${X:-}: empty unless the environment sets it
      for (ShellPiece& p : d) {
        if (p.provenance != Provenance::unknown) {
          p.provenance = Provenance::defaulted;
          p.why = name + " from the environment, else '" + text_of(d) + "'";
        }
      }
      if (kind == '=') s.vars.set(name, Var{{d}, false, false});
      return emit({d});
    }
    if (!use_operand) return emit(kind == '+' ? std::vector<Pieces>{{}} : values);
    if (kind == '?') return emit(values);
    Pieces d = operand_value(0);
    if (kind == '=') s.vars.set(name, Var{{d}, false, false});
    return emit({d});
  }
  // Operators that transform a known value.
  const Pieces v = values.empty() ? Pieces{} : concat(values, " ");
  if (!all_known(v)) return out.append(unknown_piece(raw, at, v.empty() ? "expansion " + raw : v[0].why));
  const std::string text = text_of(v);
  if (text.size() > 4096) return out.append(unknown_piece(raw, at, "an operator on a value longer than 4 KiB"));
  if (op == "#" || op == "##" || op == "%" || op == "%%") {
    const Pieces pat = operand_value(0);
    if (!all_known(pat)) return out.append(unknown_piece(raw, at, "a pattern with unknown parts"));
    const std::string pattern = text_of(pat);
    std::string result = text;
    const bool longest = op.size() == 2;
    if (op[0] == '#') {
      for (size_t k = 0; k <= text.size(); ++k) {
        const size_t len = longest ? text.size() - k : k;
        if (glob_match(pattern, text.substr(0, len))) {
          result = text.substr(len);
          break;
        }
      }
    } else {
      for (size_t k = 0; k <= text.size(); ++k) {
        const size_t start = longest ? k : text.size() - k;
        if (glob_match(pattern, text.substr(start))) {
          result = text.substr(0, start);
          break;
        }
      }
    }
    return emit({computed(v, result)});
  }
  if (op == "^^" || op == "^") return emit({computed(v, upper(text, op.size() == 2))});
  if (op == ",," || op == ",") return emit({computed(v, lower(text, op.size() == 2))});
  if (op == ":") {
    if (operands.empty()) return out.append(unknown_piece(raw, at, "substring " + raw));
    const auto offset = arithmetic(operands[0], s);
    std::optional<int64_t> length;
    if (operands.size() > 1) length = arithmetic(operands[1], s);
    if (!offset || (operands.size() > 1 && !length)) return out.append(unknown_piece(raw, at, "substring " + raw));
    int64_t b = *offset < 0 ? static_cast<int64_t>(text.size()) + *offset : *offset;
    b = std::clamp<int64_t>(b, 0, static_cast<int64_t>(text.size()));
    int64_t len = length ? *length : static_cast<int64_t>(text.size()) - b;
    if (len < 0) len = std::max<int64_t>(0, static_cast<int64_t>(text.size()) - b + len);
    return emit({computed(v, text.substr(static_cast<size_t>(b), static_cast<size_t>(len)))});
  }
  if (op == "/" || op == "//") {
    // A literal pattern without glob characters is replaced exactly; anything richer is not modelled.
    const Pieces pat = operands.empty() ? Pieces{} : Pieces{literal(std::string(operands[0].text()), at)};
    const std::string pattern = text_of(pat);
    if (pattern.empty() || pattern.find_first_of("*?[\\") != std::string::npos) {
      return out.append(unknown_piece(raw, at, "pattern substitution " + raw));
    }
    const std::string replacement = operands.size() > 1 ? std::string(operands[1].text()) : "";
    std::string result = text;
    size_t pos = 0;
    while ((pos = result.find(pattern, pos)) != std::string::npos) {
      result.replace(pos, pattern.size(), replacement);
      pos += replacement.size();
      if (op == "/") break;
    }
    return emit({computed(v, result)});
  }
  out.append(unknown_piece(raw, at, "expansion " + raw));
}

void Interpreter::expand_into(BashNode n, State& s, Fields& out, bool quoted) {
  const std::string_view t = n.type();
  const Location at = loc(n);
  const Nested nested(*this);
  if (nested.too_deep()) return out.append(unknown_piece(std::string(n.text().substr(0, 40)), at, "a word nested too deep"));
  if (t == "word" || t == "number" || t == "extglob_pattern" || t == "regex" || t == "brace_expression" ||
      t == "special_variable_name" || t == "variable_name" || t == "test_operator") {
    if (t == "number" && n.named_child_count() > 0) {
      for (uint32_t i = 0; i < n.named_child_count(); ++i) expand_into(n.named_child(i), s, out, quoted);
      return;
    }
    return out.append(literal(quoted ? std::string(n.text()) : unescape_word(n.text()), at));
  }
  if (t == "raw_string") {
    const std::string_view r = n.text();
    return out.append(literal(std::string(r.size() >= 2 ? r.substr(1, r.size() - 2) : r), {at.file, at.line, at.col + 1}));
  }
  if (t == "ansi_c_string") {
    const std::string_view r = n.text();
    return out.append(literal(ansi_c(r.size() >= 3 ? r.substr(2, r.size() - 3) : r), at));
  }
  if (t == "string" || t == "translated_string") {
    out.mark_word();  // "" is a word even when empty
    // Text between the children (what the grammar leaves uncovered) is literal too.
    uint32_t pos = n.start_byte();
    const std::string_view whole = n.text();
    const uint32_t base = n.start_byte();
    for (uint32_t i = 0; i < n.child_count(); ++i) {
      const BashNode c = n.child(i);
      if (c.start_byte() > pos && pos > base) {
        out.append(literal(unescape_double_quoted(whole.substr(pos - base, c.start_byte() - pos)), at));
      }
      pos = std::max(pos, c.end_byte());
      if (!c.named()) continue;
      if (c.is("string_content")) {
        out.append(literal(unescape_double_quoted(c.text()), loc(c)));
      } else {
        expand_into(c, s, out, true);
      }
    }
    return;
  }
  if (t == "concatenation") {
    for (uint32_t i = 0; i < n.child_count(); ++i) {
      const BashNode c = n.child(i);
      if (c.named()) {
        expand_into(c, s, out, quoted);
      } else {
        out.append(literal(unescape_word(c.text()), loc(c)));
      }
    }
    return;
  }
  if (t == "simple_expansion" || t == "expansion") return expand_parameter(n, s, out, quoted);
  if (t == "arithmetic_expansion") {
    const BashNode e = n.named_child(0);
    const auto v = e.null() ? std::nullopt : arithmetic(e, s);
    if (!v) return out.append(unknown_piece(std::string(n.text()), at, "arithmetic with unknown values " + std::string(n.text())));
    return out.append(literal(std::to_string(*v), at, Provenance::computed));
  }
  if (t == "command_substitution") {
    if (auto v = path_substitution(n, s)) {
      for (ShellPiece& p : *v) out.append(std::move(p));
      return;
    }
    return out.append(unknown_piece(std::string(n.text()), at, "output of a command " + std::string(n.text().substr(0, 60))));
  }
  if (t == "process_substitution") return out.append(unknown_piece(std::string(n.text()), at, "process substitution"));
  out.append(unknown_piece(std::string(n.text()), at, std::string("a ") + std::string(t) + " the model does not read"));
}

// $(dirname X), $(basename X), $(realpath X), $(readlink -f X) and $(cd X && pwd) of a known X: how scripts find
// their own folder to source their neighbours. Any other command's output is unknown.
std::optional<Pieces> Interpreter::path_substitution(BashNode n, State& s) {
  BashNode body;
  for (uint32_t i = 0; i < n.named_child_count(); ++i) {
    if (n.named_child(i).is("comment")) continue;
    if (!body.null()) return std::nullopt;
    body = n.named_child(i);
  }
  if (body.null()) return std::nullopt;
  auto strip_redirect = [](BashNode x) { return x.is("redirected_statement") ? x.field("body") : x; };
  body = strip_redirect(body);
  auto words_of = [&](BashNode cmd) -> std::optional<std::vector<std::string>> {
    cmd = strip_redirect(cmd);
    if (cmd.null() || !cmd.is("command")) return std::nullopt;
    std::vector<std::string> words;
    for (uint32_t i = 0; i < cmd.named_child_count(); ++i) {
      const BashNode c = cmd.named_child(i);
      if (c.is("file_redirect") || c.is("herestring_redirect")) continue;
      const BashNode target = c.is("command_name") && c.named_child_count() == 1 ? c.named_child(0) : c;
      for (const Pieces& w : expand_argument(target, s)) {
        if (!all_known(w)) return std::nullopt;
        const std::string text = text_of(w);
        if (text == "--" || (words.size() > 0 && text.size() > 1 && text[0] == '-')) continue;  // options
        words.push_back(text);
      }
    }
    return words;
  };
  std::optional<std::string> result;
  if (body.is("list") && body.named_child_count() == 2) {  // cd X && pwd
    const auto cd = words_of(body.named_child(0));
    const auto pwd = words_of(body.named_child(1));
    if (cd && pwd && cd->size() == 2 && (*cd)[0] == "cd" && pwd->size() == 1 && (*pwd)[0] == "pwd") result = (*cd)[1];
  } else if (const auto w = words_of(body); w && w->size() == 2) {
    const std::string& cmd = (*w)[0];
    const std::string& arg = (*w)[1];
    if (cmd == "dirname") {
      const size_t slash = arg.find_last_of('/');
      result = slash == std::string::npos ? "." : slash == 0 ? "/" : arg.substr(0, slash);
    } else if (cmd == "basename") {
      result = arg.substr(arg.find_last_of('/') + 1);
    } else if (cmd == "realpath" || cmd == "readlink") {
      result = arg;
    }
  }
  if (!result) return std::nullopt;
  return Pieces{literal(*result, loc(n), Provenance::computed)};
}

std::vector<Pieces> Interpreter::expand_argument(BashNode n, State& s) {
  Fields f;
  expand_into(n, s, f, false);
  return f.take();
}

Pieces Interpreter::expand_value(BashNode n, State& s) {
  Fields f;
  f.no_split();
  expand_into(n, s, f, false);
  return concat(f.take(), " ");
}

}  // namespace hcp::lint::shell
