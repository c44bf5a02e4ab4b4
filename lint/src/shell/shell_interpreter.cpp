// Statements and paths: runs a script's syntax tree over a set of interpreter states, one per path.
#include <algorithm>
#include <filesystem>

#include "shell_interpreter.hpp"
#include "slurm_directives.hpp"

namespace hcp::lint::shell {
namespace {

bool is_statement_child(BashNode c) { return c.named() && !c.is("comment") && !c.is("heredoc_body"); }

std::string condition_text(std::string_view raw) {
  std::string out;
  bool blank = false;
  for (const char c : raw) {
    const bool b = c == ' ' || c == '\t' || c == '\n' || c == '\\';
    if (b && blank) continue;
    out += b ? ' ' : c;
    blank = b;
  }
  while (!out.empty() && (out.back() == ' ' || out.back() == ';')) out.pop_back();
  if (out.size() > 80) out = out.substr(0, 77) + "...";
  return out;
}

// A condition this path already decided (the same test written twice, as scripts do for $BATCH) is not forked again.
std::optional<bool> remembered(const State& s, const std::string& c) {
  for (const std::string& known : s.conditions) {
    if (known == c) return true;
    if (known == "not " + c) return false;
  }
  return std::nullopt;
}

std::string folder_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

void Interpreter::skip(BashNode n, std::string what) {
  out_.skipped.push_back({loc(n), std::move(what)});
}

States Interpreter::bound(States produced, BashNode n) {
  if (produced.size() <= 1) return produced;
  out_.joined = true;
  States one;
  one.push_back(join_states(std::move(produced), "line " + std::to_string(loc(n).line)));
  return one;
}

States Interpreter::exec_block(BashNode parent, uint32_t from, uint32_t to, States states) {
  for (uint32_t i = from; i < to && !states.empty(); ++i) {
    const BashNode c = parent.child(i);
    if (!is_statement_child(c)) continue;
    States next;
    for (State& s : states) {
      if (s.returned) {
        next.push_back(std::move(s));
        continue;
      }
      States produced = exec_statement(c, std::move(s));
      // Paths that ended by `exit` are finished; the others go on.
      States going;
      for (State& r : produced) {
        if (r.exited) {
          finished_.push_back(std::move(r));
        } else {
          going.push_back(std::move(r));
        }
      }
      if (next.size() + going.size() > options_.max_paths) going = bound(std::move(going), c);
      for (State& r : going) next.push_back(std::move(r));
    }
    if (next.size() > options_.max_paths) next = bound(std::move(next), c);
    states = std::move(next);
  }
  return states;
}

States Interpreter::exec_statement(BashNode n, State s) {
  // Nested loops over known lists and recursive functions could run for very long: past a budget far above what
  // a launch script runs, the rest is not followed (and says so once).
  constexpr size_t kMaxSteps = 50000;
  if (++steps_ > kMaxSteps) {
    if (steps_ == kMaxSteps + 1) skip(n, "the rest of the script (more than 50000 statements to follow)");
    return {std::move(s)};
  }
  const Nested nested(*this);
  if (nested.too_deep()) {
    skip(n, "statements nested more than " + std::to_string(kMaxNesting) + " deep");
    return {std::move(s)};
  }
  const std::string_view t = n.type();
  if (t == "variable_assignment") {
    assign(n, s, false);
    return {std::move(s)};
  }
  if (t == "variable_assignments") {
    for (uint32_t i = 0; i < n.named_child_count(); ++i) assign(n.named_child(i), s, false);
    return {std::move(s)};
  }
  if (t == "declaration_command") {
    declare(n, s);
    return {std::move(s)};
  }
  if (t == "unset_command") {
    for (uint32_t i = 0; i < n.named_child_count(); ++i) {
      const std::string name(n.named_child(i).text());
      if (name.rfind('-', 0) != 0) s.vars.erase(name);
    }
    return {std::move(s)};
  }
  if (t == "command") return exec_command(n, std::move(s), {});
  if (t == "redirected_statement") {
    const BashNode body = n.field("body");
    if (body.null()) return {std::move(s)};
    if (!body.is("command")) return exec_statement(body, std::move(s));
    // `cmd <in a b > out c`: the grammar hangs a b and c on the redirections; bash gives them to the command.
    std::vector<BashNode> extra;
    for (uint32_t i = 0; i < n.child_count(); ++i) {
      const BashNode r = n.child(i);
      if (!r.is("file_redirect")) continue;
      bool destination = true;
      for (uint32_t k = 0; k < r.named_child_count(); ++k) {
        const BashNode w = r.named_child(k);
        if (w.is("file_descriptor")) continue;
        if (destination) {
          destination = false;
          continue;
        }
        extra.push_back(w);
      }
    }
    return exec_command(body, std::move(s), extra);
  }
  if (t == "pipeline" || t == "compound_statement" || t == "do_group") {
    return exec_block(n, 0, n.child_count(), States{std::move(s)});
  }
  if (t == "negated_command") return exec_block(n, 0, n.child_count(), States{std::move(s)});
  if (t == "list") return exec_list(n, std::move(s));
  if (t == "subshell") {
    // Its variables die with it; the commands it ran stay.
    State copy = s;
    States produced = exec_block(n, 0, n.child_count(), States{std::move(copy)});
    States out;
    for (State& r : produced) {
      State kept = s;
      kept.commands = r.commands;
      kept.conditions = r.conditions;
      kept.exited = r.exited;
      out.push_back(std::move(kept));
    }
    return out;
  }
  if (t == "if_statement") return exec_if(n, std::move(s));
  if (t == "case_statement") return exec_case(n, std::move(s));
  if (t == "while_statement" || t == "c_style_for_statement") return exec_loop(n, std::move(s));
  if (t == "for_statement") return exec_for(n, std::move(s));
  if (t == "function_definition") {
    const BashNode name = n.field("name");
    const BashNode body = n.field("body");
    if (!name.null() && !body.null()) s.functions[std::string(name.text())] = body;
    return {std::move(s)};
  }
  if (t == "test_command") return {std::move(s)};
  if (t == "ERROR") {
    // The grammar recovers around what it cannot read: the commands it did read inside still run.
    const std::string_view text = n.text();
    skip(n, "a part bash's grammar cannot read (" + condition_text(text.substr(0, std::min<size_t>(text.find('\n'), 60))) + ")");
    return exec_block(n, 0, n.child_count(), States{std::move(s)});
  }
  skip(n, "a " + std::string(t) + " statement the model does not follow");
  return {std::move(s)};
}

States Interpreter::exec_list(BashNode n, State s) {
  // a && b, a || b: a test on the left is evaluated (and forks when unknown); a command on the left is taken to
  // succeed, so `cd d && torchrun ...` runs the launch and `cd d || exit 1` does not exit.
  std::vector<BashNode> parts;
  std::vector<std::string> ops;
  for (uint32_t i = 0; i < n.child_count(); ++i) {
    const BashNode c = n.child(i);
    if (is_statement_child(c)) {
      parts.push_back(c);
    } else if (c.text() == "&&" || c.text() == "||") {
      ops.emplace_back(c.text());
    }
  }
  if (parts.size() != 2 || ops.size() != 1) return exec_block(n, 0, n.child_count(), States{std::move(s)});
  const BashNode left = parts[0], right = parts[1];
  const bool is_test = left.is("test_command") || left.is("negated_command") || left.is("list");
  std::optional<bool> truth = is_test ? condition(left, s) : std::nullopt;
  if (is_test && !truth) truth = remembered(s, condition_text(left.text()));
  States after_left = is_test ? States{std::move(s)} : exec_statement(left, std::move(s));
  States out;
  for (State& st : after_left) {
    if (st.exited || st.returned) {
      out.push_back(std::move(st));
      continue;
    }
    const bool and_op = ops[0] == "&&";
    if (!is_test) {
      if (and_op) {
        for (State& r : exec_statement(right, std::move(st))) out.push_back(std::move(r));
      } else {
        out.push_back(std::move(st));
      }
      continue;
    }
    if (truth) {
      if (*truth == and_op) {
        for (State& r : exec_statement(right, std::move(st))) out.push_back(std::move(r));
      } else {
        out.push_back(std::move(st));
      }
      continue;
    }
    const std::string c = condition_text(left.text());
    State runs = st;
    runs.conditions.push_back(and_op ? c : "not " + c);
    st.conditions.push_back(and_op ? "not " + c : c);
    for (State& r : exec_statement(right, std::move(runs))) out.push_back(std::move(r));
    out.push_back(std::move(st));
  }
  return out;
}

States Interpreter::exec_if(BashNode n, State s) {
  // Arms: (condition statements, body range); `else` is an arm without condition.
  struct Arm {
    BashNode node;
    std::vector<BashNode> conditions;
    uint32_t body_from = 0, body_to = 0;
  };
  std::vector<Arm> arms;
  auto read_arm = [&](BashNode clause, bool has_condition) {
    Arm arm{clause, {}, 0, clause.child_count()};
    bool in_body = !has_condition;
    for (uint32_t i = 0; i < clause.child_count(); ++i) {
      const BashNode c = clause.child(i);
      if (c.is("elif_clause") || c.is("else_clause") || (!c.named() && c.text() == "fi")) {
        arm.body_to = i;
        break;
      }
      if (!c.named() && (c.text() == "then" || c.text() == "else")) {
        in_body = true;
        arm.body_from = i + 1;
        continue;
      }
      if (!in_body && is_statement_child(c)) arm.conditions.push_back(c);
    }
    arms.push_back(arm);
  };
  read_arm(n, true);
  for (uint32_t i = 0; i < n.child_count(); ++i) {
    const BashNode c = n.child(i);
    if (c.is("elif_clause")) read_arm(c, true);
    if (c.is("else_clause")) read_arm(c, false);
  }
  States out;
  States pending{std::move(s)};  // paths on which no arm has been taken yet
  for (const Arm& arm : arms) {
    States next_pending;
    for (State& st : pending) {
      if (arm.conditions.empty()) {  // else
        for (State& r : exec_block(arm.node, arm.body_from, arm.body_to, States{std::move(st)})) out.push_back(std::move(r));
        continue;
      }
      // Statements before the last run for their effects; the last one decides.
      States ready{std::move(st)};
      for (size_t k = 0; k + 1 < arm.conditions.size(); ++k) {
        States tmp;
        for (State& x : ready) for (State& r : exec_statement(arm.conditions[k], std::move(x))) tmp.push_back(std::move(r));
        ready = std::move(tmp);
      }
      const BashNode decider = arm.conditions.back();
      for (State& x : ready) {
        if (x.exited) {
          finished_.push_back(std::move(x));
          continue;
        }
        std::optional<bool> truth = condition(decider, x);
        const std::string c = condition_text(decider.text());
        if (!truth) truth = remembered(x, c);
        if (truth) {
          if (*truth) {
            for (State& r : exec_block(arm.node, arm.body_from, arm.body_to, States{std::move(x)})) out.push_back(std::move(r));
          } else {
            next_pending.push_back(std::move(x));
          }
          continue;
        }
        State no = x;
        // `[ "$N" -le 0 ]` with N=${N:-0}: the default takes one branch; on the other the environment gave N.
        defaults_decide_ = true;
        State probe = x;
        const std::optional<bool> by_default = condition(decider, probe);
        defaults_decide_ = false;
        if (by_default) {
          forget_refuted_defaults(decider, *by_default ? no : x,
                                  "the environment's value where " + c + (*by_default ? " is false" : " holds"));
        }
        no.conditions.push_back("not " + c);
        x.conditions.push_back(c);
        for (State& r : exec_block(arm.node, arm.body_from, arm.body_to, States{std::move(x)})) out.push_back(std::move(r));
        next_pending.push_back(std::move(no));
      }
    }
    pending = std::move(next_pending);
  }
  for (State& p : pending) out.push_back(std::move(p));
  return out;
}

void Interpreter::forget_refuted_defaults(BashNode decider, State& s, const std::string& why) {
  const Nested nested(*this);
  if (nested.too_deep()) return;
  if (decider.is("variable_name")) {
    const std::string name(decider.text());
    const Var* v = s.vars.find(name);
    if (!v) return;
    const bool defaulted = std::any_of(v->elements.begin(), v->elements.end(), [](const Pieces& e) {
      return std::any_of(e.begin(), e.end(), [](const ShellPiece& p) { return p.provenance == Provenance::defaulted; });
    });
    if (!defaulted) return;
    Var& edit = s.vars.edit(name);
    for (Pieces& e : edit.elements) {
      ShellPiece unknown;
      unknown.loc = e.empty() ? Location{} : e.front().loc;
      unknown.provenance = Provenance::unknown;
      unknown.why = name + " is " + why;
      e = Pieces{unknown};
    }
    return;
  }
  for (uint32_t i = 0; i < decider.named_child_count(); ++i) forget_refuted_defaults(decider.named_child(i), s, why);
}

States Interpreter::exec_case(BashNode n, State s) {
  const BashNode value_node = n.field("value");
  const Pieces value = value_node.null() ? Pieces{} : expand_value(value_node, s);
  // A case on a default the environment can override goes every way, like an unknown one.
  const bool known = std::all_of(value.begin(), value.end(), [](const ShellPiece& p) {
    return p.provenance == Provenance::literal || p.provenance == Provenance::computed;
  });
  const std::string text = text_of(value);
  const std::string label = value_node.null() ? "case" : condition_text(value_node.text());
  States out;
  States pending{std::move(s)};
  for (uint32_t i = 0; i < n.child_count(); ++i) {
    const BashNode item = n.child(i);
    if (!item.is("case_item")) continue;
    std::vector<std::string> patterns;
    bool patterns_known = true;
    uint32_t body_from = item.child_count();
    for (uint32_t k = 0; k < item.child_count(); ++k) {
      const BashNode c = item.child(k);
      if (!c.named() && c.text() == ")") {
        body_from = k + 1;
        break;
      }
      if (!c.named()) continue;
      State& probe = pending.empty() ? s : pending.front();
      const Pieces p = expand_value(c, probe);
      patterns_known &= all_known(p);
      patterns.push_back(c.is("raw_string") || c.is("string") ? text_of(p) : std::string(c.text()));
    }
    const bool catch_all = std::find(patterns.begin(), patterns.end(), "*") != patterns.end();
    States next_pending;
    for (State& st : pending) {
      if (known && patterns_known) {
        const bool match = std::any_of(patterns.begin(), patterns.end(), [&](const std::string& p) {
          return glob_match(p, text);
        });
        if (match) {
          for (State& r : exec_block(item, body_from, item.child_count(), States{std::move(st)})) out.push_back(std::move(r));
        } else {
          next_pending.push_back(std::move(st));
        }
        continue;
      }
      std::string arm;
      for (const std::string& p : patterns) arm += (arm.empty() ? "" : "|") + p;
      State taken = st;
      taken.conditions.push_back(catch_all ? label + " matches no other arm" : label + " matches " + arm);
      for (State& r : exec_block(item, body_from, item.child_count(), States{std::move(taken)})) out.push_back(std::move(r));
      if (!catch_all) next_pending.push_back(std::move(st));
    }
    pending = std::move(next_pending);
  }
  for (State& p : pending) {
    if (!known) p.conditions.push_back(label + " matches no arm");
    out.push_back(std::move(p));
  }
  return out;
}

States Interpreter::exec_loop(BashNode n, State s) {
  // The body may run any number of times: run it once and join with not running it.
  const BashNode body = n.field("body");
  if (body.null()) return {std::move(s)};
  State before = s;
  States produced = exec_statement(body, std::move(s));
  States going{std::move(before)};
  for (State& r : produced) {
    if (r.exited) {
      finished_.push_back(std::move(r));
    } else {
      going.push_back(std::move(r));
    }
  }
  States one;
  one.push_back(join_states(std::move(going), "loop at line " + std::to_string(loc(n).line)));
  return one;
}

States Interpreter::exec_for(BashNode n, State s) {
  const BashNode var = n.field("variable");
  const BashNode body = n.field("body");
  if (var.null() || body.null()) return {std::move(s)};
  const std::string name(var.text());
  std::vector<Pieces> items;
  bool known = false;
  for (uint32_t i = 0; i < n.child_count(); ++i) {
    if (n.field_of_child(i) != "value") continue;
    known = true;
    for (Pieces& w : expand_argument(n.child(i), s)) items.push_back(std::move(w));
  }
  if (!known && s.positional) {  // `for x; do` walks the positional parameters
    items = *s.positional;
    known = true;
  }
  known = known && items.size() <= 64 &&
          std::all_of(items.begin(), items.end(), [](const Pieces& p) { return all_known(p); });
  if (!known) {
    Var v;
    v.elements.push_back({unknown_piece("$" + name, loc(var), "loop variable " + name + " over unknown values")});
    s.vars.set(name, std::move(v));
    return exec_loop(n, std::move(s));
  }
  States states{std::move(s)};
  for (Pieces& item : items) {
    for (State& st : states) {
      const Var* old = st.vars.find(name);
      st.vars.set(name, Var{{item}, false, old && old->exported});
    }
    states = exec_block(body, 0, body.child_count(), std::move(states));
  }
  return states;
}

void Interpreter::assign(BashNode a, State& s, bool exported) {
  const BashNode name_node = a.field("name");
  const BashNode value_node = a.field("value");
  if (name_node.null()) return;
  bool append = false;
  for (uint32_t i = 0; i < a.child_count(); ++i) {
    if (!a.child(i).named() && a.child(i).text() == "+=") append = true;
  }
  std::string name(name_node.text());
  std::optional<int64_t> index;
  bool index_unknown = false;
  if (name_node.is("subscript")) {
    name = std::string(name_node.field("name").text());
    const BashNode idx = name_node.field("index");
    index = idx.null() ? std::nullopt : arithmetic(idx, s);
    index_unknown = !index || *index < 0 || *index > 4096;
  }
  // The value is expanded before the variable exists: CP=${CP:-8} reads the CP from before.
  std::vector<Pieces> items;
  const bool is_array = !value_node.null() && value_node.is("array");
  Pieces value;
  if (is_array) {
    for (uint32_t i = 0; i < value_node.named_child_count(); ++i) {
      const BashNode item = value_node.named_child(i);
      if (item.is("comment")) continue;
      for (Pieces& w : expand_argument(item, s)) items.push_back(std::move(w));
    }
  } else if (!value_node.null()) {
    value = expand_value(value_node, s);
  }
  Var& v = s.vars.edit(name);
  v.exported |= exported;
  if (index_unknown) {
    v.array = true;
    v.elements = {{unknown_piece("${" + name + "[@]}", loc(a), "array " + name + " set at an unknown index")}};
    return;
  }
  if (is_array) {
    if (!append) v.elements.clear();
    if (!v.array && append && !v.elements.empty() && text_of(v.elements[0]).empty()) v.elements.clear();
    v.array = true;
    for (Pieces& w : items) v.elements.push_back(std::move(w));
    if (v.elements.size() > 4096) {  // an array that grows without bound stops being followed
      v.elements = {{unknown_piece("${" + name + "[@]}", loc(a), "an array of more than 4096 words")}};
    }
    return;
  }
  // A value that grows without bound (X=$X$X in a loop) stops being followed.
  constexpr size_t kMaxValue = 1 << 16;
  size_t total = 0;
  for (const ShellPiece& p : value) total += p.text.size();
  if (total > kMaxValue) value = {unknown_piece("$" + name, loc(a), "a value longer than 64 KiB")};
  if (value.empty()) {
    ShellPiece empty;
    empty.loc = loc(value_node.null() ? a : value_node);
    value.push_back(std::move(empty));
  }
  if (index) {
    v.array = true;
    if (v.elements.size() <= static_cast<size_t>(*index)) v.elements.resize(static_cast<size_t>(*index) + 1);
    Pieces& slot = v.elements[static_cast<size_t>(*index)];
    if (append) {
      slot.insert(slot.end(), value.begin(), value.end());
    } else {
      slot = std::move(value);
    }
    return;
  }
  if (append && !v.elements.empty()) {
    if (v.array) {
      v.elements.push_back(std::move(value));  // A+=x on an array appends to element 0 in bash; rare, and
    } else {                                   // scripts mean the list form
      v.elements[0].insert(v.elements[0].end(), value.begin(), value.end());
    }
    return;
  }
  v.elements = {std::move(value)};
  v.array = false;
}

void Interpreter::declare(BashNode n, State& s) {
  const std::string_view keyword = n.child_count() ? n.child(0).text() : std::string_view();
  bool exported = keyword == "export";
  bool unexport = false;
  for (uint32_t i = 0; i < n.child_count(); ++i) {
    const BashNode c = n.child(i);
    if (!c.named()) continue;
    const std::string_view text = c.text();
    if (c.is("word") && text.size() > 1 && (text[0] == '-' || text[0] == '+')) {
      if (text.find('x') != std::string_view::npos) (text[0] == '-' ? exported : unexport) = true;
      continue;
    }
    if (c.is("variable_assignment")) {
      assign(c, s, exported && !unexport);
    } else if (c.is("variable_name") || c.is("word")) {
      const std::string name(text);
      const Var* existing = s.vars.find(name);
      if (exported && !existing) continue;  // `export X` of an environment variable: still unknown
      if (!existing && keyword == "local") {
        s.vars.set(name, Var{{{}}, false, false});
        continue;
      }
      if (existing) s.vars.edit(name).exported = exported && !unexport;
    }
  }
}

void Interpreter::record(State& s, std::vector<Pieces> words, const std::vector<std::pair<std::string, Pieces>>& prefix,
                         BashNode n) {
  ShellCommand c;
  c.loc = loc(n);
  c.outer = outer_;
  for (const Pieces& w : words) c.words.push_back(to_word(w));
  if (options_.keep && !options_.keep(c.words)) return;
  for (const auto& [name, v] : s.vars.all()) {
    if (v->exported) c.env.push_back({name, to_word(concat(v->elements, " "))});
  }
  for (const auto& entry : prefix) {
    const std::string& name = entry.first;  // (clang 14 cannot capture a structured binding)
    const Pieces& v = entry.second;
    auto it = std::find_if(c.env.begin(), c.env.end(), [&](const ShellEnv& e) { return e.name == name; });
    if (it != c.env.end()) {
      it->value = to_word(v);
    } else {
      c.env.push_back({name, to_word(v)});
    }
  }
  s.commands = std::make_shared<const CommandNode>(CommandNode{std::move(c), s.commands});
}

States Interpreter::exec_command(BashNode n, State s, const std::vector<BashNode>& extra) {
  std::vector<std::pair<std::string, Pieces>> prefix;
  std::vector<Pieces> words;
  for (uint32_t i = 0; i < n.child_count(); ++i) {
    const BashNode c = n.child(i);
    if (!c.named()) {
      // `[[ a == b ]]`-style operator tokens that the grammar leaves unnamed inside arguments.
      if (n.field_of_child(i) == "argument") words.push_back({literal_piece(std::string(c.text()), loc(c))});
      continue;
    }
    if (c.is("variable_assignment")) {
      const BashNode name = c.field("name"), value = c.field("value");
      prefix.emplace_back(std::string(name.text()), value.null() ? Pieces{} : expand_value(value, s));
      continue;
    }
    if (c.is("command_name") || n.field_of_child(i) == "argument") {
      const BashNode target = c.is("command_name") && c.named_child_count() == 1 ? c.named_child(0) : c;
      for (Pieces& w : expand_argument(target, s)) words.push_back(std::move(w));
    }
  }
  for (const BashNode e : extra) {
    for (Pieces& w : expand_argument(e, s)) words.push_back(std::move(w));
  }
  return exec_words(words, std::move(prefix), n, std::move(s));
}

States Interpreter::exec_words(const std::vector<Pieces>& words, std::vector<std::pair<std::string, Pieces>> prefix,
                               BashNode n, State s) {
  if (words.empty()) {
    for (auto& [name, v] : prefix) {
      const Var* old = s.vars.find(name);
      s.vars.set(name, Var{{v}, false, old && old->exported});
    }
    return {std::move(s)};
  }
  const std::string name = all_known(words[0]) ? text_of(words[0]) : "";
  auto rest = [&](size_t from) { return std::vector<Pieces>(words.begin() + static_cast<long>(from), words.end()); };
  if (name == "exec" || name == "command" || name == "builtin" || name == "nohup" || name == "time") {
    return exec_words(rest(1), std::move(prefix), n, std::move(s));
  }
  if (name == "env") {
    size_t i = 1;
    for (; i < words.size(); ++i) {
      const std::string w = text_of(words[i]);
      const size_t eq = w.find('=');
      if (w.rfind('-', 0) == 0) continue;
      if (eq == std::string::npos || eq == 0) break;
      Pieces value = words[i];
      if (!value.empty() && value.front().text.size() > eq) value.front().text.erase(0, eq + 1);
      prefix.emplace_back(w.substr(0, eq), value);
    }
    return exec_words(rest(i), std::move(prefix), n, std::move(s));
  }
  if (name == "source" || name == ".") return exec_source(words, n, std::move(s));
  if (name == "exit") {
    s.exited = true;
    return {std::move(s)};
  }
  if (name == "return") {
    s.returned = true;
    return {std::move(s)};
  }
  if (name == "shift") {
    if (s.positional) {
      size_t k = 1;
      if (words.size() > 1) k = static_cast<size_t>(parse_shell_int(text_of(words[1])).value_or(1));
      s.positional->erase(s.positional->begin(), s.positional->begin() + static_cast<long>(std::min(k, s.positional->size())));
    }
    return {std::move(s)};
  }
  if (name == "set") {
    for (size_t i = 1; i < words.size(); ++i) {
      if (text_of(words[i]) == "--") {
        s.positional = rest(i + 1);
        break;
      }
    }
    return {std::move(s)};
  }
  if (name == "read" || name == "mapfile" || name == "readarray" || name == "getopts") {
    for (size_t i = 1; i < words.size(); ++i) {
      const std::string w = text_of(words[i]);
      if (w.empty() || w[0] == '-' || name == "getopts") continue;
      s.vars.set(w, Var{{{unknown_piece("$" + w, loc(n), w + " read from input")}}, name != "read", false});
    }
    if (name == "getopts" && words.size() > 2) {
      const std::string w = text_of(words[2]);
      s.vars.set(w, Var{{{unknown_piece("$" + w, loc(n), "option parsed by getopts")}}, false, false});
      s.vars.set("OPTARG", Var{{{unknown_piece("$OPTARG", loc(n), "option argument parsed by getopts")}}, false, false});
    }
    return {std::move(s)};
  }
  if (name == "eval") {
    const Pieces text = concat(rest(1), " ");
    return exec_script_text(text_of(text), "eval", n, std::move(s));
  }
  // `bash -c STRING`, also behind a launcher (`srun ... sh -c "python ..."`): the string is a script.
  for (size_t k = 0; k + 2 < words.size(); ++k) {
    const std::string shell = all_known(words[k]) ? text_of(words[k]) : "";
    const std::string_view base = std::string_view(shell).substr(shell.rfind('/') == std::string::npos ? 0 : shell.rfind('/') + 1);
    if (base != "bash" && base != "sh" && base != "zsh") continue;
    for (size_t i = k + 1; i + 1 < words.size(); ++i) {
      const std::string w = text_of(words[i]);
      if (w.empty() || w[0] != '-') break;
      if (w == "-c" || (w[1] != '-' && w.find('c') != std::string::npos)) {
        State inner = s;
        const auto saved = outer_;
        for (size_t j = 0; j < k; ++j) outer_.push_back(to_word(words[j]));
        States produced = exec_script_text(text_of(words[i + 1]), shell + " -c", n, std::move(inner));
        outer_ = saved;
        for (State& r : produced) s.commands = r.commands;  // its variables die with it
        return {std::move(s)};
      }
    }
    break;
  }
  if (!name.empty()) {
    const auto fn = s.functions.find(name);
    if (fn != s.functions.end()) {
      if (s.depth >= options_.max_call_depth) {
        skip(n, "call of " + name + " nested too deep");
        return {std::move(s)};
      }
      const BashNode body = fn->second;
      auto saved_positional = std::move(s.positional);
      s.positional = rest(1);
      ++s.depth;
      States produced = exec_statement(body, std::move(s));
      for (State& r : produced) {
        --r.depth;
        r.returned = false;
        r.positional = saved_positional;
      }
      return produced;
    }
  }
  record(s, words, prefix, n);
  return {std::move(s)};
}

States Interpreter::exec_script_text(const std::string& text, const std::string& what, BashNode at, State s) {
  if (s.depth >= options_.max_source_depth) {
    skip(at, what + " nested too deep");
    return {std::move(s)};
  }
  texts_.push_back(std::make_unique<std::string>(text));
  trees_.push_back(std::make_unique<BashTree>(*texts_.back()));
  const BashNode root = trees_.back()->root();
  // Locations inside the string: the command's own position (the string's words have no place of their own).
  const Location saved_origin = origin_;
  origin_ = loc(at);
  ++s.depth;
  States produced = exec_block(root, 0, root.child_count(), States{std::move(s)});
  origin_ = saved_origin;
  for (State& r : produced) --r.depth;
  return produced;
}

namespace {

// One file is named many ways - a.sh, ./a.sh, x/../a.sh, a link to it: the path with links and dots resolved
// (stat and readlink only; nothing is opened), or the lexical form when that fails.
std::string file_identity(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path absolute = fs::absolute(path, ec);
  if (ec) return fs::path(path).lexically_normal().string();
  const fs::path resolved = fs::weakly_canonical(absolute, ec);
  return (ec ? absolute.lexically_normal() : resolved).string();
}

}  // namespace

const Interpreter::Reading* Interpreter::reading(const std::string& path) const {
  const std::string id = file_identity(path);
  for (const Reading& r : source_stack_)
    if (r.identity == id) return &r;
  return nullptr;
}

States Interpreter::exec_source(const std::vector<Pieces>& words, BashNode n, State s) {
  if (words.size() < 2 || !all_known(words[1])) {
    skip(n, "source of a file whose path is not known here" +
                (words.size() > 1 ? " (" + to_word(words[1]).why + ")" : std::string()));
    return {std::move(s)};
  }
  // bash looks for a relative path from the working directory; scripts are run from where their $0 points or
  // from their own folder, so both are tried.
  const std::string named = text_of(words[1]);
  std::vector<std::string> candidates{named};
  if (!named.empty() && named[0] != '/' && dir_ != ".") candidates.push_back(dir_ + "/" + named);
  std::optional<SourceText> text;
  std::string path = candidates.back(), refused;
  const Reading* cycle = nullptr;  // a file being read that a candidate names again
  if (options_.read_sourced && s.depth < options_.max_source_depth) {
    for (const std::string& c : candidates) {
      if (options_.may_source) {
        if (std::string why = options_.may_source(c); !why.empty()) {
          refused = std::move(why);  // the last candidate's: the script's folder, the one bash would most likely use
          continue;
        }
      }
      if (const Reading* r = reading(c)) {
        cycle = r;
        continue;
      }
      if ((text = options_.read_sourced(c))) {
        path = c;
        break;
      }
    }
  }
  if (!text && cycle) {
    skip(n, "source of " + named + ": a cycle, " + cycle->name + " is being read already (bash would recurse " +
                "until it fails)");
    return {std::move(s)};
  }
  if (s.depth >= options_.max_source_depth || !options_.read_sourced) {
    skip(n, options_.read_sourced ? "source nested too deep" : "source of " + path + " (no files are read here)");
    return {std::move(s)};
  }
  if (!text) {
    skip(n, "source of " + path + ": " + (refused.empty() ? "the file cannot be read" : refused));
    return {std::move(s)};
  }
  out_.sourced.push_back(std::move(*text));
  texts_.push_back(std::make_unique<std::string>(out_.sourced.back().text));
  trees_.push_back(std::make_unique<BashTree>(*texts_.back()));
  const BashNode root = trees_.back()->root();
  const std::string saved_file = file_, saved_dir = dir_;
  file_ = out_.sourced.back().name;
  dir_ = folder_of(file_);
  source_stack_.push_back({file_identity(path), path});
  ++s.depth;
  States produced = exec_block(root, 0, root.child_count(), States{std::move(s)});
  source_stack_.pop_back();
  file_ = saved_file;
  dir_ = saved_dir;
  for (State& r : produced) {
    --r.depth;
    r.returned = false;
  }
  return produced;
}

void Interpreter::run(const SourceText& script) {
  file_ = script.name;
  script_name_ = script.name;
  dir_ = folder_of(script.name);
  source_stack_.push_back({file_identity(script.name), script.name});
  BashTree tree(script.text);
  const BashNode root = tree.root();
  State start;
  read_directives(script, out_, start.vars);
  ShellPiece self;
  self.text = script.name;
  self.provenance = Provenance::computed;
  start.vars.set("BASH_SOURCE", Var{{{self}}, true, false});
  States end = exec_block(root, 0, root.child_count(), States{std::move(start)});
  for (State& s : finished_) end.push_back(std::move(s));
  for (State& s : end) {
    ShellPath p;
    p.conditions = std::move(s.conditions);
    p.exits = s.exited;
    std::vector<const CommandNode*> chain;
    for (const CommandNode* c = s.commands.get(); c; c = c->prev.get()) chain.push_back(c);
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) p.commands.push_back((*it)->command);
    out_.paths.push_back(std::move(p));
  }
}

}  // namespace hcp::lint::shell

namespace hcp::lint {

ShellRun run_shell(const SourceText& script, const ShellOptions& options) {
  ShellRun out;
  shell::Interpreter(options, out).run(script);
  return out;
}

}  // namespace hcp::lint
