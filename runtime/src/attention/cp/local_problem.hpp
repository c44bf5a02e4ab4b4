// One participant's contiguous tensors in a CP scheme and the kernel parameters for a section of them.
#pragma once

#include <cstdint>
#include <functional>
#include <utility>

#include "hcp/attention_params.hpp"
#include "hcp/communicator.hpp"
#include "hcp/cp_engine.hpp"
#include "row_labels.hpp"

namespace hcp::cp {

class BiasBlocks;

// Sizes of contiguous [B, n, H, D] (q-like) and [B, n, Hkv, D] (kv-like) tensors; per-row values [B, H, n]. q, k,
// dq and dk have head dim D = head_dim; v, out, dout and dv Dv = head_dim_v (MLA; equal to head_dim otherwise).
struct LocalProblem {
  int64_t batch = 1, n = 0, heads = 0, kv_heads = 0, head_dim = 0, head_dim_v = 0;
  DType dtype = DType::f32;
  bool causal = true;
  float scale = 0;
  int threads = 1;
  // Packed sequences or a window: the labels of every block (row_labels.hpp); nullptr: one plain sequence.
  const BlockLabels* labels = nullptr;
  // Every rank's engine is a host engine (decided collectively): layouts that suit the CPU kernels but change what
  // the ranks exchange (the number or order of messages) may be used.
  bool host_engines = false;
  // Forward: where each query row's largest logit goes ([B, H, n] like lse, engine memory); nullptr: not wanted.
  float* max_logit = nullptr;
  // Attention bias (bias_blocks.hpp): each block's bias, and in the backward its gradient; nullptr: none.
  BiasBlocks* bias = nullptr;

  int64_t q_elems() const { return batch * n * heads * head_dim; }    // q, dq
  int64_t o_elems() const { return batch * n * heads * head_dim_v; }  // out, dout
  int64_t k_elems() const { return batch * n * kv_heads * head_dim; }
  int64_t v_elems() const { return batch * n * kv_heads * head_dim_v; }
  size_t k_bytes() const { return static_cast<size_t>(k_elems()) * dtype_size(dtype); }
  size_t v_bytes() const { return static_cast<size_t>(v_elems()) * dtype_size(dtype); }
  size_t kv_message_bytes() const { return k_bytes() + v_bytes(); }  // the [K | V] message of a ring step
};

// An engine buffer of `count` elements of T.
template <class T>
Status alloc_elems(CpEngine& eng, int64_t count, EngineBuffer* out) {
  return eng.alloc(static_cast<size_t>(count) * sizeof(T), out);
}

// The [K | V] message of one KV block (ring steps and all_gather both move K and V as one message) into `m`
// (kv_message_bytes).
inline Status pack_kv(CpEngine& eng, const LocalProblem& lp, const void* k, const void* v, void* m) {
  HCP_TRY(eng.copy_rows(1, 1, lp.k_bytes(), m, 0, 0, k, 0, 0));
  return eng.copy_rows(1, 1, lp.v_bytes(), static_cast<unsigned char*>(m) + lp.k_bytes(), 0, 0, v, 0, 0);
}

// [B, n, H, D] <-> [B, H, n, D]: each head's rows contiguous. The ring's K and V travel in this form on every engine
// (the same bytes, so ranks agree whatever their engine), and a host engine's q and output take it too: a CPU kernel
// walks one head's rows at a time, and in the caller's layout those rows sit a whole token (H x D elements, often a
// page) apart, so every row is a cache and TLB miss; head-major, they stream. A GPU gains nothing from q's copy and
// would pay its memory.
// The copy walks tokens outside and heads inside: the token-major side is then read or written once, in order, and
// the head-major side is H streams that each advance a row at a time. Heads outside passed over the token-major
// side H times, a row out of every H x D elements each time (a page a row at H x D = 1024 fp32): on an Intel Xeon
// (AVX-512, 2 vCPUs) the packed p2p ring's three re-layouts took about 25% less time this way (52 against 70 ms of
// the 8 ranks' forward).
inline Status relayout_heads(CpEngine& eng, bool to_head_major, int64_t batch, int64_t n, int64_t heads,
                             int64_t head_dim, size_t elem, const void* src, void* dst) {
  const size_t head = static_cast<size_t>(head_dim) * elem, token = static_cast<size_t>(heads) * head;
  const size_t batch_bytes = static_cast<size_t>(n) * token, seq_bytes = static_cast<size_t>(n) * head;
  for (int64_t b = 0; b < batch; ++b) {
    auto* d = static_cast<unsigned char*>(dst) + b * batch_bytes;
    const auto* s = static_cast<const unsigned char*>(src) + b * batch_bytes;
    if (to_head_major)
      HCP_TRY(eng.copy_rows(n, heads, head, d, head, seq_bytes, s, token, head));
    else
      HCP_TRY(eng.copy_rows(n, heads, head, d, token, head, s, head, seq_bytes));
  }
  return {};
}
inline Status to_head_major(CpEngine& eng, int64_t batch, int64_t n, int64_t heads, int64_t head_dim, size_t elem,
                            const void* src, void* dst) {
  return relayout_heads(eng, true, batch, n, heads, head_dim, elem, src, dst);
}

// The ring's [K | V] message: both head-major (to_head_major), kv_message_bytes.
inline Status pack_kv_head_major(CpEngine& eng, const LocalProblem& lp, const void* k, const void* v, void* m) {
  const size_t e = dtype_size(lp.dtype);
  HCP_TRY(to_head_major(eng, lp.batch, lp.n, lp.kv_heads, lp.head_dim, e, k, m));
  return to_head_major(eng, lp.batch, lp.n, lp.kv_heads, lp.head_dim_v, e, v,
                       static_cast<unsigned char*>(m) + lp.k_bytes());
}

// A block of query rows [q0, q0 + nq) against key rows [k0, k0 + nk) of tensors whose sequence lengths are q_seq
// and k_seq.
struct Section {
  int64_t q0 = 0, nq = 0, k0 = 0, nk = 0;
  bool causal = false;
  int64_t causal_offset = 0;
};

inline AttnTensor section_tensor(const void* data, size_t elem, int64_t row0, int64_t seq, int64_t heads,
                                 int64_t head_dim) {
  const int64_t row = heads * head_dim;
  if (data == nullptr) return {};
  return {const_cast<unsigned char*>(static_cast<const unsigned char*>(data)) + row0 * row * static_cast<int64_t>(elem),
          seq * row, row, head_dim};
}

// section_tensor of a head-major tensor (to_head_major).
inline AttnTensor head_major_section(const void* data, size_t elem, int64_t row0, int64_t seq, int64_t heads,
                                     int64_t head_dim) {
  if (data == nullptr) return {};
  return {const_cast<unsigned char*>(static_cast<const unsigned char*>(data)) + row0 * head_dim * static_cast<int64_t>(elem),
          heads * seq * head_dim, head_dim, seq * head_dim};
}

inline AttnRows section_rows(const float* data, int64_t row0, int64_t seq, int64_t heads) {
  if (data == nullptr) return {};
  return {const_cast<float*>(data) + row0, heads * seq, seq};
}

// The tensors a kernel call reads and writes; q-like ones (q, out, dout, dq) have the sequence of the queries,
// kv-like ones (k, v, dk, dv) that of the keys. out, dq, dk, dv and the per-row values are fp32.
struct Buffers {
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  float* out = nullptr;
  float* lse = nullptr;
  float* max_logit = nullptr;  // forward, optional: AttnParams::max_logit, laid out as lse
  // Attention bias and its gradient for the keys of the call's block (bias_blocks.hpp): rows are the participant's,
  // keys the block's; a section takes its rows and keys of them.
  AttnPairs bias, dbias;
  const void* dout = nullptr;
  const float* delta = nullptr;
  float* dq = nullptr;
  float* dk = nullptr;
  float* dv = nullptr;
  // Head-major tensors (relayout_heads): the q-like ones (q, dout, out, dq) and the kv-like ones (k, v, dk, dv).
  bool head_major_q = false, head_major_kv = false;
  // The fp32 output stays in the caller's token-major layout even with head-major queries (a call that writes each
  // output row once: re-laying it would be one more pass over it than the kernel's own writes).
  bool token_major_out = false;
};

// A host engine's queries and fp32 output head-major for the kernel calls (see relayout_heads), held in `hm`:
// q is copied in here, the output back by restore_output. Device engines keep the caller's layout.
struct HeadMajorQueries {
  EngineBuffer q, out;
};
inline Status queries_head_major(CpEngine& eng, const LocalProblem& lp, HeadMajorQueries* hm, Buffers* buf,
                                 bool output_too = true) {
  if (eng.device_memory()) return {};
  const size_t e = dtype_size(lp.dtype);
  HCP_TRY(eng.alloc(static_cast<size_t>(lp.q_elems()) * e, &hm->q));
  HCP_TRY(to_head_major(eng, lp.batch, lp.n, lp.heads, lp.head_dim, e, buf->q, hm->q.as()));
  buf->q = hm->q.as(), buf->head_major_q = true, buf->token_major_out = !output_too;
  if (!output_too) return {};
  HCP_TRY(alloc_elems<float>(eng, lp.o_elems(), &hm->out));
  buf->out = hm->out.as<float>();
  return {};
}
// The backward's q, dO and fp32 dQ head-major for a host engine's kernel calls (see relayout_heads), held in `hm`:
// q and dO are copied in, dQ (which the calls add to) too; the caller copies dQ back.
struct HeadMajorGrads {
  EngineBuffer q, dout, dq;
};
inline Status grads_head_major(CpEngine& eng, const LocalProblem& lp, HeadMajorGrads* hm, Buffers* buf) {
  const size_t e = dtype_size(lp.dtype);
  HCP_TRY(eng.alloc(static_cast<size_t>(lp.q_elems()) * e, &hm->q));
  HCP_TRY(eng.alloc(static_cast<size_t>(lp.o_elems()) * e, &hm->dout));
  HCP_TRY(alloc_elems<float>(eng, lp.q_elems(), &hm->dq));
  HCP_TRY(to_head_major(eng, lp.batch, lp.n, lp.heads, lp.head_dim, e, buf->q, hm->q.as()));
  HCP_TRY(to_head_major(eng, lp.batch, lp.n, lp.heads, lp.head_dim_v, e, buf->dout, hm->dout.as()));
  HCP_TRY(to_head_major(eng, lp.batch, lp.n, lp.heads, lp.head_dim, sizeof(float), buf->dq, hm->dq.as()));
  buf->q = hm->q.as(), buf->dout = hm->dout.as(), buf->dq = hm->dq.as<float>(), buf->head_major_q = true;
  return {};
}
inline Status restore_output(CpEngine& eng, const LocalProblem& lp, const Buffers& buf, float* out) {
  if (!buf.head_major_q || buf.token_major_out) return {};
  return relayout_heads(eng, false, lp.batch, lp.n, lp.heads, lp.head_dim_v, sizeof(float), buf.out, out);
}

inline AttnParams section_params(const LocalProblem& lp, const Section& s, int64_t q_seq, int64_t k_seq,
                                 const Buffers& b) {
  AttnParams p;
  p.dtype = lp.dtype;
  p.batch = lp.batch, p.sq = s.nq, p.sk = s.nk, p.heads = lp.heads, p.kv_heads = lp.kv_heads;
  p.head_dim = lp.head_dim, p.head_dim_v = lp.head_dim_v, p.scale = lp.scale, p.causal = s.causal, p.causal_offset = s.causal_offset;
  p.num_threads = lp.threads;
  const size_t e = dtype_size(lp.dtype);
  const auto q_like = b.head_major_q ? head_major_section : section_tensor;
  const auto kv_like = b.head_major_kv ? head_major_section : section_tensor;
  p.q = q_like(b.q, e, s.q0, q_seq, lp.heads, lp.head_dim);
  p.dout = q_like(b.dout, e, s.q0, q_seq, lp.heads, lp.head_dim_v);
  p.out = (b.token_major_out ? section_tensor : q_like)(b.out, 4, s.q0, q_seq, lp.heads, lp.head_dim_v);
  p.dq = q_like(b.dq, 4, s.q0, q_seq, lp.heads, lp.head_dim);
  p.k = kv_like(b.k, e, s.k0, k_seq, lp.kv_heads, lp.head_dim);
  p.v = kv_like(b.v, e, s.k0, k_seq, lp.kv_heads, lp.head_dim_v);
  p.dk = kv_like(b.dk, 4, s.k0, k_seq, lp.kv_heads, lp.head_dim);
  p.dv = kv_like(b.dv, 4, s.k0, k_seq, lp.kv_heads, lp.head_dim_v);
  p.lse = section_rows(b.lse, s.q0, q_seq, lp.heads);
  if (b.max_logit) p.max_logit = section_rows(b.max_logit, s.q0, q_seq, lp.heads);
  p.delta = section_rows(b.delta, s.q0, q_seq, lp.heads);
  for (auto [from, to] : {std::pair{&b.bias, &p.bias}, {&b.dbias, &p.dbias}})
    if (from->data) *to = {from->data + s.q0 * from->stride_q + s.k0 * from->stride_k, from->stride_b,
                           from->stride_h, from->stride_q, from->stride_k};
  return p;
}

// section_params with the labelled mask: this participant's rows as queries against the rows `keys`.
inline AttnParams labelled_params(const LocalProblem& lp, const Section& s, int64_t q_seq, int64_t k_seq,
                                  const Buffers& b, const AttnLabels& keys) {
  AttnParams p = section_params(lp, s, q_seq, k_seq, b);
  const AttnLabels& mine = lp.labels->blocks[static_cast<size_t>(lp.labels->me)];
  p.q_labels = {mine.seg + s.q0, mine.pos + s.q0};  // labels are indexed by the section's rows
  p.k_labels = {keys.seg + s.k0, keys.pos + s.k0};
  p.window_left = lp.labels->window_left, p.window_right = lp.labels->window_right;
  return p;
}

// The part of kernel call `p` that KV heads [hk0, hk0 + count) and their query heads take. The kernels compute every
// head on its own, so the calls of a split give each row the bits the whole call gives it. A host rank's ring walks
// its heads one slice at a time through all steps: a slice's queries and output stay in the caches from step to
// step, where a step over all heads streams them from memory again (see shared_ring_steps).
inline AttnParams kv_head_slice(const AttnParams& p, int64_t hk0, int64_t count) {
  const int64_t group = p.heads / p.kv_heads, h0 = hk0 * group;
  const auto shift = [](AttnTensor& t, int64_t first, size_t elem) {
    if (t.data) t.data = static_cast<unsigned char*>(t.data) + first * t.stride_h * static_cast<int64_t>(elem);
  };
  const size_t e = dtype_size(p.dtype);
  AttnParams s = p;
  s.heads = count * group, s.kv_heads = count;
  shift(s.q, h0, e), shift(s.dout, h0, e), shift(s.out, h0, 4), shift(s.dq, h0, 4);
  shift(s.k, hk0, e), shift(s.v, hk0, e), shift(s.dk, hk0, 4), shift(s.dv, hk0, 4);
  if (s.lse.data) s.lse.data += h0 * s.lse.stride_h;
  if (s.max_logit.data) s.max_logit.data += h0 * s.max_logit.stride_h;
  if (s.delta.data) s.delta.data += h0 * s.delta.stride_h;
  if (s.bias.data) s.bias.data += h0 * s.bias.stride_h;
  if (s.dbias.data) s.dbias.data += h0 * s.dbias.stride_h;
  return s;
}

// Computes on `eng` and aborts `comm` when that fails, so the peers do not wait for this rank.
inline Status compute_or_abort(Communicator* comm, Status computed) {
  if (!computed.ok() && comm) comm->abort(computed.code(), computed.message());
  return computed;
}

// comm == nullptr is a ring of one. out/lse, dq/dk/dv: fp32 [B, n, ...] and [B, H, n]; every pointer is memory of
// `eng`.
Status ring_forward(CpEngine& eng, Communicator* comm, const LocalProblem& lp, const void* q, const void* k, const void* v,
                    float* out, float* lse);
// Writes a rank's ring block [K | V] (kv_message_bytes) at `kv`, in the layout its ring reads: head-major
// (pack_kv_head_major's form) on host engines, token-major (pack_kv's) in the backward on device engines.
using KvWriter = std::function<Status(unsigned char* kv)>;
// ring_forward over host engines that share host memory (lp.host_engines, comm.shares_host_memory()) with the
// queries and the fp32 output head-major ([B, H, n, D]) and the head-major block written by `write_kv` into the
// buffer the ranks share: a2a+p2p's a2a stage writes all three in that form directly.
Status ring_forward_head_major(CpEngine& eng, Communicator& comm, const LocalProblem& lp, const void* q,
                               const KvWriter& write_kv, float* out, float* lse);
// The fp32 dK and dV sums of a rank's own ring block (k_elems and v_elems, in its block's layout), readable until it
// returns.
using KvSumsReader = std::function<Status(const float* dk, const float* dv)>;
// ring_backward over host engines that share host memory, with q, dO and the fp32 dQ (which the steps add to)
// head-major, the rank's head-major [K | V] block written by `write_kv` into the buffer the ranks share, and its
// finished dK/dV sums handed to `take_sums` where they lie: a2a+p2p's a2a stage scatters into and gathers from
// these directly.
Status ring_backward_shared(CpEngine& eng, Communicator& comm, const LocalProblem& lp, const void* q,
                            const KvWriter& write_kv, const float* lse, const float* delta, const void* dout, float* dq,
                            const KvSumsReader& take_sums);
Status ring_backward(CpEngine& eng, Communicator* comm, const LocalProblem& lp, const void* q, const void* k, const void* v,
                     const float* lse, const float* delta, const void* dout, float* dq, float* dk, float* dv);
Status all_gather_forward(CpEngine& eng, Communicator& comm, const LocalProblem& lp, const void* q, const void* k, const void* v,
                          float* out, float* lse);
Status all_gather_backward(CpEngine& eng, Communicator& comm, const LocalProblem& lp, const void* q, const void* k, const void* v,
                           const float* lse, const float* delta, const void* dout, float* dq, float* dk, float* dv);

}  // namespace hcp::cp
