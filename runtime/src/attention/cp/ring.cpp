// The p2p ring of cp-attention.md over one communicator of size W, on a participant's dual-chunk local sequence
// (half 0 = chunk r, half 1 = chunk 2W-1-r). Forward: at step i the KV of rank (r - i) mod W is used while the
// KV of step i+1 travels from r-1 to r+1; the causal schedule makes every step cost about the same; each step's
// kernel merges its keys into the fp32 out/lse (AttnParams::accumulate). Backward: the diagonal first, then the KV
// of rank (r + i) mod W arriving from r+1 while a step computes; the dK/dV accumulator of each KV block travels
// with it along the same reverse ring and ends, complete, at its owner. With labels (packed sequences, windows) every
// step is the whole block under the labelled mask, and a step whose block no query of this rank sees is not
// computed at all (its KV still passes on). The forward over in-process host ranks keeps the steps but not the
// transport: every rank writes its head-major [K | V] block once into one buffer they share (shared_host_buffer.hpp)
// and step i reads rank (r - i)'s block there in place, so the out/lse merges happen in the same order, with the same
// bits, as the exchanged ring, without its seven copies of every block (a seventh to a quarter of a packed forward's
// CPU time, which on GPUs would be DMA beside the kernels). The backward over such ranks shares its blocks and
// their dK/dV accumulators the same way (shared_ring_backward).
#include <algorithm>
#include <limits>
#include <string>
#include <utility>

#include "bias_blocks.hpp"
#include "local_problem.hpp"
#include "../../comm/shared_host_buffer.hpp"

namespace hcp::cp {
namespace {

// Which queries see which keys when this rank's queries meet the KV block of rank `src`.
Section ring_section(const LocalProblem& lp, int src, int r) {
  const int64_t n = lp.n, half = n / 2;
  if (lp.labels) return {0, n, 0, n, lp.causal, 0};
  if (!lp.causal) return {0, n, 0, n, false, 0};
  if (src == r) return {0, n, 0, n, true, 0};     // own block: local order is global order
  if (src < r) return {0, n, 0, half, false, 0};  // a lower rank's first chunk precedes both query chunks
  return {half, half, 0, n, false, 0};            // a higher rank: only our second chunk comes after it
}

// The rows a document group of a host ring's forward gathers (document_groups): its queries' output and the group's
// keys of each block stay in the caches through the steps.
constexpr int64_t kGroupRows = 128;

// The ring's one posted exchange. When a step fails between post and wait (its kernel failed; the world is
// aborted then), the exchange is still waited for before the step's buffers are freed: a peer may be copying out of
// them, and the wait ends at once in an aborted world apart from copies already running.
class PendingExchange {
 public:
  explicit PendingExchange(Communicator* comm) : comm_(comm) {}
  ~PendingExchange() {
    if (pending_) (void)comm_->wait_send_recv();
  }
  PendingExchange(const PendingExchange&) = delete;
  PendingExchange& operator=(const PendingExchange&) = delete;

  // Sends `bytes` from `send` to `dst` and receives as many into `recv` from `src` (the ring moves equal blocks).
  Status post(const void* send, size_t bytes, int dst, void* recv, int src) {
    HCP_TRY(comm_->post_send_recv(send, bytes, dst, recv, bytes, src));
    pending_ = true;
    return {};
  }
  Status wait() {
    pending_ = false;
    return comm_->wait_send_recv();
  }

 private:
  Communicator* comm_;
  bool pending_ = false;
};

// Rows [first, end) of every block: a group of whole documents (document_groups); all rows by default.
struct RowGroup {
  int64_t first = 0, end = -1;
};

// The kernel parameters of the step that meets the KV block of ring member `src` (with labels, for the rows of
// `group` of this rank's block and of src's), with the block's attention bias (and, backward, its gradient).
AttnParams step_params(const LocalProblem& lp, int src, int r, Buffers buf, RowGroup group = {}, bool grad = false) {
  if (lp.bias) {
    buf.bias = lp.bias->bias(static_cast<size_t>(src));
    if (grad) buf.dbias = lp.bias->grad(static_cast<size_t>(src));
  }
  const Section s = ring_section(lp, src, r);
  if (!lp.labels) return section_params(lp, s, lp.n, lp.n, buf);
  const int64_t end = group.end < 0 ? lp.n : group.end, rows = end - group.first;
  return labelled_params(lp, Section{group.first, rows, group.first, rows, s.causal, 0}, lp.n, lp.n, buf,
                         lp.labels->blocks[static_cast<size_t>(src)]);
}

// Where the ring members' blocks can all be cut into groups of whole documents: row c is a cut when every document
// (segment >= 0) held by rows before c, in any block, comes before every document held by rows from c on, in any
// block. The rows [c, c') between two cuts then hold the same documents in every block, so a query there sees keys
// there only. TE's partitioning gives every rank the same rows per document, so the documents' boundaries are cuts;
// the groups join documents up to `target` rows. A rank takes one group through all ring steps before the next,
// each step reading only the group's rows of a block, so the group's queries, output and keys stay in the caches
// (rather than the steps streaming all of them). Plain sequences, and blocks without such cuts, are one group.
std::vector<int64_t> document_groups(const LocalProblem& lp, int64_t target) {
  std::vector<int64_t> cuts{0};
  if (lp.labels && lp.labels->blocks.size() > 1) {
    const auto n = static_cast<size_t>(lp.n);
    // The highest document before row c and the lowest from row c on, over all blocks.
    std::vector<int32_t> before(n + 1, -1), after(n + 1, std::numeric_limits<int32_t>::max());
    for (const AttnLabels& block : lp.labels->blocks) {
      int32_t low = std::numeric_limits<int32_t>::max(), high = -1;
      for (size_t c = n; c-- > 0;) {
        if (block.seg[c] >= 0) low = std::min(low, block.seg[c]);
        after[c] = std::min(after[c], low);
      }
      for (size_t c = 1; c <= n; ++c) {
        high = std::max(high, block.seg[c - 1]);
        before[c] = std::max(before[c], high);
      }
    }
    for (size_t c = 1; c < n; ++c)
      if (before[c] < after[c] && static_cast<int64_t>(c) - cuts.back() >= target)
        cuts.push_back(static_cast<int64_t>(c));
  }
  cuts.push_back(lp.n);
  return cuts;
}

// Whether the step with block `src` can be left out (the first forward step always runs: it writes out and lse).
bool unseen(const LocalProblem& lp, int src) { return lp.labels && !lp.labels->seen[static_cast<size_t>(src)]; }

// KV heads [first, first + count) of a call; count -1: all.
struct HeadSlice {
  int64_t first = 0, count = -1;
};

// The first step covers every row and writes out/lse; later steps merge into them inside the kernel, and a step
// whose block no query sees is left out.
Status forward_step(CpEngine& eng, Communicator* comm, const LocalProblem& lp, int i, int r, const Buffers& buf,
                    HeadSlice heads = {}, RowGroup group = {}) {
  const int src = (r - i + comm->size()) % comm->size();
  AttnParams p = step_params(lp, src, r, buf, group);
  if (heads.count >= 0) p = kv_head_slice(p, heads.first, heads.count);
  p.accumulate = i > 0;
  if (i > 0 && unseen(lp, src)) return {};
  return compute_or_abort(comm, eng.forward(p));
}

// The steps over ranks that share host memory (see the top of this file): `write_kv` writes this rank's
// head-major [K | V] block into the buffer they share, and step i reads rank (r - i)'s block there in place.
// buf's queries and output are head-major already.
Status shared_ring_steps(CpEngine& eng, Communicator* comm, const LocalProblem& lp, const KvWriter& write_kv,
                         Buffers buf) {
  const int w = comm->size(), r = comm->rank();
  const size_t block = lp.kv_message_bytes();
  SharedHostBuffer blocks;
  HCP_TRY(SharedHostBuffer::create(eng, *comm, block * static_cast<size_t>(w), &blocks));
  HCP_TRY(compute_or_abort(comm, write_kv(blocks.data() + block * static_cast<size_t>(r))));
  HCP_TRY(comm->barrier());  // every block written before any step reads it
  buf.head_major_kv = true;
  // Head slices outside, steps inside: a rank's queries and output meet every block once per step, and a step over
  // all heads streams them (and rewrites the output) from memory each time, eight times a forward at cp 8 (the
  // packed p2p forward's out merge alone had 6% of its samples). One slice at a time they stay in the caches. Each
  // row still meets the blocks in ring order, so the merges keep the exchanged ring's bits.
  const int64_t slice = std::min<int64_t>(lp.kv_heads, std::max(lp.threads, 1));
  const std::vector<int64_t> cuts = document_groups(lp, kGroupRows);
  for (int64_t hk0 = 0; hk0 < lp.kv_heads; hk0 += slice) {
    for (size_t g = 0; g + 1 < cuts.size(); ++g) {
      for (int i = 0; i < w; ++i) {
        const unsigned char* kv = blocks.data() + block * static_cast<size_t>((r - i + w) % w);
        buf.k = kv, buf.v = kv + lp.k_bytes();
        HCP_TRY(forward_step(eng, comm, lp, i, r, buf, {hk0, std::min(slice, lp.kv_heads - hk0)},
                             {cuts[g], cuts[g + 1]}));
      }
    }
  }
  return {};
}

// ring_forward over ranks that share host memory, from the caller's token-major tensors.
Status shared_ring_forward(CpEngine& eng, Communicator* comm, const LocalProblem& lp, const void* k, const void* v,
                           Buffers buf, float* out) {
  HeadMajorQueries hm;  // before the steps' collectives: a rank that fails here aborts them for its peers
  HCP_TRY(compute_or_abort(comm, queries_head_major(eng, lp, &hm, &buf)));
  HCP_TRY(shared_ring_steps(
      eng, comm, lp, [&](unsigned char* kv) { return pack_kv_head_major(eng, lp, k, v, kv); }, buf));
  return restore_output(eng, lp, buf, out);
}

// ring_backward over ranks that share host memory: every KV block and its dK/dV accumulator stay in buffers the
// ranks share, where their owners put them. At step i rank r reads block (r + i) in place and adds into that block's
// accumulator in place; the barrier after each step hands every accumulator on to the rank that adds to it next.
// That is the order in which the exchanged ring carries it (its owner, then rank owner - 1, owner - 2, ...), so the
// sums have the same bits, without the two copies of a block and of its accumulator a step. Layouts as buf says
// (head-major: ring_backward's host engines and ring_backward_shared).
Status shared_ring_backward(CpEngine& eng, Communicator* comm, const LocalProblem& lp, const KvWriter& write_kv,
                            Buffers buf, const KvSumsReader& take_sums) {
  const int w = comm->size(), r = comm->rank();
  const size_t k_floats = static_cast<size_t>(lp.k_elems()), block = lp.kv_message_bytes();
  const size_t sum_bytes = (k_floats + static_cast<size_t>(lp.v_elems())) * sizeof(float);
  SharedHostBuffer blocks, sums;
  HCP_TRY(SharedHostBuffer::create(eng, *comm, block * static_cast<size_t>(w), &blocks));
  // Member 0 failing to allocate the second buffer aborts the others, which would otherwise wait for it inside
  // this create while it waits for their leases on the first.
  HCP_TRY(compute_or_abort(comm, SharedHostBuffer::create(eng, *comm, sum_bytes * static_cast<size_t>(w), &sums)));
  const auto sum_of = [&](int owner) {
    return reinterpret_cast<float*>(sums.data() + sum_bytes * static_cast<size_t>(owner));
  };
  HCP_TRY(compute_or_abort(comm, write_kv(blocks.data() + block * static_cast<size_t>(r))));
  HCP_TRY(compute_or_abort(comm, eng.zero(sum_of(r), sum_bytes)));
  HCP_TRY(comm->barrier());  // every block and accumulator ready before any step reads it
  for (int i = 0; i < w; ++i) {
    const int src = (r + i) % w;
    const unsigned char* kv = blocks.data() + block * static_cast<size_t>(src);
    buf.k = kv, buf.v = kv + lp.k_bytes();
    buf.dk = sum_of(src), buf.dv = sum_of(src) + k_floats;
    if (!unseen(lp, src)) HCP_TRY(compute_or_abort(comm, eng.backward(step_params(lp, src, r, buf, {}, true))));
    HCP_TRY(comm->barrier());
  }
  return take_sums(sum_of(r), sum_of(r) + k_floats);  // while the shared buffers live
}

// The backward's ring with its blocks exchanged (see the top of this file): `write_kv` writes this rank's block
// and `take_sums` gets the finished dK/dV sums of it, in the layout buf says.
Status exchanged_ring_backward(CpEngine& eng, Communicator* comm, const LocalProblem& lp, const KvWriter& write_kv,
                               Buffers buf, const KvSumsReader& take_sums) {
  const int w = comm->size(), r = comm->rank();
  const size_t k_floats = static_cast<size_t>(lp.k_elems());
  const size_t dkv_bytes = (k_floats + static_cast<size_t>(lp.v_elems())) * sizeof(float);
  EngineBuffer cur, next, dkv, dkv_next;
  HCP_TRY(eng.alloc(lp.kv_message_bytes(), &cur));
  HCP_TRY(eng.alloc(lp.kv_message_bytes(), &next));
  HCP_TRY(eng.alloc(dkv_bytes, &dkv));
  HCP_TRY(eng.alloc(dkv_bytes, &dkv_next));
  HCP_TRY(write_kv(cur.as()));
  HCP_TRY(eng.zero(dkv.as(), dkv_bytes));
  PendingExchange exchange(comm);  // after the buffers: settled before they are freed
  for (int i = 0; i < w; ++i) {
    if (i + 1 < w) HCP_TRY(exchange.post(cur.as(), lp.kv_message_bytes(), (r - 1 + w) % w, next.as(), (r + 1) % w));
    const int src = (r + i) % w;
    buf.k = cur.as(), buf.v = cur.as() + lp.k_bytes();
    buf.dk = dkv.as<float>(), buf.dv = dkv.as<float>() + k_floats;
    if (!unseen(lp, src)) HCP_TRY(compute_or_abort(comm, eng.backward(step_params(lp, src, r, buf, {}, true))));
    if (i + 1 < w) {
      HCP_TRY(exchange.wait());
      std::swap(cur, next);
    }
    // This block's dK/dV goes on to rank r-1, which holds the block next (or owns it, after the last step).
    HCP_TRY(comm->send_recv(dkv.as(), dkv_bytes, (r - 1 + w) % w, dkv_next.as(), dkv_bytes, (r + 1) % w));
    std::swap(dkv, dkv_next);
  }
  return take_sums(dkv.as<float>(), dkv.as<float>() + k_floats);
}

// The entry points that take operands where the ranks share them: refused elsewhere (a caller's mistake).
Status shared_host_ranks(const CpEngine& eng, const Communicator& comm, const LocalProblem& lp, const char* what) {
  if (lp.host_engines && comm.shares_host_memory() && !eng.device_memory()) return {};
  return Status(Errc::internal, std::string(what) + " needs host engines that share host memory");
}

}  // namespace

Status ring_forward(CpEngine& eng, Communicator* comm, const LocalProblem& lp, const void* q, const void* k,
                    const void* v, float* out, float* lse) {
  const int w = comm ? comm->size() : 1, r = comm ? comm->rank() : 0;
  Buffers buf;
  buf.q = q;
  if (w == 1) {
    buf.k = k, buf.v = v, buf.out = out, buf.lse = lse, buf.max_logit = lp.max_logit;
    return eng.forward(step_params(lp, 0, 0, buf));
  }
  buf.out = out, buf.lse = lse, buf.max_logit = lp.max_logit;
  if (lp.host_engines && comm->shares_host_memory()) return shared_ring_forward(eng, comm, lp, k, v, buf, out);
  EngineBuffer cur, next;
  HCP_TRY(eng.alloc(lp.kv_message_bytes(), &cur));
  HCP_TRY(eng.alloc(lp.kv_message_bytes(), &next));
  HCP_TRY(pack_kv_head_major(eng, lp, k, v, cur.as()));
  buf.head_major_kv = true;
  HeadMajorQueries hm;
  HCP_TRY(queries_head_major(eng, lp, &hm, &buf));
  PendingExchange exchange(comm);  // after the buffers: settled before they are freed
  for (int i = 0; i < w; ++i) {
    if (i + 1 < w) HCP_TRY(exchange.post(cur.as(), lp.kv_message_bytes(), (r + 1) % w, next.as(), (r - 1 + w) % w));
    buf.k = cur.as(), buf.v = cur.as() + lp.k_bytes();
    HCP_TRY(forward_step(eng, comm, lp, i, r, buf));
    if (i + 1 < w) {
      HCP_TRY(exchange.wait());
      std::swap(cur, next);
    }
  }
  return restore_output(eng, lp, buf, out);
}

Status ring_forward_head_major(CpEngine& eng, Communicator& comm, const LocalProblem& lp, const void* q,
                              const KvWriter& write_kv, float* out, float* lse) {
  HCP_TRY(shared_host_ranks(eng, comm, lp, "ring_forward_head_major"));
  Buffers buf;
  buf.q = q, buf.out = out, buf.lse = lse, buf.max_logit = lp.max_logit;
  buf.head_major_q = true;
  return shared_ring_steps(eng, &comm, lp, write_kv, buf);
}

Status ring_backward_shared(CpEngine& eng, Communicator& comm, const LocalProblem& lp, const void* q,
                            const KvWriter& write_kv, const float* lse, const float* delta, const void* dout, float* dq,
                            const KvSumsReader& take_sums) {
  HCP_TRY(shared_host_ranks(eng, comm, lp, "ring_backward_shared"));
  Buffers buf;
  buf.q = q, buf.dout = dout, buf.lse = const_cast<float*>(lse), buf.delta = delta, buf.dq = dq;
  buf.head_major_q = buf.head_major_kv = true;
  return shared_ring_backward(eng, &comm, lp, write_kv, buf, take_sums);
}

Status ring_backward(CpEngine& eng, Communicator* comm, const LocalProblem& lp, const void* q, const void* k,
                     const void* v, const float* lse, const float* delta, const void* dout, float* dq, float* dk,
                     float* dv) {
  const int w = comm ? comm->size() : 1;
  Buffers buf;
  buf.q = q, buf.dout = dout, buf.lse = const_cast<float*>(lse), buf.delta = delta, buf.dq = dq;
  if (w == 1) {
    buf.k = k, buf.v = v, buf.dk = dk, buf.dv = dv;
    return eng.backward(step_params(lp, 0, 0, buf, {}, true));
  }
  // Host engines (decided collectively, so every rank's blocks have one layout) take q, dO, dQ and the blocks
  // head-major, as in the forward: the kernel packs query and dO rows and adds dQ rows for every tile pair, and
  // head-major those stream (the packed p2p CP backward takes about 11% less time than on token-major rows).
  const bool head_major = lp.host_engines;
  HeadMajorGrads hm;  // before the ring's collectives: a rank that fails here aborts them for its peers
  if (head_major) HCP_TRY(compute_or_abort(comm, grads_head_major(eng, lp, &hm, &buf)));
  buf.head_major_kv = head_major;
  const KvWriter write_kv = [&](unsigned char* kv) {
    return head_major ? pack_kv_head_major(eng, lp, k, v, kv) : pack_kv(eng, lp, k, v, kv);
  };
  const KvSumsReader take_sums = [&](const float* dk_sum, const float* dv_sum) -> Status {
    if (!head_major) {
      HCP_TRY(eng.copy_rows(1, 1, static_cast<size_t>(lp.k_elems()) * sizeof(float), dk, 0, 0, dk_sum, 0, 0));
      return eng.copy_rows(1, 1, static_cast<size_t>(lp.v_elems()) * sizeof(float), dv, 0, 0, dv_sum, 0, 0);
    }
    HCP_TRY(relayout_heads(eng, false, lp.batch, lp.n, lp.kv_heads, lp.head_dim, sizeof(float), dk_sum, dk));
    return relayout_heads(eng, false, lp.batch, lp.n, lp.kv_heads, lp.head_dim_v, sizeof(float), dv_sum, dv);
  };
  if (lp.host_engines && comm->shares_host_memory())
    HCP_TRY(shared_ring_backward(eng, comm, lp, write_kv, buf, take_sums));
  else
    HCP_TRY(exchanged_ring_backward(eng, comm, lp, write_kv, buf, take_sums));
  if (!head_major) return {};
  return relayout_heads(eng, false, lp.batch, lp.n, lp.heads, lp.head_dim, sizeof(float), buf.dq, dq);
}

}  // namespace hcp::cp
