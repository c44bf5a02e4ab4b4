#include "syntax_tree.hpp"

#include "hcp/error.hpp"

extern "C" const TSLanguage* tree_sitter_bash(void);
extern "C" const TSLanguage* tree_sitter_python(void);

namespace hcp::lint {

std::string_view SyntaxNode::text() const {
  const uint32_t b = start_byte(), e = end_byte();
  if (b > e || e > text_.size()) return {};
  return text_.substr(b, e - b);
}

std::string_view SyntaxNode::field_of_child(uint32_t i) const {
  const char* name = ts_node_field_name_for_child(node_, i);
  return name ? std::string_view(name) : std::string_view();
}

SyntaxTree::SyntaxTree(std::string_view text, Grammar grammar) : text_(text) {
  struct ParserFree {
    void operator()(TSParser* p) const { ts_parser_delete(p); }
  };
  // One parser per thread, kept: setting one up costs about as much as parsing a launch script. A parser serves
  // one parse at a time, and a parse never starts another on the same thread.
  thread_local std::unique_ptr<TSParser, ParserFree> parsers[2];
  std::unique_ptr<TSParser, ParserFree>& parser = parsers[grammar == Grammar::bash ? 0 : 1];
  if (!parser) {
    parser.reset(ts_parser_new());
    const TSLanguage* language = grammar == Grammar::bash ? tree_sitter_bash() : tree_sitter_python();
    if (!parser || !ts_parser_set_language(parser.get(), language)) {
      parser.reset();
      throw Error(Errc::internal, std::string("the ") + (grammar == Grammar::bash ? "bash" : "Python") +
                                      " grammar could not be loaded (tree-sitter ABI mismatch)");
    }
  }
  if (text.size() > UINT32_MAX) throw Error(Errc::invalid_argument, "file too large to parse");
  tree_.reset(ts_parser_parse_string(parser.get(), nullptr, text.data(), static_cast<uint32_t>(text.size())));
  ts_parser_reset(parser.get());
  if (!tree_) throw Error(Errc::internal, "the parser returned no tree");
}

SyntaxNode SyntaxTree::root() const { return {ts_tree_root_node(tree_.get()), text_}; }

}  // namespace hcp::lint
