#include "mapped_window.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <mutex>

namespace hcp::logscan {
namespace {

// The windows mapped now, for the signal handler: a fixed table of lock-free atomics, since a handler may not
// lock or allocate. A window that finds no free slot is not mapped (its caller reads the file instead).
struct Slot {
  std::atomic<bool> claimed{false};
  std::atomic<uintptr_t> begin{0};  // 0 while the slot holds no mapping
  std::atomic<uintptr_t> end{0};
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

void on_sigbus(int sig, siginfo_t* info, void* context) {
  const auto addr = reinterpret_cast<uintptr_t>(info->si_addr);
  // si_addr means an address only for a fault the kernel raised (si_code > 0), not for kill() or raise().
  for (Slot& s : g_slots) {
    if (info->si_code <= 0) break;
    const uintptr_t begin = s.begin.load(std::memory_order_acquire);
    if (begin == 0 || addr < begin) continue;
    const uintptr_t end = s.end.load(std::memory_order_relaxed);
    if (addr >= end) continue;
    // Zero pages over the rest of the window: the read resumes, and no page of it can fault again.
    const uintptr_t page = addr & ~(g_page - 1);
    const int saved = errno;
    void* zeros = mmap(reinterpret_cast<void*>(page), end - page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
                       -1, 0);
    errno = saved;
    if (zeros == MAP_FAILED) break;
    s.shrank.store(true, std::memory_order_relaxed);
    return;
  }
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
