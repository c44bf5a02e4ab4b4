// Arithmetic ($(( )), array indices, substring offsets) and the truth of test conditions, evaluated only when
// every operand is known; otherwise the answer is "unknown" and the caller forks or gives up.
#include <algorithm>

#include "hcp/checked_math.hpp"
#include "shell_interpreter.hpp"

namespace hcp::lint::shell {
namespace {

std::optional<int64_t> apply(std::string_view op, int64_t a, int64_t b) {
  int64_t r = 0;
  if (op == "+") return __builtin_add_overflow(a, b, &r) ? std::nullopt : std::optional(r);
  if (op == "-") return __builtin_sub_overflow(a, b, &r) ? std::nullopt : std::optional(r);
  if (op == "*") return __builtin_mul_overflow(a, b, &r) ? std::nullopt : std::optional(r);
  if (op == "/" || op == "%") {
    if (b == 0 || (a == INT64_MIN && b == -1)) return std::nullopt;
    return op == "/" ? a / b : a % b;
  }
  if (op == "**") {
    if (b < 0) return std::nullopt;
    int64_t acc = 1;
    for (int64_t i = 0; i < b; ++i) {
      if (__builtin_mul_overflow(acc, a, &acc)) return std::nullopt;
      if (acc == 0 || acc == 1) break;
    }
    return acc;
  }
  if (op == "<<" || op == ">>") {
    if (b < 0 || b > 62) return std::nullopt;
    return op == "<<" ? (a << b) : (a >> b);
  }
  if (op == "&") return a & b;
  if (op == "|") return a | b;
  if (op == "^") return a ^ b;
  if (op == "<") return a < b;
  if (op == ">") return a > b;
  if (op == "<=") return a <= b;
  if (op == ">=") return a >= b;
  if (op == "==") return a == b;
  if (op == "!=") return a != b;
  if (op == "&&") return a && b;
  if (op == "||") return a || b;
  return std::nullopt;
}

std::string_view operator_of(BashNode n) {
  const BashNode op = n.field("operator");
  if (!op.null()) return op.text();
  for (uint32_t i = 0; i < n.child_count(); ++i) {
    if (!n.child(i).named() || n.child(i).is("test_operator")) return n.child(i).text();
  }
  return {};
}

std::optional<int64_t> int_of(const Pieces& p) {
  if (!all_known(p)) return std::nullopt;
  const std::string t = text_of(p);
  if (t.empty()) return 0;  // an empty variable is 0 in arithmetic
  return parse_shell_int(t);
}

// A test decides a branch only on values the script fixes: one on a default the environment can override
// (`MASTER_ADDR=${MASTER_ADDR:-}; [ -z "$MASTER_ADDR" ] && exit 1`) goes both ways.
// Known values decide; with `defaults`, a default the environment may override (${N:-8}) decides too (the
// interpreter asks so to find which branch the default itself takes).
bool decidable(const Pieces& p, bool defaults) {
  return std::all_of(p.begin(), p.end(), [&](const ShellPiece& x) {
    return x.provenance == Provenance::literal || x.provenance == Provenance::computed ||
           (defaults && x.provenance == Provenance::defaulted);
  });
}

}  // namespace

std::optional<int64_t> Interpreter::arithmetic(BashNode n, State& s) {
  const Nested nested(*this);
  if (nested.too_deep()) return std::nullopt;
  const std::string_view t = n.type();
  if (t == "number") return parse_shell_int(std::string(n.text()));
  if (t == "variable_name" || t == "word") {
    const std::string name(n.text());
    if (const auto v = parse_shell_int(name)) return v;
    bool set = false;
    const auto values = lookup(name, loc(n), s, &set);
    if (!set) return values.empty() || all_known(values[0]) ? std::optional<int64_t>(0) : std::nullopt;
    return values.empty() ? std::optional<int64_t>(0) : int_of(values[0]);
  }
  if (t == "simple_expansion" || t == "expansion" || t == "string" || t == "concatenation") {
    return int_of(expand_value(n, s));
  }
  if (t == "parenthesized_expression") return n.named_child_count() == 1 ? arithmetic(n.named_child(0), s) : std::nullopt;
  if (t == "unary_expression") {
    const auto v = n.named_child_count() ? arithmetic(n.named_child(n.named_child_count() - 1), s) : std::nullopt;
    if (!v) return std::nullopt;
    const std::string_view op = operator_of(n);
    if (op == "-") return *v == INT64_MIN ? std::nullopt : std::optional(-*v);
    if (op == "+") return v;
    if (op == "!") return *v == 0;
    if (op == "~") return ~*v;
    return std::nullopt;
  }
  if (t == "binary_expression") {
    const BashNode l = n.field("left"), r = n.field("right");
    if (l.null() || r.null()) return std::nullopt;
    const std::string_view op = operator_of(n);
    if (op.find('=') != std::string_view::npos && op != "==" && op != "!=" && op != "<=" && op != ">=") {
      return std::nullopt;  // assignments inside arithmetic are not modelled
    }
    const auto a = arithmetic(l, s), b = arithmetic(r, s);
    if (!a || !b) return std::nullopt;
    return apply(op, *a, *b);
  }
  if (t == "ternary_expression") {
    const auto c = arithmetic(n.field("condition"), s);
    if (!c) return std::nullopt;
    return arithmetic(n.field(*c ? "consequence" : "alternative"), s);
  }
  return std::nullopt;
}

std::optional<bool> Interpreter::condition(BashNode n, State& s) {
  const Nested nested(*this);
  if (nested.too_deep()) return std::nullopt;
  const std::string_view t = n.type();
  if (t == "test_command") {
    if (n.named_child_count() != 1) return std::nullopt;
    return condition(n.named_child(0), s);
  }
  if (t == "negated_command") {
    const auto v = n.named_child_count() == 1 ? condition(n.named_child(0), s) : std::nullopt;
    return v ? std::optional(!*v) : std::nullopt;
  }
  if (t == "parenthesized_expression") return n.named_child_count() == 1 ? condition(n.named_child(0), s) : std::nullopt;
  // `[ -z "$N" ] || [ "$N" -le 0 ]`: two commands joined by || or && (left to right, as bash runs them).
  if (t == "list" && n.named_child_count() == 2) {
    std::string_view op;
    for (size_t i = 0; i < n.child_count(); ++i) {
      if (!n.child(i).named() && (n.child(i).text() == "||" || n.child(i).text() == "&&")) op = n.child(i).text();
    }
    if (op.empty()) return std::nullopt;
    const auto a = condition(n.named_child(0), s);
    if (a && *a == (op == "||")) return a;
    const auto b = condition(n.named_child(1), s);
    if (a && b) return b;
    if (b && *b == (op == "||")) return b;
    return std::nullopt;
  }
  if (t == "unary_expression") {
    const std::string_view op = operator_of(n);
    const BashNode arg = n.named_child(n.named_child_count() - 1);
    if (op == "!") {
      const auto v = condition(arg, s);
      return v ? std::optional(!*v) : std::nullopt;
    }
    if (op != "-z" && op != "-n") return std::nullopt;  // file tests and the like depend on the machine
    const Pieces v = expand_value(arg, s);
    if (!decidable(v, defaults_decide_)) return std::nullopt;
    return (op == "-z") == text_of(v).empty();
  }
  if (t == "binary_expression") {
    const std::string_view op = operator_of(n);
    const BashNode l = n.field("left"), r = n.field("right");
    if (l.null() || r.null()) return std::nullopt;
    if (op == "&&" || op == "||") {
      const auto a = condition(l, s);
      if (a && *a == (op == "||")) return a;
      const auto b = condition(r, s);
      if (a && b) return b;
      if (b && *b == (op == "||")) return b;
      return std::nullopt;
    }
    const Pieces a = expand_value(l, s), b = expand_value(r, s);
    if (!decidable(a, defaults_decide_) || !decidable(b, defaults_decide_)) return std::nullopt;
    const std::string x = text_of(a), y = text_of(b);
    if (op == "=" || op == "==" || op == "!=") {
      // In [[ ]] the right side is a pattern; in [ ] it is a string. A pattern without glob characters is both.
      const bool pattern = y.find_first_of("*?[") != std::string::npos;
      bool eq = x == y;
      if (pattern) {
        if (n.text().empty()) return std::nullopt;
        eq = glob_match(y, x);
      }
      return op == "!=" ? !eq : eq;
    }
    static constexpr std::string_view kNumeric[][2] = {{"-eq", "=="}, {"-ne", "!="}, {"-lt", "<"},
                                                      {"-le", "<="}, {"-gt", ">"},  {"-ge", ">="}};
    for (const auto& [test_op, arith_op] : kNumeric) {
      if (op != test_op) continue;
      const auto xi = parse_shell_int(x), yi = parse_shell_int(y);
      if (!xi || !yi) return std::nullopt;
      return apply(arith_op, *xi, *yi).value_or(0) != 0;
    }
    return std::nullopt;
  }
  if (t == "command") {
    const std::string name(n.field("name").text());
    if (name == "true" || name == ":") return true;
    if (name == "false") return false;
    return std::nullopt;
  }
  if (t == "word" || t == "string" || t == "simple_expansion" || t == "expansion" || t == "concatenation") {
    const Pieces v = expand_value(n, s);  // [ "$X" ]: true when not empty
    if (!decidable(v, defaults_decide_)) return std::nullopt;
    return !text_of(v).empty();
  }
  return std::nullopt;
}

}  // namespace hcp::lint::shell
