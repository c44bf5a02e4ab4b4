// A full attention problem for the CP benchmarks: one batch row of q, k, v ([T, H, D] fp32), plain or packed
// documents, causal, optionally windowed; the single-rank kernel call over it and the CP forward on 8 in-process
// ranks, timed in CPU seconds per thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hcp/attention_params.hpp"
#include "hcp/cp_attention.hpp"
#include "hcp/packed_sequences.hpp"

namespace hcp::bench {

struct Workload {
  int64_t seq = 0, heads = 0, head_dim = 0;  // seq: all rows (packed: the padded total)
  PackedBatch packed;                        // empty: one sequence
  int64_t window_left = -1, window_right = -1;
  std::vector<float> q, k, v;
  std::vector<int32_t> seg, pos;  // the full rows' labels (packed or windowed)

  // Useful work of a forward: 4 H D per visible query-key pair.
  double forward_flop() const;
  // Single-rank forward (and backward) over the whole problem on one thread: thread CPU seconds of each.
  struct SingleSeconds {
    double forward = 0, backward = 0;
  };
  SingleSeconds single_seconds(bool backward) const;

 private:
  // The single-rank run's outputs, kept from run to run as a training loop keeps its memory. Fresh ones each run
  // (64 MB at the packed bench's size) cost page faults inside the timing and, on a virtual machine with shadow page
  // tables, made the CP forward that followed up to 2x slower (measured: 0.8 s against 1.6 s).
  struct Outputs {
    std::vector<float> out, lse, delta, dq, dk, dv;
  };
  mutable Outputs outputs_;
};

// Documents of a realistic length mix (lognormal, median about 660 tokens, 16 to 8192) until `tokens` real tokens,
// padded for cp 8.
Workload packed_workload(int64_t tokens, int64_t heads, int64_t head_dim, uint32_t seed);
// Documents of `length` tokens each until `tokens` real tokens (the last one shorter where needed), padded for cp 8.
Workload equal_documents_workload(int64_t tokens, int64_t length, int64_t heads, int64_t head_dim);
// One causal sequence of `seq` tokens, optionally with a window.
Workload plain_workload(int64_t seq, int64_t heads, int64_t head_dim, int64_t window_left = -1);

struct Overhead {
  double cp_seconds = 0, single_seconds = 0;  // of the round with the median ratio
  double ratio = 0;                           // median over the rounds (0 without single-rank runs)
};

// Which CP pass a measurement times.
enum class Pass { forward, backward };
// How the in-process ranks move K and V where a scheme can share them (the ring and all_gather forwards read peers'
// blocks in place, shared_host_buffer.hpp): shared, or exchanged as ranks that share no memory exchange them (the
// ranks' communicators wrapped in a traffic counter, which opts out of sharing).
enum class Transport { shared, exchanged };

// One CP pass on 8 in-process ranks in steady state: in each of `rounds` rounds, rank 0 runs the single-rank pass
// (when `with_single`) while the others wait, then all ranks run the pass once on the same contexts, each timing its
// own thread's CPU seconds (the backward's inputs come from one untimed CP forward before the rounds). The ratio is
// the ranks' summed CPU time over the single-rank time, paired round by round so that a shared machine's drifting
// speed does not enter it.
Overhead cp_overhead(const Workload& w, CpComm scheme, const std::vector<int64_t>& sizes, int rounds,
                     Pass pass = Pass::forward, bool with_single = true, Transport transport = Transport::shared);

}  // namespace hcp::bench
