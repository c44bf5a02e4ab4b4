// Which files a directory argument stands for, and in which order: the walk lists directories on several
// threads, and what it finds must not depend on how many.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "hcp/logscan/scanner.hpp"

namespace hcp::logscan {
namespace {

namespace fs = std::filesystem;

class Tree : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "hcp-walk-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    root_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    fs::permissions(root_ / "logs" / "locked", fs::perms::owner_all, ec);
    fs::remove_all(root_, ec);
  }
  void touch(const fs::path& rel) {
    fs::create_directories((root_ / rel).parent_path());
    std::ofstream(root_ / rel) << "x\n";
  }
  std::vector<std::string> listed(unsigned jobs, std::vector<ScanInput>* all = nullptr) {
    std::vector<ScanInput> in = expand_inputs({(root_ / "logs").string()}, jobs);
    std::vector<std::string> out;
    for (const ScanInput& i : in) out.push_back(fs::path(i.path).lexically_relative(root_ / "logs").string());
    if (all) *all = in;
    return out;
  }
  fs::path root_;
};

TEST_F(Tree, FilesInNaturalOrderHiddenSkippedLinksOnlyInside) {
  touch("logs/attempt_10/rank_1.log");
  touch("logs/attempt_9/rank_10.log");
  touch("logs/attempt_9/rank_2.log");
  touch("logs/.hidden.log");
  touch("logs/.git/objects/x.log");
  touch("logs/attempt_9/.nfs0001");
  touch("outside/other.log");
  fs::create_symlink(root_ / "outside", root_ / "logs" / "linked_dir");
  fs::create_symlink(root_ / "outside" / "other.log", root_ / "logs" / "linked.log");
  fs::create_symlink(root_ / "outside" / "missing.log", root_ / "logs" / "dangling.log");
  ::mkfifo((root_ / "logs" / "pipe.log").c_str(), 0600);
  fs::create_symlink("/dev/null", root_ / "logs" / "null.log");
  fs::create_symlink("attempt_9/rank_2.log", root_ / "logs" / "inner.log");
  // A link to nothing, a FIFO and a link to a device are listed as unreadable, never left out in silence; a link
  // to a file is read only where it stays inside the directory named.
  const std::vector<std::string> want = {"attempt_9/rank_2.log", "attempt_9/rank_10.log", "attempt_10/rank_1.log",
                                         "dangling.log", "inner.log", "linked.log", "null.log", "pipe.log"};
  for (unsigned jobs : {1u, 4u}) {
    std::vector<ScanInput> all;
    EXPECT_EQ(listed(jobs, &all), want);
    ASSERT_EQ(all.size(), want.size());
    EXPECT_EQ(all[3].kind, ScanInput::Kind::error);
    EXPECT_EQ(all[3].error, "not read: a symbolic link to nothing readable: No such file or directory");
    EXPECT_EQ(all[4].kind, ScanInput::Kind::file);
    EXPECT_EQ(all[5].error, "not read: a symbolic link that leads out of the directory named");
    EXPECT_EQ(all[6].error, "not read: a symbolic link to a device");
    EXPECT_EQ(all[7].error, "not read: a FIFO");
  }
}

TEST_F(Tree, SameListForAnyNumberOfThreads) {
  // Wide and deep, as torchrun's attempt_N/<rank>/ directories of a large job.
  for (int a = 0; a < 3; ++a) {
    for (int r = 0; r < 150; ++r) touch("logs/attempt_" + std::to_string(a) + "/" + std::to_string(r) + "/stdout.log");
  }
  touch("logs/deep/a/b/c/d/e/f/g/last.log");
  const std::vector<std::string> one = listed(1);
  ASSERT_EQ(one.size(), 451u);
  EXPECT_EQ(one[1], "attempt_0/1/stdout.log");
  EXPECT_EQ(one[10], "attempt_0/10/stdout.log");  // after 2..9
  EXPECT_EQ(one.back(), "deep/a/b/c/d/e/f/g/last.log");
  for (unsigned jobs : {2u, 3u, 16u, 64u}) EXPECT_EQ(listed(jobs), one) << jobs << " threads";
}

TEST_F(Tree, EmptyDirectoryAndUnlistableSubdirectoryAreErrorsNotSilence) {
  fs::create_directories(root_ / "logs" / "empty");
  std::vector<ScanInput> in;
  EXPECT_EQ(listed(2, &in), std::vector<std::string>{"."});
  EXPECT_EQ(in[0].kind, ScanInput::Kind::error);
  EXPECT_EQ(in[0].error, "directory holds no files");

  touch("logs/a.log");
  touch("logs/locked/b.log");
  fs::permissions(root_ / "logs" / "locked", fs::perms::none);
  auto check = [&] {
    EXPECT_EQ(listed(2, &in), (std::vector<std::string>{"a.log", "locked"}));
    ASSERT_EQ(in.size(), 2u);
    EXPECT_EQ(in[0].kind, ScanInput::Kind::file);
    EXPECT_EQ(in[1].kind, ScanInput::Kind::error);
    EXPECT_EQ(in[1].error, "cannot list directory: Permission denied");
  };
  if (::geteuid() != 0) return check();
  // Root lists any directory: the walk runs in a child that dropped to nobody.
  fs::permissions(root_, fs::perms::owner_all | fs::perms::others_read | fs::perms::others_exec);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(3);
    check();
    ::_exit(::testing::Test::HasFailure() ? 1 : 0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the walk as nobody (3: could not drop to nobody)";
}

}  // namespace
}  // namespace hcp::logscan
