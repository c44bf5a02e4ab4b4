// tree-sitter's grammars (bash for launch scripts, Python for Bridge and NeMo 2 configs) behind a small C++ face:
// parse a text once, then walk its nodes by type and field with their text and position. Nodes are views into the
// tree and valid while the SyntaxTree lives.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include <tree_sitter/api.h>

namespace hcp::lint {

class SyntaxNode {
 public:
  SyntaxNode() = default;
  SyntaxNode(TSNode node, std::string_view text) : node_(node), text_(text) {}

  bool null() const { return ts_node_is_null(node_); }
  std::string_view type() const { return ts_node_type(node_); }
  bool named() const { return ts_node_is_named(node_); }
  bool is(std::string_view t) const { return !null() && type() == t; }
  bool has_error() const { return ts_node_has_error(node_); }
  bool missing() const { return ts_node_is_missing(node_); }
  std::string_view text() const;
  uint32_t start_byte() const { return ts_node_start_byte(node_); }
  uint32_t end_byte() const { return ts_node_end_byte(node_); }
  // 1-based line; column in bytes from 1.
  int line() const { return static_cast<int>(ts_node_start_point(node_).row) + 1; }
  int col() const { return static_cast<int>(ts_node_start_point(node_).column) + 1; }

  uint32_t child_count() const { return ts_node_child_count(node_); }
  SyntaxNode child(uint32_t i) const { return {ts_node_child(node_, i), text_}; }
  uint32_t named_child_count() const { return ts_node_named_child_count(node_); }
  SyntaxNode named_child(uint32_t i) const { return {ts_node_named_child(node_, i), text_}; }
  SyntaxNode field(std::string_view name) const {
    return {ts_node_child_by_field_name(node_, name.data(), static_cast<uint32_t>(name.size())), text_};
  }
  // The field name of child i, or empty.
  std::string_view field_of_child(uint32_t i) const;

 private:
  TSNode node_{};
  std::string_view text_;
};

enum class Grammar { bash, python };

class SyntaxTree {
 public:
  // Parses `text`, which must outlive the tree. Never fails: syntax errors become ERROR nodes.
  SyntaxTree(std::string_view text, Grammar grammar);
  SyntaxNode root() const;

 private:
  struct Free {
    void operator()(TSTree* t) const { ts_tree_delete(t); }
  };
  std::string_view text_;
  std::unique_ptr<TSTree, Free> tree_;
};

// The shell model's names for them.
using BashNode = SyntaxNode;
class BashTree : public SyntaxTree {
 public:
  explicit BashTree(std::string_view text) : SyntaxTree(text, Grammar::bash) {}
};

}  // namespace hcp::lint
