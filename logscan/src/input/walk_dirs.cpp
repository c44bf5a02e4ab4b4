// Directories are read with getdents64 on a descriptor opened with O_DIRECTORY (four system calls per directory;
// opendir and std::filesystem's iterator made seven), and the file type comes from d_type where the file system
// gives one, so a file costs no stat.
#include "walk_dirs.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>

namespace hcp::logscan {
namespace {

enum class Type { skip, file, directory, special };

// What a path that is neither a file nor a directory is, for the entry that says why it was not read.
const char* special_kind(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// What an entry whose d_type did not say is: a directory only if it is one itself (links to directories are not
// followed, as in std::filesystem's recursive iterator), a file if it is one or links to one inside `root` (the
// resolved directory named); anything else (FIFOs, devices, sockets, links to them, to nothing or out of `root`)
// is special, with `why`.
Type type_by_stat(int dir_fd, const char* name, const std::string& path, const std::string& root,
                  std::string* why) {
  struct stat st {};
  if (::fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
    *why = std::string("cannot stat: ") + std::strerror(errno);
    return Type::special;
  }
  if (S_ISDIR(st.st_mode)) return Type::directory;
  if (S_ISREG(st.st_mode)) return Type::file;
  if (!S_ISLNK(st.st_mode)) {
    *why = special_kind(st.st_mode);
  } else if (::fstatat(dir_fd, name, &st, 0) != 0) {
    *why = std::string("a symbolic link to nothing readable: ") + std::strerror(errno);
  } else if (S_ISREG(st.st_mode)) {
    // Only where it stays inside the directory named: a link must not make a CI job read the runner's files
    // (hcp-lint and `source` follow the same rule).
    char target[PATH_MAX];
    if (::realpath(path.c_str(), target) && std::string(target).rfind(root + "/", 0) == 0) return Type::file;
    *why = "a symbolic link that leads out of the directory named";
    return Type::special;
  } else if (S_ISDIR(st.st_mode)) {
    return Type::skip;
  } else {
    *why = std::string("a symbolic link to ") + special_kind(st.st_mode);
  }
  return Type::special;
}

std::string join(const std::string& dir, const char* name) {
  std::string out = dir;
  if (out.empty() || out.back() != '/') out += '/';
  out += name;
  return out;
}

// Lists one directory: its files into `files`, its subdirectories into `dirs`; false with errno set if it could
// not be opened or read.
bool list_one(const std::string& dir, const std::string& root, std::vector<WalkEntry>& files,
              std::vector<std::string>& dirs) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return false;
  alignas(8) char buf[32768];
  for (;;) {
    const ssize_t n = ::getdents64(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int saved = errno;
      ::close(fd);
      errno = saved;
      return false;
    }
    if (n == 0) break;
    for (ssize_t at = 0; at < n;) {
      const auto* e = reinterpret_cast<const struct dirent64*>(buf + at);
      at += e->d_reclen;
      if (e->d_name[0] == '.') continue;  // ".", ".." and hidden names
      std::string why;
      Type type = e->d_type == DT_DIR ? Type::directory : e->d_type == DT_REG ? Type::file : Type::special;
      if (type == Type::special) type = type_by_stat(fd, e->d_name, join(dir, e->d_name), root, &why);
      if (type == Type::file) files.push_back({join(dir, e->d_name), ""});
      if (type == Type::directory) dirs.push_back(join(dir, e->d_name));
      // Listed, never left out in silence: a FIFO or a link to /dev/zero in a log directory is not a log.
      if (type == Type::special) files.push_back({join(dir, e->d_name), "not read: " + why});
    }
  }
  ::close(fd);
  return true;
}

}  // namespace

std::vector<WalkEntry> walk_directory(const std::string& root, unsigned jobs) {
  std::vector<WalkEntry> out;
  char resolved_root[PATH_MAX];
  const std::string real_root = ::realpath(root.c_str(), resolved_root) ? resolved_root : root;
  std::vector<std::string> pending{root};
  std::mutex mu;
  std::condition_variable cv;
  unsigned busy = 0;  // threads listing a directory: the walk ends when none is and nothing is pending
  auto work = [&] {
    std::vector<WalkEntry> files;
    std::vector<std::string> dirs;
    std::unique_lock lock(mu);
    for (;;) {
      cv.wait(lock, [&] { return !pending.empty() || busy == 0; });
      if (pending.empty()) break;
      const std::string dir = std::move(pending.back());
      pending.pop_back();
      ++busy;
      lock.unlock();
      files.clear();
      dirs.clear();
      const bool listed = list_one(dir, real_root, files, dirs);
      const std::string error = listed ? "" : std::string("cannot list directory: ") + std::strerror(errno);
      lock.lock();
      --busy;
      if (!listed) out.push_back({dir, error});
      out.insert(out.end(), std::make_move_iterator(files.begin()), std::make_move_iterator(files.end()));
      pending.insert(pending.end(), std::make_move_iterator(dirs.begin()), std::make_move_iterator(dirs.end()));
      if (!dirs.empty() || (busy == 0 && pending.empty())) cv.notify_all();
    }
  };
  std::vector<std::thread> helpers;
  // Listing is system calls on one file system: more than a few threads only contend in the kernel.
  constexpr unsigned kMaxThreads = 16;
  for (unsigned i = 1; i < std::min(std::max(1u, jobs), kMaxThreads); ++i) helpers.emplace_back(work);
  work();
  for (std::thread& t : helpers) t.join();
  return out;
}

}  // namespace hcp::logscan
