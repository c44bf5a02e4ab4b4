// CP over MPI processes against CP over in-process threads (issue 21): the same CP forward + backward of a
// causal fp32 problem (default B 1, S 4096, H 8, D 128) on 8 ranks, and the CP overhead as attention_bench measures
// it - in each round, rank 0 runs the same problem on one rank (a one-rank CP context, same code path) while the
// others wait, then all ranks run it, each timing its own thread's CPU seconds; a round's ratio is the ranks'
// summed CPU time over the one rank's; the median round is reported (target <= 1.25, as for threads). Also the
// ring's exposed transfer: the wall time ranks spend waiting in the ring's exchanges during the passes, against the
// same exchanges replayed back to back without compute; hidden = 1 - exposed / alone. The waits also hold the time
// a rank waits for a peer still computing, which causal steps (unequal per rank) add to; --full (no mask: equal
// steps) measures the transfer alone. The backward's dK/dV exchange follows the step that produces it, so only
// the K/V exchanges can hide; --forward times the forward pass alone.
//   cp_backend_bench [--seq N] [--heads N] [--head-dim N] [--repeat N] [--comm p2p|a2a+p2p] [--full] (8 threads)
//   mpirun -np 8 cp_backend_bench --mpi [...]                                                    (8 processes)
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "hcp/cp_attention.hpp"
#include "hcp/error.hpp"
#include "hcp/inprocess_world.hpp"
#include "hcp/mpi_communicator.hpp"

namespace {

struct Options {
  int64_t seq = 4096, heads = 8, head_dim = 128;
  int repeat = 5;
  bool mpi = false;
  bool causal = true;
  bool backward = true;
  std::string comm = "p2p";
};

double thread_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

double wall_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void require_ok(const hcp::Status& s, const char* what) {
  if (s.ok()) return;
  std::fprintf(stderr, "cp_backend_bench: %s: %s\n", what, s.message().c_str());
  std::exit(1);
}

// Times the ring's exchanges: the wall seconds spent in wait_send_recv (the transfer not hidden behind the step's
// compute) and what each exchange moved, to replay it without compute.
struct Exchange {
  hcp::Communicator* inner;
  size_t send_bytes, recv_bytes;
  int dst, src;
};
struct RingLog {
  bool recording = false;
  double waited = 0;
  std::vector<Exchange> exchanges;
};

class TimedCommunicator final : public hcp::Communicator {
 public:
  TimedCommunicator(std::unique_ptr<hcp::Communicator> inner, std::shared_ptr<RingLog> log)
      : inner_(std::move(inner)), log_(std::move(log)) {}
  int rank() const override { return inner_->rank(); }
  int size() const override { return inner_->size(); }
  bool in_process() const override { return inner_->in_process(); }
  hcp::Status post_send_recv(const void* send, size_t send_bytes, int dst, void* recv, size_t recv_bytes,
                             int src) override {
    if (log_->recording) log_->exchanges.push_back({inner_.get(), send_bytes, recv_bytes, dst, src});
    return inner_->post_send_recv(send, send_bytes, dst, recv, recv_bytes, src);
  }
  hcp::Status wait_send_recv() override {
    const double start = wall_seconds();
    hcp::Status s = inner_->wait_send_recv();
    if (log_->recording) log_->waited += wall_seconds() - start;
    return s;
  }
  hcp::Status all_to_all(const void* s, void* r, size_t n) override { return inner_->all_to_all(s, r, n); }
  hcp::Status all_gather(const void* s, void* r, size_t n) override { return inner_->all_gather(s, r, n); }
  hcp::Status reduce_scatter_sum(const float* s, float* r, size_t n) override {
    return inner_->reduce_scatter_sum(s, r, n);
  }
  hcp::Status barrier() override { return inner_->barrier(); }
  hcp::Status split(int color, int key, std::unique_ptr<hcp::Communicator>* out) override {
    std::unique_ptr<hcp::Communicator> child;
    HCP_TRY(inner_->split(color, key, &child));
    if (child) child = std::make_unique<TimedCommunicator>(std::move(child), log_);
    *out = std::move(child);
    return {};
  }
  void abort(hcp::Errc cause, std::string_view reason) override { inner_->abort(cause, reason); }

 private:
  std::unique_ptr<hcp::Communicator> inner_;
  std::shared_ptr<RingLog> log_;
};

struct RankResult {
  std::vector<double> cp_cpu, single_cpu;  // per round (single: rank 0 only)
  double waited = 0, alone = 0;            // summed over rounds
};

// One rank's rounds over `world` (already wrapped in a TimedCommunicator sharing `log`).
RankResult run_rank(hcp::Communicator& world, const Options& o, RingLog& log) {
  const int n = world.size();
  hcp::ParallelConfig config;
  config.world_size = n, config.cp = n;
  const hcp::CpComm scheme = hcp::parse_cp_comm(o.comm);
  if (scheme == hcp::CpComm::a2a_p2p) config.hcp_sizes = std::vector<int64_t>{2, n / 2};
  std::unique_ptr<hcp::CpContext> ctx;
  require_ok(hcp::CpContext::create(world, config, scheme, &ctx, hcp::LogLevel::debug), "context");
  const int64_t row = o.heads * o.head_dim;
  std::mt19937 gen(1);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  auto random = [&](int64_t elems) {
    std::vector<float> x(static_cast<size_t>(elems));
    for (float& v : x) v = dist(gen);
    return x;
  };
  // The full problem (alike on every rank), this rank's shard, and the one-rank context of rank 0.
  const std::vector<float> q = random(o.seq * row), k = random(o.seq * row), v = random(o.seq * row),
                           dout = random(o.seq * row);
  auto shard = [&](const std::vector<float>& full) {
    std::vector<float> local(full.size() / static_cast<size_t>(n));
    require_ok(hcp::shard_sequence(full.data(), local.data(), 1, o.seq, row, 4, n, ctx->cp_rank()), "shard");
    return local;
  };
  const std::vector<float> lq = shard(q), lk = shard(k), lv = shard(v), ldout = shard(dout);
  std::vector<float> out(lq.size()), dq(lq.size()), dk(lq.size()), dv(lq.size());
  std::vector<float> lse(static_cast<size_t>(o.heads * (o.seq / n)));
  hcp::CpShape shape;
  shape.seq_local = o.seq / n, shape.heads = shape.kv_heads = o.heads, shape.head_dim = o.head_dim;
  shape.causal = o.causal;
  auto pass = [&](hcp::CpContext& c, const hcp::CpShape& sh, const float* pq, const float* pk, const float* pv,
                  const float* pd, float* po, float* pl, float* gq, float* gk, float* gv) {
    require_ok(c.forward(sh, pq, pk, pv, po, pl), "forward");
    if (o.backward) require_ok(c.backward(sh, pq, pk, pv, po, pl, pd, gq, gk, gv), "backward");
  };
  RankResult result;
  pass(*ctx, shape, lq.data(), lk.data(), lv.data(), ldout.data(), out.data(), lse.data(), dq.data(), dk.data(),
       dv.data());  // warm-up
  for (int i = 0; i < o.repeat; ++i) {
    require_ok(world.barrier(), "barrier");
    if (world.rank() == 0) {
      // One rank, in a thread of its own (the one-rank world's), timed there.
      hcp::InProcessWorld one(1, std::chrono::minutes(10));
      double seconds = 0;
      require_ok(one.run([&](hcp::Communicator& comm) -> hcp::Status {
        hcp::ParallelConfig single;
        std::unique_ptr<hcp::CpContext> c1;
        HCP_TRY(hcp::CpContext::create(comm, single, hcp::CpComm::p2p, &c1, hcp::LogLevel::debug));
        hcp::CpShape full = shape;
        full.seq_local = o.seq;
        std::vector<float> fo(q.size()), fl(static_cast<size_t>(o.heads * o.seq)), g1(q.size()), g2(q.size()),
            g3(q.size());
        const double start = thread_seconds();
        pass(*c1, full, q.data(), k.data(), v.data(), dout.data(), fo.data(), fl.data(), g1.data(), g2.data(),
             g3.data());
        seconds = thread_seconds() - start;
        return {};
      }), "single rank");
      result.single_cpu.push_back(seconds);
    }
    require_ok(world.barrier(), "barrier");
    log.recording = true;
    const double start = thread_seconds();
    pass(*ctx, shape, lq.data(), lk.data(), lv.data(), ldout.data(), out.data(), lse.data(), dq.data(), dk.data(),
         dv.data());
    result.cp_cpu.push_back(thread_seconds() - start);
    log.recording = false;
  }
  result.waited = log.waited;
  // The same exchanges again, back to back: the transfer time with nothing to hide it behind.
  std::vector<unsigned char> send, recv;
  require_ok(world.barrier(), "barrier");
  const double start = wall_seconds();
  for (const Exchange& e : log.exchanges) {
    send.resize(std::max(send.size(), e.send_bytes));
    recv.resize(std::max(recv.size(), e.recv_bytes));
    require_ok(e.inner->send_recv(send.data(), e.send_bytes, e.dst, recv.data(), e.recv_bytes, e.src), "replay");
  }
  result.alone = wall_seconds() - start;
  return result;
}

// Rank 0's report from every rank's results (gathered over `world`).
void report(hcp::Communicator& world, const Options& o, const RankResult& mine) {
  const int n = world.size();
  const size_t rounds = static_cast<size_t>(o.repeat);
  std::vector<double> send(mine.cp_cpu);
  send.push_back(mine.waited);
  send.push_back(mine.alone);
  std::vector<double> all(send.size() * static_cast<size_t>(n));
  require_ok(world.all_gather(send.data(), all.data(), send.size() * sizeof(double)), "gather");
  if (world.rank() != 0) return;
  std::vector<std::pair<double, size_t>> ratios;
  double waited = 0, alone = 0;
  for (size_t i = 0; i < rounds; ++i) {
    double sum = 0;
    for (int r = 0; r < n; ++r) sum += all[static_cast<size_t>(r) * send.size() + i];
    ratios.emplace_back(sum / mine.single_cpu[i], i);
  }
  for (int r = 0; r < n; ++r) {
    waited += all[static_cast<size_t>(r) * send.size() + rounds];
    alone += all[static_cast<size_t>(r) * send.size() + rounds + 1];
  }
  std::sort(ratios.begin(), ratios.end());
  const size_t mid = ratios[rounds / 2].second;
  double sum = 0;
  for (int r = 0; r < n; ++r) sum += all[static_cast<size_t>(r) * send.size() + mid];
  std::printf("CP overhead %-8s %d %s, %s, S %lld H %lld D %lld %s fp32: median of %zu rounds: "
              "ranks' CPU time %.3f s / one rank %.3f s = %.2fx (target <= 1.25)\n",
              o.comm.c_str(), n, o.mpi ? "MPI processes" : "in-process threads",
              o.backward ? "forward + backward" : "forward", static_cast<long long>(o.seq),
              static_cast<long long>(o.heads), static_cast<long long>(o.head_dim), o.causal ? "causal" : "no mask",
              rounds, sum,
              mine.single_cpu[mid], ratios[rounds / 2].first);
  // Both sums cover every rank and every round (the replay repeats all the rounds' exchanges).
  std::printf("ring transfer: %.3f s waited in the passes (all ranks, %zu rounds), %.3f s for the same exchanges "
              "alone: %.0f%% hidden behind compute\n",
              waited, rounds, alone, alone > 0 ? std::max(0.0, 100.0 * (1.0 - waited / alone)) : 0.0);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "cp_backend_bench: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--seq") o.seq = std::stoll(next());
    else if (a == "--heads") o.heads = std::stoll(next());
    else if (a == "--head-dim") o.head_dim = std::stoll(next());
    else if (a == "--repeat") o.repeat = std::max(1, std::stoi(next()));
    else if (a == "--comm") o.comm = next();
    else if (a == "--mpi") o.mpi = true;
    else if (a == "--full") o.causal = false;
    else if (a == "--forward") o.backward = false;
    else {
      std::fprintf(stderr, "usage: cp_backend_bench [--mpi] [--seq N] [--heads N] [--head-dim N] [--repeat N] "
                           "[--comm p2p|a2a+p2p] [--full] [--forward]\n");
      return 2;
    }
  }
  if (o.mpi) {
    bool here = false;
    require_ok(hcp::mpi_init(&here), "MPI");
    std::unique_ptr<hcp::Communicator> mpi;
    require_ok(hcp::make_mpi_communicator(hcp::kMpiCommWorld, std::chrono::minutes(10), &mpi), "MPI communicator");
    auto log = std::make_shared<RingLog>();
    {
      TimedCommunicator world(std::move(mpi), log);
      const RankResult mine = run_rank(world, o, *log);
      report(world, o, mine);
    }
    require_ok(hcp::mpi_finalize(), "MPI finalize");
    return 0;
  }
  constexpr int kRanks = 8;
  hcp::InProcessWorld world(kRanks, std::chrono::minutes(10));
  require_ok(world.run([&](hcp::Communicator& comm) -> hcp::Status {
    auto log = std::make_shared<RingLog>();
    // The in-process world owns its communicators: wrap a non-owning view of this rank's.
    struct View final : hcp::Communicator {
      explicit View(hcp::Communicator& c) : c_(c) {}
      int rank() const override { return c_.rank(); }
      int size() const override { return c_.size(); }
      bool in_process() const override { return true; }
      hcp::Status post_send_recv(const void* s, size_t sb, int d, void* r, size_t rb, int src) override {
        return c_.post_send_recv(s, sb, d, r, rb, src);
      }
      hcp::Status wait_send_recv() override { return c_.wait_send_recv(); }
      hcp::Status all_to_all(const void* s, void* r, size_t n) override { return c_.all_to_all(s, r, n); }
      hcp::Status all_gather(const void* s, void* r, size_t n) override { return c_.all_gather(s, r, n); }
      hcp::Status reduce_scatter_sum(const float* s, float* r, size_t n) override {
        return c_.reduce_scatter_sum(s, r, n);
      }
      hcp::Status barrier() override { return c_.barrier(); }
      hcp::Status split(int color, int key, std::unique_ptr<hcp::Communicator>* out) override {
        return c_.split(color, key, out);
      }
      void abort(hcp::Errc cause, std::string_view reason) override { c_.abort(cause, reason); }
      hcp::Communicator& c_;
    };
    TimedCommunicator timed(std::make_unique<View>(comm), log);
    const RankResult mine = run_rank(timed, o, *log);
    report(timed, o, mine);
    return {};
  }), "in-process world");
  return 0;
}
