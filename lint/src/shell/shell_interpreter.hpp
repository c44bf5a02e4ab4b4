// The interpreter behind run_shell (shell_model.hpp), shared by its parts: statements and paths
// (shell_interpreter.cpp), word expansion (shell_expand.cpp), arithmetic and test conditions
// (shell_conditions.cpp), and path joining (shell_state.cpp).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "../syntax/syntax_tree.hpp"
#include "shell_model.hpp"

namespace hcp::lint::shell {

using Pieces = std::vector<ShellPiece>;

struct Var {
  std::vector<Pieces> elements;  // one for a scalar
  bool array = false;
  bool exported = false;
};

// The variables of a path. Paths fork often and change few variables, so values are shared between paths and
// copied only when one path changes them.
class Vars {
 public:
  const Var* find(std::string_view name) const {
    const auto it = map_.find(name);
    return it == map_.end() ? nullptr : it->second.get();
  }
  void set(const std::string& name, Var v) { map_[name] = std::make_shared<const Var>(std::move(v)); }
  // The variable to change in place (created empty when absent; copied first when another path shares it).
  Var& edit(const std::string& name) {
    auto& slot = map_[name];
    if (!slot) {
      slot = std::make_shared<Var>();
    } else if (slot.use_count() > 1) {
      slot = std::make_shared<Var>(*slot);
    }
    return const_cast<Var&>(*slot);  // owned by this path alone at this point
  }
  void erase(const std::string& name) { map_.erase(name); }
  const auto& all() const { return map_; }

 private:
  std::map<std::string, std::shared_ptr<const Var>, std::less<>> map_;
};

// Commands of a path as a shared list, so that forking a path copies a pointer.
struct CommandNode {
  ShellCommand command;
  std::shared_ptr<const CommandNode> prev;
};

struct State {
  Vars vars;
  std::map<std::string, BashNode, std::less<>> functions;
  std::optional<std::vector<Pieces>> positional;  // known inside calls of functions defined in the file
  std::vector<std::string> conditions;
  std::shared_ptr<const CommandNode> commands;
  bool exited = false;    // `exit`
  bool returned = false;  // `return` in a function or a sourced file
  int depth = 0;          // function calls and sourced files in progress
};

using States = std::vector<State>;

// Words as the shell builds them: pieces appended to the current word; unquoted expansions split at blanks.
class Fields {
 public:
  void append(ShellPiece piece);
  void append_split(const Pieces& value);  // an unquoted expansion
  void break_word() { open_ = false; }
  // A quoted "$@" / "${A[@]}" with no elements still ends the word it is in, but makes none by itself.
  void mark_word() { ensure_word(); }
  // Assignment values and case words are not split, whatever their quoting.
  void no_split() { split_ = false; }
  std::vector<Pieces> take() { return std::move(words_); }

 private:
  void ensure_word();
  std::vector<Pieces> words_;
  bool open_ = false;
  bool split_ = true;
};

Pieces concat(const std::vector<Pieces>& words, const std::string& separator);
std::string text_of(const Pieces& p);
bool all_known(const Pieces& p);
ShellWord to_word(const Pieces& p);
ShellPiece unknown_piece(std::string text, Location loc, std::string why);
std::optional<int64_t> parse_shell_int(const std::string& text);
ShellPiece literal_piece(std::string text, Location loc, Provenance provenance = Provenance::literal);
// bash's pattern matching (case arms, [[ == ]], ${X#pattern}), with extglob.
bool glob_match(const std::string& pattern, const std::string& text);

State join_states(std::vector<State> states, const std::string& where);

class Interpreter {
 public:
  Interpreter(const ShellOptions& options, ShellRun& out) : options_(options), out_(out) {}

  void run(const SourceText& script);

  // shell_interpreter.cpp
  States exec_block(BashNode parent, uint32_t from, uint32_t to, States in);
  States exec_statement(BashNode n, State s);

  // shell_expand.cpp
  std::vector<Pieces> expand_argument(BashNode n, State& s);  // with word splitting: 0..n words
  Pieces expand_value(BashNode n, State& s);                  // no splitting (assignments, case values)
  void expand_into(BashNode n, State& s, Fields& out, bool quoted);
  void expand_parameter(BashNode n, State& s, Fields& out, bool quoted);
  std::optional<Pieces> path_substitution(BashNode n, State& s);
  std::vector<Pieces> lookup(const std::string& name, const Location& loc, State& s, bool* set);

  // shell_conditions.cpp
  std::optional<int64_t> arithmetic(BashNode n, State& s);
  std::optional<bool> condition(BashNode n, State& s);

  // Inside an eval'd or `bash -c` string every place is the command's own (the string's words have none).
  Location loc(BashNode n) const { return origin_.known() ? origin_ : Location{file_, n.line(), n.col()}; }
  void skip(BashNode n, std::string what);

 private:
  States exec_if(BashNode n, State s);
  States exec_case(BashNode n, State s);
  States exec_loop(BashNode n, State s);
  States exec_for(BashNode n, State s);
  States exec_list(BashNode n, State s);
  States exec_command(BashNode n, State s, const std::vector<BashNode>& extra);
  States exec_words(const std::vector<Pieces>& words, std::vector<std::pair<std::string, Pieces>> prefix,
                    BashNode n, State s);
  States exec_script_text(const std::string& text, const std::string& name, BashNode at, State s);
  States exec_source(const std::vector<Pieces>& words, BashNode n, State s);
  void assign(BashNode assignment, State& s, bool exported);
  void declare(BashNode n, State& s);
  States fork_on(BashNode cond_node, State s, std::optional<bool> truth, bool* taken_true, State* other);
  void record(State& s, std::vector<Pieces> words, const std::vector<std::pair<std::string, Pieces>>& prefix,
              BashNode n);
  States bound(States produced, BashNode n);

  const ShellOptions& options_;
  ShellRun& out_;
  std::string file_;
  std::string dir_;  // the script's folder, for `source`
  Location origin_;
  size_t steps_ = 0;  // statements run: a script that would loop for long is cut off, not followed
  int nesting_ = 0;   // syntax nesting being walked (statements, words, arithmetic), bounded to keep the stack small
  bool defaults_decide_ = false;  // conditions decided by defaults too (exec_if: which branch a default takes)
  // On the branch of `decider` that its variables' defaults do not take, the environment set them otherwise:
  // those defaults become unknown there.
  void forget_refuted_defaults(BashNode decider, State& s, const std::string& why);

 public:
  // Walking a construct nested deeper than kMaxNesting is refused (the construct is skipped or unknown): the walk
  // is recursive, and a crafted script could otherwise exhaust the stack.
  static constexpr int kMaxNesting = 100;
  struct Nested {
    explicit Nested(Interpreter& i) : in(i) { ++in.nesting_; }
    ~Nested() { --in.nesting_; }
    bool too_deep() const { return in.nesting_ > kMaxNesting; }
    Interpreter& in;
  };

 private:
  std::string script_name_;  // $0 and BASH_SOURCE
  States finished_;  // paths ended by `exit`
  // The files being read, outermost first: their resolved paths (a cycle is found whatever the spelling) and
  // their names as given, for the message.
  struct Reading {
    std::string identity, name;
  };
  std::vector<Reading> source_stack_;
  const Reading* reading(const std::string& path) const;
  std::vector<std::unique_ptr<std::string>> texts_;  // texts of eval'd strings, alive while their trees are
  std::vector<ShellWord> outer_;  // the command whose `bash -c` is running
  std::vector<std::unique_ptr<BashTree>> trees_;      // sourced files' trees (function bodies point into them)
};

}  // namespace hcp::lint::shell
