#include "bash_syntax.hpp"

#include "hcp/error.hpp"

extern "C" const TSLanguage* tree_sitter_bash(void);

namespace hcp::lint {

std::string_view BashNode::text() const {
  const uint32_t b = start_byte(), e = end_byte();
  if (b > e || e > text_.size()) return {};
  return text_.substr(b, e - b);
}

std::string_view BashNode::field_of_child(uint32_t i) const {
  const char* name = ts_node_field_name_for_child(node_, i);
  return name ? std::string_view(name) : std::string_view();
}

BashTree::BashTree(std::string_view text) : text_(text) {
  struct ParserFree {
    void operator()(TSParser* p) const { ts_parser_delete(p); }
  };
  // One parser per thread, kept: setting one up costs about as much as parsing a launch script. A parser serves
  // one parse at a time, and a parse never starts another on the same thread.
  thread_local std::unique_ptr<TSParser, ParserFree> parser;
  if (!parser) {
    parser.reset(ts_parser_new());
    if (!parser || !ts_parser_set_language(parser.get(), tree_sitter_bash())) {
      parser.reset();
      throw Error(Errc::internal, "the bash grammar could not be loaded (tree-sitter ABI mismatch)");
    }
  }
  if (text.size() > UINT32_MAX) throw Error(Errc::invalid_argument, "script too large to parse");
  tree_.reset(ts_parser_parse_string(parser.get(), nullptr, text.data(), static_cast<uint32_t>(text.size())));
  ts_parser_reset(parser.get());
  if (!tree_) throw Error(Errc::internal, "the bash parser returned no tree");
}

BashNode BashTree::root() const { return {ts_tree_root_node(tree_.get()), text_}; }

}  // namespace hcp::lint
