#include "mapped_window.hpp"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <mutex>

namespace hcp::logscan {
namespace {

// The windows mapped now, for the signal handler: a fixed table of lock-free atomics, since a handler may not
// lock or allocate. A window that finds no free slot is not mapped (scan_mapped then reads a file whose first
// window it is with read(), and reports a later one as an input error).
struct Slot {
  std::atomic<bool> claimed{false};
  std::atomic<uintptr_t> begin{0};  // 0 while the slot holds no mapping
  std::atomic<uintptr_t> end{0};
  std::atomic<int> fd{-1};           // the file, and the offset of `begin` in it (a multiple of the page size)
  std::atomic<uint64_t> offset{0};
  std::atomic<bool> shrank{false};
};
constexpr int kSlots = 64;
Slot g_slots[kSlots];
struct sigaction g_previous {};
uintptr_t g_page = 4096;
bool g_installed = false;

// A SIGBUS that is not ours, passed on to what was there before.
void forward(int sig, siginfo_t* info, void* context) {
  if (g_previous.sa_flags & SA_SIGINFO) {
    g_previous.sa_sigaction(sig, info, context);
  } else if (g_previous.sa_handler == SIG_DFL || g_previous.sa_handler == SIG_IGN) {
    // The default action is restored; the faulting read runs again on return and ends the process with SIGBUS,
    // as it would have without this handler (ignoring a fault is not possible: the read would loop).
    signal(SIGBUS, SIG_DFL);
  } else {
    g_previous.sa_handler(sig);
  }
}

// The first page of a window past the file's end, by fstat (async-signal-safe); `page` (the faulting one) when the
// size cannot be had or says otherwise.
uintptr_t first_page_past_end(const Slot& s, uintptr_t begin, uintptr_t page) {
  struct stat st {};
  if (fstat(s.fd.load(std::memory_order_relaxed), &st) != 0 || st.st_size < 0) return page;
  const auto size = static_cast<uint64_t>(st.st_size), offset = s.offset.load(std::memory_order_relaxed);
  if (size <= offset) return begin;
  const uint64_t in_window = (size - offset + g_page - 1) & ~uint64_t{g_page - 1};
  return in_window < page - begin ? begin + in_window : page;
}

// Whether a fault at addr was in a window, now backed by zero pages from the file's new end to the window's end:
// the read resumes, and no page of the window faults again whichever way it is read (the scanner looks for a
// chunk's last newline from its end).
bool zero_fill_window_at(uintptr_t addr) {
  for (Slot& s : g_slots) {
    const uintptr_t begin = s.begin.load(std::memory_order_acquire);
    if (begin == 0 || addr < begin) continue;
    const uintptr_t end = s.end.load(std::memory_order_relaxed);
    if (addr >= end) continue;
    const int saved = errno;
    const uintptr_t from = first_page_past_end(s, begin, addr & ~(g_page - 1));
    void* zeros = mmap(reinterpret_cast<void*>(from), end - from, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
                       -1, 0);
    errno = saved;
    if (zeros == MAP_FAILED) return false;
    s.shrank.store(true, std::memory_order_relaxed);
    return true;
  }
  return false;
}

void on_sigbus(int sig, siginfo_t* info, void* context) {
  // si_addr means an address only for a fault the kernel raised (si_code > 0), not for kill() or raise().
  if (info->si_code > 0 && zero_fill_window_at(reinterpret_cast<uintptr_t>(info->si_addr))) return;
  forward(sig, info, context);
}

// Once per process, and left in place: removing it while another thread maps a window would race.
void install() {
  const long page = sysconf(_SC_PAGESIZE);
  if (page > 0) g_page = static_cast<uintptr_t>(page);
  struct sigaction sa {};
  sa.sa_sigaction = on_sigbus;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
  g_installed = sigaction(SIGBUS, &sa, &g_previous) == 0;
}

}  // namespace

MappedWindow::MappedWindow(int fd, uint64_t offset, size_t len) {
  static std::once_flag once;
  std::call_once(once, install);
  if (!g_installed) {
    errno = ENOTSUP;
    return;
  }
  if (len == 0) {
    errno = EINVAL;
    return;
  }
  for (int i = 0; i < kSlots && slot_ < 0; ++i) {
    bool expected = false;
    if (g_slots[i].claimed.compare_exchange_strong(expected, true, std::memory_order_acquire)) slot_ = i;
  }
  if (slot_ < 0) {
    errno = EBUSY;
    return;
  }
  void* p = mmap(nullptr, len, PROT_READ, MAP_SHARED, fd, static_cast<off_t>(offset));
  if (p == MAP_FAILED) {
    const int e = errno;
    g_slots[slot_].claimed.store(false, std::memory_order_release);
    slot_ = -1;
    errno = e;
    return;
  }
  Slot& s = g_slots[slot_];
  s.shrank.store(false, std::memory_order_relaxed);
  s.end.store(reinterpret_cast<uintptr_t>(p) + len, std::memory_order_relaxed);
  s.fd.store(fd, std::memory_order_relaxed);
  s.offset.store(offset, std::memory_order_relaxed);
  s.begin.store(reinterpret_cast<uintptr_t>(p), std::memory_order_release);
  data_ = static_cast<const char*>(p);
  len_ = len;
}

MappedWindow::~MappedWindow() {
  if (!data_) return;
  Slot& s = g_slots[slot_];
  // Out of the table before the addresses are given back, so a later mapping there is never taken for this one.
  s.begin.store(0, std::memory_order_release);
  munmap(const_cast<char*>(data_), len_);
  s.claimed.store(false, std::memory_order_release);
}

bool MappedWindow::shrank() const {
  return slot_ >= 0 && g_slots[slot_].shrank.load(std::memory_order_relaxed);
}

}  // namespace hcp::logscan
