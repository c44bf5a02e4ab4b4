// printable(): what every text, GitHub and HTML renderer passes input text through (issue 54, item 6).
#include <gtest/gtest.h>

#include "hcp/printable.hpp"
#include "hcp/workflow_command.hpp"

namespace hcp {
namespace {

TEST(Printable, ControlCharactersBecomeVisibleEscapes) {
  EXPECT_EQ(printable("plain text, tabs\tand\nnewlines"), "plain text, tabs\tand\nnewlines");
  EXPECT_EQ(printable("\x1b]0;owned\x07title"), "\\x1b]0;owned\\x07title");  // OSC: retitles a terminal
  EXPECT_EQ(printable("\x1b[2Jclear"), "\\x1b[2Jclear");
  EXPECT_EQ(printable("del\x7f nul"), "del\\x7f nul");
  EXPECT_EQ(printable(std::string("a\0b", 3)), "a\\x00b");
  EXPECT_EQ(printable("\xc2\x9b" "31m"), "\\u009b31m");  // U+009B: an 8-bit CSI in UTF-8
  EXPECT_EQ(printable("\x9b" "31m"), "\\x9b31m");        // the raw byte: CSI to a Latin-1 terminal
  EXPECT_EQ(printable("\xff\xfe"), "\\xff\\xfe");
  EXPECT_EQ(printable("\xe0\x80\x80"), "\\xe0\\x80\\x80");  // overlong form
  EXPECT_EQ(printable("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // a surrogate
  EXPECT_EQ(printable("caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x9a\x80 \xc2\xa0"), "caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x9a\x80 \xc2\xa0");
  EXPECT_EQ(printable("cut \xe2\x86"), "cut \\xe2\\x86");
}

TEST(Printable, OneLineAndCaretAlignedForms) {
  EXPECT_EQ(printable_line("value\nfake: error"), "value\\x0afake: error");
  EXPECT_EQ(printable_line("a\tb"), "a\tb");
  // One space per byte escaped, tabs too, so a caret under byte column n still points at it.
  EXPECT_EQ(printable_aligned("a\tb\x1b[0m\xc2\x9bz"), "a b [0m  z");
  EXPECT_EQ(printable_aligned("x = \"caf\xc3\xa9\""), "x = \"caf\xc3\xa9\"");
}

TEST(Printable, WorkflowCommandsEscapeAfterwards) {
  EXPECT_EQ(workflow_data("50%\r\nnext\x1b[2J"), "50%25\\x0d%0Anext\\x1b[2J");  // CR shown, LF kept as GitHub wants
  EXPECT_EQ(workflow_property("a:b,c\x07"), "a%3Ab%2Cc\\x07");
}

}  // namespace
}  // namespace hcp
