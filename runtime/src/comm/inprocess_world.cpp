// The in-process backend. A rank sees another rank's data only by copying it straight out of the owner's buffer
// (rendezvous), never through a shared copy, so the exchanges are as faithful as a network's:
// - a ring step posts a message on the (sender, receiver) queue, which the receiver copies out of; the sender
//   waits until it was consumed;
// - a collective publishes each member's buffer in the group's current round; once every member has joined, each
//   copies what it needs out of the others' buffers, and none leaves before all have finished reading.
// Memory is bounded by the data and the pending messages, not by the number of ranks squared: queues exist only
// while they hold a message (a ring touches 2 of the W^2 pairs per rank) and a collective keeps one pointer per
// member. Each rank waits on its own condition variable and is woken only by what concerns it (a message for it,
// its message consumed, its group's round complete, a failure), so W ranks cost O(W) wake-ups a step, not O(W^2).
// One mutex per world keeps the state simple; the copies themselves run outside the lock.
#include "hcp/inprocess_world.hpp"

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <deque>
#include <exception>
#include <limits>
#include <map>
#include <mutex>
#include <new>
#include <numeric>
#include <pthread.h>
#include <sys/resource.h>
#include <string>
#include <system_error>
#include <thread>
#include <tuple>
#include <unordered_map>

namespace hcp {
namespace inprocess {

struct Post {
  enum class State { queued, copying, done };
  const void* data = nullptr;
  size_t bytes = 0;
  int from = 0;  // group rank of the sender
  State state = State::queued;
};

// One collective: the members' buffers and how far the members got. Two rounds alternate: a member can start
// collective n+1 only after every member finished reading collective n, so round n-1 (the same slot) is over.
struct Round {
  uint64_t number = std::numeric_limits<uint64_t>::max();
  std::vector<const void*> data;  // per group rank
  std::vector<size_t> bytes;
  int arrived = 0;   // members that published their buffer
  int reading = 0;   // members that started copying (none starts once the world failed)
  int finished = 0;  // members done copying
};

struct Group {
  uint64_t id = 0;
  std::vector<int> world_ranks;                          // group rank -> world rank
  std::unordered_map<uint64_t, std::deque<Post*>> queues;  // src * size + dst, present while non-empty
  Round rounds[2];
  int size() const { return static_cast<int>(world_ranks.size()); }
};

struct PendingSplit {
  std::shared_ptr<Group> group;
  int pickups_left = 0;
};

struct WorldState {
  explicit WorldState(int ranks) : wake(static_cast<size_t>(ranks)) {}

  std::mutex mu;
  std::vector<std::condition_variable> wake;  // per world rank: its thread waits on it
  std::chrono::milliseconds timeout{};
  bool failed = false;
  Errc failure_code = Errc::ok;
  std::string failure;
  uint64_t next_group_id = 1;
  std::map<std::tuple<uint64_t, uint64_t, int>, PendingSplit> splits;  // (parent id, split number, color)

  // Records the first failure; later ones do not replace the root cause. Wakes every rank. Caller holds mu.
  void fail_locked(Errc code, std::string message) {
    if (!failed) {
      failed = true;
      failure_code = code;
      failure = std::move(message);
    }
    for (auto& cv : wake) cv.notify_all();
  }
  Status peer_failure_locked(int world_rank, const char* op) const {
    return Status(Errc::comm, "rank " + std::to_string(world_rank) + ": " + op + " aborted: " + failure);
  }
};

class Comm final : public Communicator {
  using Deadline = std::chrono::steady_clock::time_point;

 public:
  Comm(std::shared_ptr<WorldState> world, std::shared_ptr<Group> group, int rank)
      : world_(std::move(world)), group_(std::move(group)), rank_(rank) {}

  ~Comm() override {
    // A post still queued points into this object; a failed world never touches queues again, and a healthy
    // one cannot have posts left when the owner destroys the communicator after its last wait.
    std::unique_lock lock(world_->mu);
    for (auto& post : posts_) {
      while (post->state == Post::State::copying) my_wake().wait(lock);
    }
  }

  int rank() const override { return rank_; }
  int size() const override { return group_->size(); }
  bool in_process() const override { return true; }
  bool shares_host_memory() const override { return true; }

  Status post_send_recv(const void* send, size_t send_bytes, int dst, void* recv, size_t recv_bytes,
                        int src) override {
    if (exchange_posted_) return misuse("post_send_recv", "an exchange is already posted");
    if (!valid_rank(dst) || !valid_rank(src)) return misuse("post_send_recv", "peer rank out of range");
    HCP_TRY(check_healthy("send/recv"));
    post(dst, send, send_bytes);
    exchange_posted_ = true;
    recv_ = recv;
    recv_bytes_ = recv_bytes;
    recv_src_ = src;
    return {};
  }

  Status wait_send_recv() override {
    if (!exchange_posted_) return misuse("wait_send_recv", "no exchange is posted");
    exchange_posted_ = false;
    Status received = receive(recv_src_, recv_, recv_bytes_);
    Status posts = wait_posts();
    return received.ok() ? posts : received;
  }

  Status all_to_all(const void* send, void* recv, size_t chunk_bytes) override {
    HCP_TRY(check_idle("all_to_all"));
    auto* out = static_cast<unsigned char*>(recv);
    return collective(send, chunk_bytes, "all_to_all", [&](int j, const unsigned char* theirs) {
      std::memcpy(out + j * chunk_bytes, theirs + rank_ * chunk_bytes, chunk_bytes);
    });
  }

  Status all_gather(const void* send, void* recv, size_t chunk_bytes) override {
    HCP_TRY(check_idle("all_gather"));
    auto* out = static_cast<unsigned char*>(recv);
    return collective(send, chunk_bytes, "all_gather",
                      [&](int j, const unsigned char* theirs) { std::memcpy(out + j * chunk_bytes, theirs, chunk_bytes); });
  }

  // Each rank adds its block straight out of every member's buffer, in rank order: no staging copy of all blocks
  // (CP all_gather's backward reduces 135 MB a rank at 16k packed tokens, and a fresh staging buffer each call cost
  // its page faults and zeroing, most of that backward's time). Where recv overlaps send, zeroing recv would change
  // what others still read: send is staged first then.
  Status reduce_scatter_sum(const float* send, float* recv, size_t count) override {
    HCP_TRY(check_idle("reduce_scatter_sum"));
    const size_t ranks = static_cast<size_t>(size());
    if (count > std::numeric_limits<size_t>::max() / sizeof(float) / ranks)
      return misuse("reduce_scatter_sum", "count * size() floats overflow the address space");
    const auto at = [](const float* f) { return reinterpret_cast<uintptr_t>(f); };
    std::vector<float> staged;
    if (at(recv + count) > at(send) && at(send + count * ranks) > at(recv)) {
      staged.assign(send, send + count * ranks);
      send = staged.data();
    }
    std::fill(recv, recv + count, 0.0f);
    return collective(send, count * sizeof(float), "reduce_scatter_sum", [&](int, const unsigned char* theirs) {
      add_floats(recv, reinterpret_cast<const float*>(theirs) + static_cast<size_t>(rank_) * count, count);
    });
  }

  Status barrier() override {
    HCP_TRY(check_idle("barrier"));
    return collective(nullptr, 0, "barrier", [](int, const unsigned char*) {});
  }

  Status split(int color, int key, std::unique_ptr<Communicator>* out) override {
    if (out == nullptr) return misuse("split", "out is NULL");
    *out = nullptr;
    const int mine[2] = {color, key};
    std::vector<int> all(2 * static_cast<size_t>(size()));
    HCP_TRY(all_gather(mine, all.data(), sizeof(mine)));
    const uint64_t split_number = splits_done_++;
    if (color < 0) return {};

    std::vector<int> members;  // parent ranks with my color, ordered by (key, parent rank)
    for (int j = 0; j < size(); ++j)
      if (all[2 * j] == color) members.push_back(j);
    std::stable_sort(members.begin(), members.end(), [&](int a, int b) { return all[2 * a + 1] < all[2 * b + 1]; });
    const int new_rank = static_cast<int>(std::find(members.begin(), members.end(), rank_) - members.begin());

    std::shared_ptr<Group> group;
    {
      std::lock_guard lock(world_->mu);
      if (world_->failed) return world_->peer_failure_locked(world_rank(), "split");
      auto key_tuple = std::make_tuple(group_->id, split_number, color);
      auto it = world_->splits.find(key_tuple);
      if (it == world_->splits.end()) {
        auto fresh = std::make_shared<Group>();
        fresh->id = world_->next_group_id++;
        for (int m : members) fresh->world_ranks.push_back(group_->world_ranks[m]);
        it = world_->splits.emplace(key_tuple, PendingSplit{fresh, static_cast<int>(members.size())}).first;
      }
      group = it->second.group;
      if (--it->second.pickups_left == 0) world_->splits.erase(it);
    }
    *out = std::make_unique<Comm>(world_, std::move(group), new_rank);
    return {};
  }

  // Fails the world with `status` as the root cause (a rank's own error, keeping its code).
  void fail_with(const Status& status) {
    std::lock_guard lock(world_->mu);
    world_->fail_locked(status.code(), status.message());
  }

  using Communicator::abort;
  void abort(Errc cause, std::string_view reason) override {
    std::lock_guard lock(world_->mu);
    world_->fail_locked(cause, "rank " + std::to_string(world_rank()) + " aborted: " + std::string(reason));
  }

 private:
  int world_rank() const { return group_->world_ranks[rank_]; }
  bool valid_rank(int r) const { return r >= 0 && r < size(); }
  Deadline deadline() const { return std::chrono::steady_clock::now() + world_->timeout; }
  std::condition_variable& my_wake() const { return wake_of(rank_); }
  std::condition_variable& wake_of(int group_rank) const {
    return world_->wake[static_cast<size_t>(group_->world_ranks[group_rank])];
  }
  uint64_t queue_key(int src, int dst) const {
    return static_cast<uint64_t>(src) * static_cast<uint64_t>(size()) + static_cast<uint64_t>(dst);
  }

  // Waits on this rank's condition variable until done() or the deadline; false on timeout. Caller holds mu.
  template <typename Done>
  bool wait_locked(std::unique_lock<std::mutex>& lock, Deadline until, Done done) {
    while (!done()) {
      if (my_wake().wait_until(lock, until) == std::cv_status::timeout) return done();
    }
    return true;
  }

  Status misuse(const char* op, const char* what) {
    Status status(Errc::invalid_argument,
                  "rank " + std::to_string(world_rank()) + ": " + op + ": " + what);
    std::lock_guard lock(world_->mu);
    world_->fail_locked(status.code(), status.message());
    return status;
  }
  Status check_healthy(const char* op) {
    std::lock_guard lock(world_->mu);
    if (world_->failed) return world_->peer_failure_locked(world_rank(), op);
    return {};
  }
  Status check_idle(const char* op) {
    if (exchange_posted_) return misuse(op, "called while a send/recv exchange is posted");
    return check_healthy(op);
  }
  Status timed_out_locked(const char* op, const std::string& waiting_for) {
    Status status(Errc::timeout, "rank " + std::to_string(world_rank()) + ": " + op + " timed out after " +
                                     std::to_string(world_->timeout.count()) + " ms waiting for " + waiting_for);
    world_->fail_locked(status.code(), status.message());
    return status;
  }
  Status disagree_locked(const char* op, int peer, size_t theirs, size_t mine) {
    Status status(Errc::shape, "rank " + std::to_string(world_rank()) + ": " + op + ": rank " +
                                   std::to_string(group_->world_ranks[peer]) + " sent " + std::to_string(theirs) +
                                   " bytes, " + std::to_string(mine) + " expected (ranks disagree on shapes)");
    world_->fail_locked(status.code(), status.message());
    return status;
  }

  static void add_floats(float* dst, const float* src, size_t n) {
    for (size_t i = 0; i < n; ++i) dst[i] += src[i];
  }

  void post(int dst, const void* data, size_t bytes) {
    auto& slot = posts_.emplace_back(std::make_unique<Post>());
    slot->data = data;
    slot->bytes = bytes;
    slot->from = rank_;
    std::lock_guard lock(world_->mu);
    group_->queues[queue_key(rank_, dst)].push_back(slot.get());
    wake_of(dst).notify_all();
  }

  Status receive(int src, void* buf, size_t bytes) {
    const char* op = "send/recv";
    std::unique_lock lock(world_->mu);
    // The receiver alone removes its queues, so the reference stays valid while it waits.
    const uint64_t key = queue_key(src, rank_);
    auto& queue = group_->queues[key];
    if (!wait_locked(lock, deadline(), [&] { return world_->failed || !queue.empty(); }))
      return timed_out_locked(op, "a message from rank " + std::to_string(group_->world_ranks[src]));
    if (world_->failed) return world_->peer_failure_locked(world_rank(), op);
    Post* message = queue.front();
    if (message->bytes != bytes) return disagree_locked(op, src, message->bytes, bytes);
    queue.pop_front();
    if (queue.empty()) group_->queues.erase(key);
    message->state = Post::State::copying;
    lock.unlock();
    if (bytes) std::memcpy(buf, message->data, bytes);
    lock.lock();
    message->state = Post::State::done;
    wake_of(message->from).notify_all();
    return {};
  }

  // Waits until every posted send was consumed: the caller's buffer is the caller's to free once this returns, so
  // it also waits for copies in progress when the world failed.
  Status wait_posts() {
    const char* op = "send/recv";
    std::unique_lock lock(world_->mu);
    const auto until = deadline();
    for (auto& post : posts_) {
      const bool settled = wait_locked(lock, until, [&] {
        return post->state == Post::State::done || (world_->failed && post->state == Post::State::queued);
      });
      if (!settled) return timed_out_locked(op, "its send to be received");
    }
    if (world_->failed) {
      // Keep posts that someone might still copy from alive until they are done; queued ones are never read.
      for (auto& post : posts_)
        while (post->state == Post::State::copying) my_wake().wait(lock);
      posts_.clear();
      return world_->peer_failure_locked(world_rank(), op);
    }
    posts_.clear();
    return {};
  }

  // Publishes `send` (bytes, which every member must agree on) in the group's next round, waits for every member,
  // calls read(j, member j's buffer) for each j in rank order, and returns once every member finished reading - or,
  // when the world failed, once no one still reads this rank's buffer.
  template <typename Read>
  Status collective(const void* send, size_t bytes, const char* op, Read read) {
    const uint64_t number = collectives_done_++;
    Round& round = group_->rounds[number & 1];
    const int n = size();
    const auto wake_group = [&] {
      for (int j = 0; j < n; ++j) wake_of(j).notify_all();
    };
    std::unique_lock lock(world_->mu);
    if (world_->failed) return world_->peer_failure_locked(world_rank(), op);
    if (round.number != number) {  // the first member here opens the round
      round.number = number;
      round.data.assign(static_cast<size_t>(n), nullptr);
      round.bytes.assign(static_cast<size_t>(n), 0);
      round.arrived = round.reading = round.finished = 0;
    }
    round.data[rank_] = send;
    round.bytes[rank_] = bytes;
    if (++round.arrived == n) wake_group();
    const auto until = deadline();
    if (!wait_locked(lock, until, [&] { return world_->failed || round.arrived == n; }))
      return timed_out_locked(op, "every rank of its group to join");
    // Every member sees the same sizes once all joined: each reports the disagreement as its own shape error.
    for (int j = 0; j < n && round.arrived == n; ++j)
      if (round.bytes[j] != bytes) {
        Status shape = disagree_locked(op, j, round.bytes[j], bytes);
        static_cast<void>(left_failed_locked(lock, round, op));
        return shape;
      }
    if (world_->failed) return left_failed_locked(lock, round, op);
    ++round.reading;
    lock.unlock();
    for (int j = 0; j < n; ++j) read(j, static_cast<const unsigned char*>(round.data[j]));
    lock.lock();
    if (++round.finished == n || world_->failed) wake_group();
    // No deadline here: every member that started reading finishes, and no one starts after a failure.
    while (round.finished != n && !(world_->failed && round.finished == round.reading)) my_wake().wait(lock);
    if (round.finished != n) return world_->peer_failure_locked(world_rank(), op);
    return {};
  }

  // Leaves a round of a failed world once the members reading this rank's buffer are done with it.
  Status left_failed_locked(std::unique_lock<std::mutex>& lock, Round& round, const char* op) {
    while (round.finished != round.reading) my_wake().wait(lock);
    return world_->peer_failure_locked(world_rank(), op);
  }

  std::shared_ptr<WorldState> world_;
  std::shared_ptr<Group> group_;
  int rank_;
  std::vector<std::unique_ptr<Post>> posts_;
  bool exchange_posted_ = false;
  void* recv_ = nullptr;
  size_t recv_bytes_ = 0;
  int recv_src_ = 0;
  uint64_t splits_done_ = 0;
  uint64_t collectives_done_ = 0;
};

}  // namespace inprocess

InProcessWorld::InProcessWorld(int ranks, std::chrono::milliseconds timeout) {
  if (ranks < 1 || ranks > 4096)
    throw Error(Errc::invalid_argument, "in-process world: ranks must be in [1, 4096], got " + std::to_string(ranks));
  if (timeout.count() <= 0)
    throw Error(Errc::invalid_argument,
                "in-process world: timeout must be positive, got " + std::to_string(timeout.count()) + " ms");
  state_ = std::make_shared<inprocess::WorldState>(ranks);
  state_->timeout = timeout;
  auto group = std::make_shared<inprocess::Group>();
  group->id = 0;
  group->world_ranks.resize(static_cast<size_t>(ranks));
  std::iota(group->world_ranks.begin(), group->world_ranks.end(), 0);
  for (int r = 0; r < ranks; ++r) comms_.push_back(std::make_unique<inprocess::Comm>(state_, group, r));
}

InProcessWorld::~InProcessWorld() = default;

Communicator& InProcessWorld::comm(int rank) {
  if (rank < 0 || rank >= size())
    throw Error(Errc::invalid_argument, "in-process world: rank " + std::to_string(rank) + " out of range [0, " +
                                            std::to_string(size()) + ")");
  return *comms_[static_cast<size_t>(rank)];
}

namespace {

std::string mib(uint64_t bytes) { return std::to_string((bytes + (1u << 20) - 1) >> 20) + " MiB"; }

// The rank threads' stacks alone against the address-space limit (ulimit -v): refused up front with what they
// would need, rather than a thread that fails to start part way through.
Status check_stacks_fit(size_t ranks) {
  rlimit limit{};
  if (getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return {};
  pthread_attr_t attr;
  size_t stack = 0;
  if (pthread_getattr_default_np(&attr) != 0) return {};
  pthread_attr_getstacksize(&attr, &stack);
  pthread_attr_destroy(&attr);
  const uint64_t need = static_cast<uint64_t>(ranks) * stack;
  if (need < limit.rlim_cur) return {};
  return Status(Errc::out_of_memory, std::to_string(ranks) + " in-process ranks run on " + std::to_string(ranks) +
                                         " threads of " + mib(stack) + " stack each: " + mib(need) +
                                         " of address space, more than the limit of " + mib(limit.rlim_cur) +
                                         " (ulimit -v); use fewer ranks, or one process per rank");
}

}  // namespace

Status InProcessWorld::run(const std::function<Status(Communicator&)>& fn) {
  if (Status fits = check_stacks_fit(comms_.size()); !fits.ok()) {
    std::lock_guard lock(state_->mu);
    state_->fail_locked(fits.code(), fits.message());
    return fits;
  }
  std::vector<std::thread> threads;
  threads.reserve(comms_.size());
  for (auto& comm : comms_) {
    auto* c = static_cast<inprocess::Comm*>(comm.get());
    try {
      threads.emplace_back([&fn, c] {
        Status status;
        try {
          status = fn(*c);
        } catch (const Error& e) {
          status = Status(e.code(), e.what());
        } catch (const std::bad_alloc&) {
          status = Status(Errc::out_of_memory, "rank " + std::to_string(c->rank()) + ": out of memory");
        } catch (const std::exception& e) {
          status = Status(Errc::internal, e.what());
        } catch (...) {
          status = Status(Errc::internal, "unknown exception");
        }
        if (!status.ok()) c->fail_with(status);
      });
    } catch (const std::system_error& e) {
      // No thread for this rank (the process's thread or address-space limit): the ranks already running stop at
      // their first operation with it, and the world reports why.
      c->fail_with(Status(Errc::out_of_memory, "could not start the thread of rank " + std::to_string(c->rank()) +
                                                   " of " + std::to_string(size()) + " (each in-process rank runs "
                                                   "on its own thread): " + e.what()));
      break;
    }
  }
  for (auto& t : threads) t.join();
  return failure();
}

bool InProcessWorld::failed() const {
  std::lock_guard lock(state_->mu);
  return state_->failed;
}

Status InProcessWorld::failure() const {
  std::lock_guard lock(state_->mu);
  if (!state_->failed) return {};
  return Status(state_->failure_code, state_->failure);
}

}  // namespace hcp
