// The block emulator's threads: fibers, run one at a time on the host thread that launches the block, switching
// only where a thread waits at a barrier (__syncthreads, or the one every warp instruction steps). With a host
// thread per emulated thread, CP tests on 2 cores spent almost 90 % of their time (perf) in the OS scheduler and
// barrier waits (sched_yield, futex) and a few % in the kernels; a switch between fibers is a few register moves.
//
// What the threads emulate is unchanged: each has its own stack and registers, and no thread passes a barrier
// before every thread of it has arrived. The order is deterministic (each sweep over the waiting threads runs them
// in turn, alternately up and down the thread indices, so a read of shared memory that another thread writes
// without a barrier in between reads the wrong value in one order or the other), and a block whose threads wait at
// barriers that cannot complete - a collective inside a divergent branch - aborts with the reason instead of
// hanging.
#pragma once

namespace hcp::emu {

// Runs entry(context, i) for i = 0 .. count - 1, each on its own fiber, on the calling thread; returns when every
// one has returned. Not reentrant: a fiber does not run fibers.
void run_fibers(int count, void (*entry)(void* context, int index), void* context);

template <class Fn>
void run_fibers(int count, Fn& fn) {
  run_fibers(count, [](void* context, int index) { (*static_cast<Fn*>(context))(index); }, &fn);
}

// Prints "block emulator: <what>" and aborts: what a GPU would trap on or hang at.
[[noreturn]] void fault(const char* what);

// The index of the fiber running now (in the innermost run_fibers of this host thread).
int current_fiber();

// std::barrier's arrive_and_wait for the fibers of one run_fibers: the last of `count` arrivals releases them all.
class FiberBarrier {
 public:
  explicit FiberBarrier(int count) : count_(count) {}
  void arrive_and_wait();

 private:
  int count_;
  int arrived_ = 0;
  unsigned phase_ = 0;
};

}  // namespace hcp::emu
