// The fibers of fibers.hpp: stacks, the switch between them, the scheduler, and what the sanitizers must be told.
//
// The switch on x86-64 is ten instructions of our own (below) rather than swapcontext: glibc's swapcontext saves and
// restores the signal mask with a system call on every switch, about 1 us each on the virtual machines CI runs on
// (measured: slower than the host-thread barriers it replaces), and a switch happens at every warp instruction of
// every emulated thread. Elsewhere, or with HCP_EMU_UCONTEXT defined (a test builds that too), it is swapcontext.
#include "fibers.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#define HCP_EMU_ASAN 1
#endif
#if defined(__SANITIZE_THREAD__)
#define HCP_EMU_TSAN 1
#endif
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HCP_EMU_ASAN 1
#endif
#if __has_feature(thread_sanitizer)
#define HCP_EMU_TSAN 1
#endif
#endif
#if defined(HCP_EMU_ASAN)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif
#if defined(HCP_EMU_TSAN)
#include <sanitizer/tsan_interface.h>
#endif

#if !defined(__x86_64__) && !defined(HCP_EMU_UCONTEXT)
#define HCP_EMU_UCONTEXT 1
#endif
#if defined(HCP_EMU_UCONTEXT)
#include <ucontext.h>
#endif

namespace hcp::emu {

void fault(const char* what) {
  std::fprintf(stderr, "block emulator: %s\n", what);
  std::abort();
}

namespace {

#if !defined(HCP_EMU_UCONTEXT)
// hcp_emu_switch_stack(&from_sp, to_sp): pushes the registers the SysV ABI makes callee-saved (and the SSE and x87
// control words), stores the stack pointer in *from_sp, then restores the same from to_sp's stack and returns
// there. A new fiber's stack is laid out as if it had switched away at the start of hcp_emu_fiber_start, which
// calls r13(r12) and never returns.
extern "C" void hcp_emu_switch_stack(void** from_sp, void* to_sp);
extern "C" void hcp_emu_fiber_start();
asm(R"(
  .text
  .p2align 4
  .globl hcp_emu_switch_stack
  .hidden hcp_emu_switch_stack
  .type hcp_emu_switch_stack, @function
hcp_emu_switch_stack:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $8, %rsp
  stmxcsr (%rsp)
  fnstcw 4(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  ldmxcsr (%rsp)
  fldcw 4(%rsp)
  addq $8, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size hcp_emu_switch_stack, .-hcp_emu_switch_stack

  .p2align 4
  .globl hcp_emu_fiber_start
  .hidden hcp_emu_fiber_start
  .type hcp_emu_fiber_start, @function
hcp_emu_fiber_start:
  movq %r12, %rdi
  callq *%r13
  ud2
  .size hcp_emu_fiber_start, .-hcp_emu_fiber_start
)");

struct Context {
  void* sp = nullptr;
};

// The stack as hcp_emu_switch_stack leaves it: control words, r15 .. rbp, then the return address. After the
// `ret` the stack pointer is 16-byte aligned, as the ABI wants it at a call instruction.
void prepare(Context& c, char* stack, size_t size, void (*fn)(void*), void* arg) {
  auto top = reinterpret_cast<uintptr_t>(stack + size) & ~uintptr_t{15};
  auto* slot = reinterpret_cast<uint64_t*>(top - 64);
  uint32_t mxcsr;
  uint16_t fcw;
  asm volatile("stmxcsr %0" : "=m"(mxcsr));
  asm volatile("fnstcw %0" : "=m"(fcw));
  slot[0] = mxcsr | uint64_t{fcw} << 32;
  slot[1] = 0;                                         // r15
  slot[2] = 0;                                         // r14
  slot[3] = reinterpret_cast<uint64_t>(fn);            // r13
  slot[4] = reinterpret_cast<uint64_t>(arg);           // r12
  slot[5] = 0;                                         // rbx
  slot[6] = 0;                                         // rbp
  slot[7] = reinterpret_cast<uint64_t>(&hcp_emu_fiber_start);
  c.sp = slot;
}

void switch_context(Context& from, Context& to) { hcp_emu_switch_stack(&from.sp, to.sp); }
#else
struct Context {
  ucontext_t uc;
};

// makecontext passes int arguments only: the function and its argument go through this thread's variables.
thread_local void (*starting_fn)(void*) = nullptr;
thread_local void* starting_arg = nullptr;

void start_trampoline() { starting_fn(starting_arg); }

void prepare(Context& c, char* stack, size_t size, void (*fn)(void*), void* arg) {
  if (getcontext(&c.uc) != 0) fault("getcontext failed");
  c.uc.uc_stack.ss_sp = stack;
  c.uc.uc_stack.ss_size = size;
  c.uc.uc_link = nullptr;
  makecontext(&c.uc, start_trampoline, 0);
  starting_fn = fn, starting_arg = arg;  // fibers start one at a time, each at its first switch
}

void switch_context(Context& from, Context& to) {
  if (swapcontext(&from.uc, &to.uc) != 0) fault("swapcontext failed");
}
#endif

// A fiber stack with a page below it that faults, so an overflow is a crash, not another fiber's stack.
// The kernels' deepest frames are a few KB (-fstack-usage); the sanitizers' redzones multiply that.
constexpr size_t kStackBytes = size_t{512} << 10;
[[maybe_unused]] constexpr size_t kFiberMainFrame = size_t{32} << 10;

struct Stack {
  char* base = nullptr;  // the guard page
  char* usable() const { return base + page(); }
  static size_t page() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }
#if defined(HCP_EMU_TSAN)
  void* tsan_fiber = nullptr;
#endif
};

// A host thread's stacks, kept between launches (mapping and faulting them in for each kernel launch would cost
// more than the kernels) and unmapped when the thread ends.
struct StackPool {
  std::vector<Stack> stacks;
  ~StackPool() {
    for (Stack& s : stacks) {
#if defined(HCP_EMU_TSAN)
      __tsan_destroy_fiber(s.tsan_fiber);
#endif
      munmap(s.base, Stack::page() + kStackBytes);
    }
  }
  void reserve(int count) {
    while (stacks.size() < static_cast<size_t>(count)) {
      void* p = mmap(nullptr, Stack::page() + kStackBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED) fault("cannot map a fiber stack");
      Stack s;
      s.base = static_cast<char*>(p);
      if (mprotect(s.base, Stack::page(), PROT_NONE) != 0) fault("cannot protect a fiber stack's guard page");
#if defined(HCP_EMU_TSAN)
      s.tsan_fiber = __tsan_create_fiber(0);
#endif
      stacks.push_back(s);
    }
  }
};
thread_local StackPool pool;

struct Run;

struct Fiber {
  Run* run = nullptr;
  int index = 0;
  bool started = false;
  bool done = false;
  Context context;
  Stack* stack = nullptr;
  void* asan_fake_stack = nullptr;  // ASan's frames of this fiber while it is switched out
};

struct Run {
  void (*entry)(void*, int) = nullptr;
  void* context = nullptr;
  std::vector<Fiber> fibers;
  Context host;  // the launching thread's own stack, where the scheduler runs
  int current = -1;
  unsigned long progress = 0;  // arrivals at barriers and fibers finished: what a deadlock lacks
  const void* host_stack_bottom = nullptr;
  size_t host_stack_size = 0;
#if defined(HCP_EMU_TSAN)
  void* host_tsan_fiber = nullptr;
#endif
};
thread_local Run* active = nullptr;

// The sanitizers' side of a switch: before it, which stack is next; after it, on the new stack, that it is done.
void before_switch([[maybe_unused]] void** fake_stack_save, [[maybe_unused]] const void* bottom,
                   [[maybe_unused]] size_t size, [[maybe_unused]] void* tsan_fiber) {
#if defined(HCP_EMU_ASAN)
  __sanitizer_start_switch_fiber(fake_stack_save, bottom, size);
#endif
#if defined(HCP_EMU_TSAN)
  __tsan_switch_to_fiber(tsan_fiber, 0);  // flags 0: the switch orders memory, as the barrier it stands for does
#endif
}
void after_switch([[maybe_unused]] void* fake_stack, [[maybe_unused]] const void** old_bottom,
                  [[maybe_unused]] size_t* old_size) {
#if defined(HCP_EMU_ASAN)
  __sanitizer_finish_switch_fiber(fake_stack, old_bottom, old_size);
#endif
}

void* host_tsan_fiber([[maybe_unused]] const Run& run) {
#if defined(HCP_EMU_TSAN)
  return run.host_tsan_fiber;
#else
  return nullptr;
#endif
}
void* fiber_tsan_fiber([[maybe_unused]] const Fiber& f) {
#if defined(HCP_EMU_TSAN)
  return f.stack->tsan_fiber;
#else
  return nullptr;
#endif
}

void fiber_main(void* arg) {
  Fiber& f = *static_cast<Fiber*>(arg);
  Run& run = *f.run;
  after_switch(nullptr, &run.host_stack_bottom, &run.host_stack_size);
  run.entry(run.context, f.index);
  f.done = true;
  ++run.progress;
  // The last switch away: a null save tells ASan this fiber's frames are gone.
  before_switch(nullptr, run.host_stack_bottom, run.host_stack_size, host_tsan_fiber(run));
  switch_context(f.context, run.host);
  fault("a finished fiber was resumed");
}

void yield_to_host() {
  Run& run = *active;
  Fiber& f = run.fibers[static_cast<size_t>(run.current)];
  before_switch(&f.asan_fake_stack, run.host_stack_bottom, run.host_stack_size, host_tsan_fiber(run));
  switch_context(f.context, run.host);
  after_switch(f.asan_fake_stack, &run.host_stack_bottom, &run.host_stack_size);
}

}  // namespace

void run_fibers(int count, void (*entry)(void* context, int index), void* context) {
  if (active != nullptr) fault("run_fibers called from a fiber");
  if (count <= 0) return;
  pool.reserve(count);
  Run run;
  run.entry = entry, run.context = context;
  run.fibers.resize(static_cast<size_t>(count));
#if defined(HCP_EMU_TSAN)
  run.host_tsan_fiber = __tsan_get_current_fiber();
#endif
  for (int i = 0; i < count; ++i) {
    Fiber& f = run.fibers[static_cast<size_t>(i)];
    f.run = &run, f.index = i, f.stack = &pool.stacks[static_cast<size_t>(i)];
  }
  active = &run;
  int live = count;
  bool up = true;
  while (live > 0) {
    const unsigned long before = run.progress;
    for (int k = 0; k < count; ++k) {
      const int i = up ? k : count - 1 - k;
      Fiber& f = run.fibers[static_cast<size_t>(i)];
      if (f.done) continue;
      // Prepared at its first turn: the ucontext form hands the entry over through one pair of variables.
      if (!f.started) {
#if defined(HCP_EMU_ASAN)
        // The frame of fiber_main, which never returns, left its redzones poisoned on a reused stack.
        __asan_unpoison_memory_region(f.stack->usable() + kStackBytes - kFiberMainFrame, kFiberMainFrame);
#endif
        prepare(f.context, f.stack->usable(), kStackBytes, fiber_main, &f);
        f.started = true;
      }
      run.current = i;
      void* fake_stack = nullptr;
      before_switch(&fake_stack, f.stack->usable(), kStackBytes, fiber_tsan_fiber(f));
      switch_context(run.host, f.context);
      after_switch(fake_stack, nullptr, nullptr);
      if (f.done) --live;
    }
    up = !up;
    if (live > 0 && run.progress == before)
      fault("deadlock: every thread still running waits at a barrier that cannot complete (a __syncthreads or a "
            "warp instruction that some threads of the block or warp do not reach)");
  }
  active = nullptr;
}

int current_fiber() { return active != nullptr ? active->current : 0; }

void FiberBarrier::arrive_and_wait() {
  if (active == nullptr) fault("a barrier outside the emulated threads");
  ++active->progress;
  if (++arrived_ == count_) {
    arrived_ = 0;
    ++phase_;
    return;
  }
  const unsigned phase = phase_;
  while (phase_ == phase) yield_to_host();
}

}  // namespace hcp::emu
