// The in-process communicator backend: N ranks in one process, each driven by its own thread, exchanging host
// memory. It is a faithful communicator, not a shortcut: a rank sees other ranks' data only through the
// Communicator operations, messages are matched in posting order, buffer sizes must agree, and a failing rank
// (error, exception, abort, timeout) makes every other rank's pending and later operations fail within the
// timeout. Sends are zero-copy rendezvous: the receiver copies straight out of the sender's posted buffer.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <vector>

#include "hcp/communicator.hpp"

namespace hcp {

namespace inprocess {
struct WorldState;
}

class InProcessWorld {
 public:
  // Throws Error{invalid_argument} unless 1 <= ranks <= 4096 and timeout > 0.
  explicit InProcessWorld(int ranks, std::chrono::milliseconds timeout = std::chrono::seconds(60));
  ~InProcessWorld();
  InProcessWorld(const InProcessWorld&) = delete;
  InProcessWorld& operator=(const InProcessWorld&) = delete;

  int size() const { return static_cast<int>(comms_.size()); }
  // The world communicator of `rank` (owned by the world; throws Error{invalid_argument} when out of range).
  Communicator& comm(int rank);

  // Runs fn(rank's world communicator) on one thread per rank and joins them. A rank whose fn returns an error or
  // throws aborts the world, so the others stop too. Returns the first failure (the root cause), or ok.
  Status run(const std::function<Status(Communicator&)>& fn);

  // Whether some rank failed, and why.
  bool failed() const;
  Status failure() const;

 private:
  std::shared_ptr<inprocess::WorldState> state_;
  std::vector<std::unique_ptr<Communicator>> comms_;
};

}  // namespace hcp
