// Which files a directory's walk reads (issue 51, item 6): .gitignore inside a repository, .ignore anywhere,
// exclude patterns relative to their base, force-exclude for named files; and git's pattern rules one by one.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "../../lint/src/walk/ignore_file.hpp"
#include "hcp/error.hpp"
#include "hcp/lint/input_walk.hpp"

namespace hcp::lint {
namespace {
namespace fs = std::filesystem;
using V = IgnoreFile::Verdict;

TEST(IgnoreFile, NamesWithoutSlashMatchAtAnyDepth) {
  const IgnoreFile f("/r", "# comment\n\n*.log\nbuild\n");
  EXPECT_EQ(f.match("a.log", false), V::ignored);
  EXPECT_EQ(f.match("x/y/a.log", false), V::ignored);
  EXPECT_EQ(f.match("x/build", true), V::ignored);
  EXPECT_EQ(f.match("x/build", false), V::ignored);
  EXPECT_EQ(f.match("x/build.sh", false), V::none);
  EXPECT_EQ(f.match("# comment", false), V::none);
}

TEST(IgnoreFile, SlashAnchorsAndTrailingSlashMeansDirectory) {
  const IgnoreFile f("/r", "/top.sh\nsub/run.sh\nout/\n");
  EXPECT_EQ(f.match("top.sh", false), V::ignored);
  EXPECT_EQ(f.match("x/top.sh", false), V::none);
  EXPECT_EQ(f.match("sub/run.sh", false), V::ignored);
  EXPECT_EQ(f.match("x/sub/run.sh", false), V::none);
  EXPECT_EQ(f.match("a/out", true), V::ignored);
  EXPECT_EQ(f.match("a/out", false), V::none);  // a file named out
}

TEST(IgnoreFile, StarsStayInASegmentAndDoubleStarsSpanThem) {
  const IgnoreFile f("/r", "docs/*.sh\na/**/b.yaml\nlogs/**\n**/gen/*.py\n");
  EXPECT_EQ(f.match("docs/x.sh", false), V::ignored);
  EXPECT_EQ(f.match("docs/sub/x.sh", false), V::none);
  EXPECT_EQ(f.match("a/b.yaml", false), V::ignored);
  EXPECT_EQ(f.match("a/x/y/b.yaml", false), V::ignored);
  EXPECT_EQ(f.match("logs/x/y.sh", false), V::ignored);
  EXPECT_EQ(f.match("logs", true), V::none);  // "logs/**" is what is inside logs
  EXPECT_EQ(f.match("p/q/gen/m.py", false), V::ignored);
}

TEST(IgnoreFile, LastMatchWinsAndBangKeeps) {
  const IgnoreFile f("/r", "*.yaml\n!keep.yaml\n\\!odd.yaml\n");
  EXPECT_EQ(f.match("x.yaml", false), V::ignored);
  EXPECT_EQ(f.match("d/keep.yaml", false), V::kept);
  EXPECT_EQ(f.match("!odd.yaml", false), V::ignored);
}

TEST(IgnoreFile, ManyDoubleStarsStayFast) {
  std::string hostile;
  for (int i = 0; i < 2000; ++i) hostile += "**/a/";
  hostile += "b\n";
  const IgnoreFile f("/r", hostile);
  std::string path;
  for (int i = 0; i < 200; ++i) path += "a/";
  EXPECT_EQ(f.match(path + "c", false), V::none);
}

TEST(IgnoreFile, TooManyPatternsIsAnErrorNamingTheLine) {
  std::string many;
  for (size_t i = 0; i <= IgnoreFile::kMaxPatterns; ++i) many += "p" + std::to_string(i) + "\n";
  try {
    IgnoreFile f("/r", many, "repo/.gitignore");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("repo/.gitignore:" + std::to_string(IgnoreFile::kMaxPatterns + 1) + ":"),
              std::string::npos)
        << e.what();
  }
  std::string enough;
  for (size_t i = 0; i < IgnoreFile::kMaxPatterns; ++i) enough += "p" + std::to_string(i) + "\n# comment\n";
  EXPECT_EQ(IgnoreFile("/r", enough).match("p7", false), IgnoreFile::Verdict::ignored);
}

class Walk : public ::testing::Test {
 protected:
  void SetUp() override {
    top_ = fs::temp_directory_path() / ("hcp-walk-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(top_);
    fs::create_directories(top_);
  }
  void TearDown() override { fs::remove_all(top_); }
  void write(const std::string& rel, const std::string& text = "x: 1\n") {
    fs::create_directories((top_ / rel).parent_path());
    std::ofstream(top_ / rel) << text;
  }
  std::vector<std::string> found(const std::string& dir, const WalkOptions& o = {}) {
    std::vector<std::string> out;
    for (const CollectedInput& c : collect_inputs({(top_ / dir).string()}, o).inputs)
      out.push_back(fs::path(c.path).lexically_relative(top_).generic_string());
    return out;
  }
  fs::path top_;
};

TEST_F(Walk, GitignoreCountsOnlyInsideARepository) {
  for (fs::path d = top_; d.has_relative_path(); d = d.parent_path())
    if (fs::exists(d / ".git")) GTEST_SKIP() << "the temporary directory is inside a git repository: " << d;
  write("p/.gitignore", "gen/\n*.args\n");
  write("p/gen/a.yaml");
  write("p/a.args");
  write("p/run.sh");
  EXPECT_EQ(found("p"), (std::vector<std::string>{"p/a.args", "p/gen/a.yaml", "p/run.sh"}));
  fs::create_directories(top_ / "p" / ".git" / "info");
  EXPECT_EQ(found("p"), (std::vector<std::string>{"p/run.sh"}));
  WalkOptions no_ignore;
  no_ignore.respect_ignore_files = false;
  EXPECT_EQ(found("p", no_ignore).size(), 3u);
  // .git/info/exclude, and the repository's files above the directory walked.
  write("p/.git/info/exclude", "run.sh\n");
  write("p/sub/run.sh");
  write("p/sub/b.args");
  EXPECT_EQ(found("p/sub"), (std::vector<std::string>{}));
  // A deeper file re-includes what a higher one leaves out.
  write("p/sub/.gitignore", "!b.args\n");
  EXPECT_EQ(found("p/sub"), (std::vector<std::string>{"p/sub/b.args"}));
}

TEST_F(Walk, DotIgnoreCountsEverywhereAndOverGitignore) {
  write("q/.ignore", "old/\n");
  write("q/old/a.sh");
  write("q/new/a.sh");
  EXPECT_EQ(found("q"), (std::vector<std::string>{"q/new/a.sh"}));
  fs::create_directories(top_ / "q" / ".git");
  write("q/.gitignore", "new/\n");
  write("q/new/.ignore", "!a.sh\n");
  EXPECT_EQ(found("q"), (std::vector<std::string>{}));  // new/ itself is ignored: nothing below it is seen
}

TEST_F(Walk, ExcludesAreRelativeToTheirBaseAndNamesMatchAnywhere) {
  write("r/examples/a.sh");
  write("r/deep/examples/b.sh");
  write("r/third_party/x/c.sh");
  write("r/build/d.sh");
  WalkOptions o;
  o.exclude = {{"examples/**", (top_ / "r").string()}, {"third_party", (top_ / "r").string()}};
  EXPECT_EQ(found("r", o), (std::vector<std::string>{"r/build/d.sh", "r/deep/examples/b.sh"}));
  for (const std::string& g : default_excludes()) o.exclude.push_back({g, (top_ / "r").string()});
  EXPECT_EQ(found("r", o), (std::vector<std::string>{"r/deep/examples/b.sh"}));
  // The same patterns from a walk that starts below the base.
  EXPECT_EQ(found("r/deep", o), (std::vector<std::string>{"r/deep/examples/b.sh"}));
}

TEST_F(Walk, ForceExcludeAppliesToNamedFiles) {
  write("s/skip/a.sh");
  WalkOptions o;
  o.exclude = {{"skip", (top_ / "s").string()}};
  const std::string named = (top_ / "s/skip/a.sh").string();
  EXPECT_EQ(collect_inputs({named}, o).inputs.size(), 1u);
  o.force_exclude = true;
  EXPECT_EQ(collect_inputs({named}, o).inputs.size(), 0u);
  // A name-only pattern does not reach above its base: /tmp/.../skip is not "inside" a base below it.
  o.exclude = {{"s", (top_ / "s").string()}};
  EXPECT_EQ(collect_inputs({named}, o).inputs.size(), 1u);
}

TEST_F(Walk, CountsTheDirectoriesNamed) {
  write("t/a.sh");
  const CollectedInputs c = collect_inputs({(top_ / "t").string(), (top_ / "t/a.sh").string()});
  EXPECT_EQ(c.directories_named, 1u);
  EXPECT_EQ(c.inputs.size(), 2u);
}

}  // namespace
}  // namespace hcp::lint
