// The all_gather scheme: gather every rank's K and V, put the chunks in natural order, and attend each of the two
// local query chunks c to keys [0, (c+1) S/2W) with a bottom-right causal mask (all keys without a mask). The
// backward gathers again, computes dK/dV for the full sequence and reduce-scatters them to the chunk owners. With
// labels (packed sequences, windows) the gathered rows stay in rank order and one call per pass covers all local
// queries against all keys under the labelled mask. With one batch row each rank's rows are a run of the full
// tensors: device engines gather them there in place; host engines gather head by head into head-major K and V
// (relayout_heads), so the CPU kernel streams each head's rows instead of reading rows a token apart (packing V and
// the transposed K from the token-major gather took a fifth of a packed forward). Over in-process host ranks the
// gathered K and V are one pair that every rank writes its rows into and reads in place (shared_host_buffer.hpp);
// the forward's rows go there in sequence order, where the kernel reads each document's keys as one run.
#include <tuple>
#include <utility>

#include "bias_blocks.hpp"
#include "local_problem.hpp"
#include "sequence_layout.hpp"
#include "../../comm/peer_reads.hpp"
#include "../../comm/shared_host_buffer.hpp"

namespace hcp::cp {
namespace {

// Where rank m's two halves go in the gathered sequence: their chunk numbers (natural order), or rank order when
// labels say where every row is.
int64_t chunk_of(const LocalProblem& lp, int m, int half_index, int w) {
  if (lp.labels) return 2 * m + half_index;
  return half_index == 0 ? m : 2 * w - 1 - m;
}

// Labelled rows in rank order with one batch row: each rank's K and V rows are one run of the full tensors.
bool gathers_in_place(const LocalProblem& lp) { return lp.labels && lp.batch == 1; }
// Whether K and V (and the full dK, dV) are gathered head-major: in place, on host engines (LocalProblem).
bool gathers_heads(const LocalProblem& lp) { return gathers_in_place(lp) && lp.host_engines; }

// The full K and V [B, S, Hkv, D] (head-major where gathers_heads) in natural or rank order: this rank's copies,
// or one pair that every in-process rank shares in place (shared_host_buffer.hpp).
struct GatheredKv {
  EngineBuffer k, v;
  SharedHostBuffer shared;  // [K | V]
  const unsigned char* k_data = nullptr;
  const unsigned char* v_data = nullptr;
  bool in_sequence = false;  // rows in sequence order (lp.labels->all_keys_in_sequence), not rank order
};

// Over ranks that share host memory (and host engines) each rank writes its rows into one shared K and V once, where
// the gather would put them: head-major, head h of rank m at rows [m n, (m + 1) n) of head h's run (gathers_heads),
// or token-major, its two halves at their chunks (chunk_of). The barrier orders every write before any kernel reads.
// With `in_sequence` (gathers_heads only) the head-major rows go in sequence order instead (all_moves): the kernel
// then reads each document's keys as one run, where in rank order it walks them through a key order (key_order.hpp)
// and multiplies the value rows run by run (the packed forward about 2% faster). The tiles, and so the bits, are
// those of the walk. The backward keeps rank order: its dK and dV sums read back each rank's rows in one run.
Status share_kv(CpEngine& eng, Communicator& comm, const LocalProblem& lp, const void* k, const void* v,
                bool in_sequence, GatheredKv* out) {
  const int w = comm.size(), r = comm.rank();
  const size_t e = dtype_size(lp.dtype), full_k_bytes = lp.k_bytes() * static_cast<size_t>(w);
  HCP_TRY(SharedHostBuffer::create(eng, comm, lp.kv_message_bytes() * static_cast<size_t>(w), &out->shared));
  unsigned char* full_k = out->shared.data();
  unsigned char* full_v = full_k + full_k_bytes;
  out->k_data = full_k, out->v_data = full_v;
  // K (head dim D) and V (head dim Dv, MLA) alike.
  const std::tuple<const void*, unsigned char*, int64_t> tensors[] = {{k, full_k, lp.head_dim},
                                                                      {v, full_v, lp.head_dim_v}};
  if (gathers_heads(lp)) {
    out->in_sequence = in_sequence;
    MixedOrder rank_order{{r, 0, r * lp.n, lp.n}};
    for (const RowMove& m : in_sequence ? lp.labels->all_moves : rank_order) {
      if (m.member != r) continue;
      for (const auto& [src, dst, dim] : tensors) {
        const size_t row = static_cast<size_t>(dim) * e, token = static_cast<size_t>(lp.kv_heads) * row;
        const size_t head_run = static_cast<size_t>(lp.n) * row * static_cast<size_t>(w);
        const size_t to = static_cast<size_t>(m.to) * row, from = static_cast<size_t>(m.from) * token;
        // Tokens outside, heads inside (relayout_heads says why).
        HCP_TRY(eng.copy_rows(m.rows, lp.kv_heads, row, dst + to, row, head_run,
                              static_cast<const unsigned char*>(src) + from, token, row));
      }
    }
    return comm.barrier();
  }
  const int64_t half = lp.n / 2, seq = lp.n * w;
  for (const auto& [src, dst, dim] : tensors) {
    const size_t row = static_cast<size_t>(lp.kv_heads * dim) * e;
    for (int hi = 0; hi < 2; ++hi) {
      const size_t to = static_cast<size_t>(chunk_of(lp, r, hi, w) * half) * row, from = hi * half * row;
      HCP_TRY(eng.copy_rows(lp.batch, half, row, dst + to, seq * row, row,
                            static_cast<const unsigned char*>(src) + from, lp.n * row, row));
    }
  }
  return comm.barrier();
}

// All ranks' [K | V] messages, reordered into full K and V [B, S, Hkv, D] and [B, S, Hkv, Dv] in natural order;
// in_sequence: as share_kv says, where it is used.
Status gather_kv(CpEngine& eng, Communicator& comm, const LocalProblem& lp, const void* k, const void* v,
                 bool in_sequence, GatheredKv* out) {
  if (lp.host_engines && comm.shares_host_memory()) return share_kv(eng, comm, lp, k, v, in_sequence, out);
  const int w = comm.size();
  const size_t kb = lp.k_bytes(), vb = lp.v_bytes(), message = lp.kv_message_bytes(), e = dtype_size(lp.dtype);
  EngineBuffer* full_k = &out->k;
  EngineBuffer* full_v = &out->v;
  HCP_TRY(eng.alloc(kb * static_cast<size_t>(w), full_k));
  HCP_TRY(eng.alloc(vb * static_cast<size_t>(w), full_v));
  out->k_data = full_k->as(), out->v_data = full_v->as();
  if (gathers_heads(lp)) {
    // Rank order with one batch row: head h of every rank's block, one after the other, is head h's run of rows in
    // the full sequence, so one gather per head puts them in place, without a reordering copy over the whole KV.
    const size_t k_head = static_cast<size_t>(lp.n * lp.head_dim) * e, v_head = static_cast<size_t>(lp.n * lp.head_dim_v) * e;
    EngineBuffer mine;
    HCP_TRY(eng.alloc(message, &mine));
    HCP_TRY(pack_kv_head_major(eng, lp, k, v, mine.as()));
    for (int64_t h = 0; h < lp.kv_heads; ++h) {
      HCP_TRY(comm.all_gather(mine.as() + h * k_head, full_k->as() + h * k_head * w, k_head));
      HCP_TRY(comm.all_gather(mine.as() + kb + h * v_head, full_v->as() + h * v_head * w, v_head));
    }
    return {};
  }
  if (gathers_in_place(lp)) {  // without the [K | V] message and its reordering copy (two passes over the whole KV)
    HCP_TRY(comm.all_gather(k, full_k->as(), kb));
    return comm.all_gather(v, full_v->as(), vb);
  }
  EngineBuffer mine, all;
  HCP_TRY(eng.alloc(message, &mine));
  HCP_TRY(eng.alloc(message * static_cast<size_t>(w), &all));
  HCP_TRY(pack_kv(eng, lp, k, v, mine.as()));
  HCP_TRY(comm.all_gather(mine.as(), all.as(), message));
  const int64_t half = lp.n / 2, seq = lp.n * w;
  for (int m = 0; m < w; ++m) {
    const unsigned char* block = all.as() + message * static_cast<size_t>(m);
    const std::tuple<const unsigned char*, unsigned char*, int64_t> tensors[] = {
        {block, full_k->as(), lp.head_dim}, {block + kb, full_v->as(), lp.head_dim_v}};
    for (const auto& [src, dst, dim] : tensors) {
      const size_t row = static_cast<size_t>(lp.kv_heads * dim) * e;
      for (int hi = 0; hi < 2; ++hi) {
        const size_t to = static_cast<size_t>(chunk_of(lp, m, hi, w) * half) * row;
        HCP_TRY(eng.copy_rows(lp.batch, half, row, dst + to, seq * row, row, src + hi * half * row, lp.n * row, row));
      }
    }
  }
  return {};
}

// Local query half `hi` (chunk c) against the keys it may see.
Section gather_section(const LocalProblem& lp, int hi, int w, int r) {
  const int64_t half = lp.n / 2, seq = lp.n * w;
  const int64_t keys = lp.causal ? (chunk_of(lp, r, hi, w) + 1) * half : seq;
  return {hi * half, half, 0, keys, lp.causal, keys - half};
}

// The kernel calls of one pass: the two halves with their causal sections, or all rows under the labels. With an
// attention bias, the gathered keys' bias (and gradient, `grad`): their rows are in natural order, or in rank order
// when labels keep them so (a plain sequence's labels come from a window; packed batches take no bias).
template <class Run>
Status for_each_call(const LocalProblem& lp, int w, int r, Buffers buf, const GatheredKv& kv, Run run,
                     bool grad = false) {
  if (lp.bias) {
    std::vector<int64_t> positions(static_cast<size_t>(lp.n * w));
    for (int m = 0; m < w; ++m)
      for (int64_t l = 0; l < lp.n; ++l)
        positions[static_cast<size_t>(m * lp.n + l)] = lp.labels && !kv.in_sequence ? natural_row(lp.n, w, m, l)
                                                                                     : m * lp.n + l;
    lp.bias->set_block(0, std::move(positions));
    buf.bias = lp.bias->bias(0);
    if (grad) buf.dbias = lp.bias->grad(0);
  }
  if (lp.labels) {
    const Section all{0, lp.n, 0, lp.n * w, lp.causal, 0};
    const AttnLabels& keys = kv.in_sequence ? lp.labels->all_keys_in_sequence : lp.labels->all_keys;
    return run(labelled_params(lp, all, lp.n, lp.n * w, buf, keys));
  }
  for (int hi = 0; hi < 2; ++hi) HCP_TRY(run(section_params(lp, gather_section(lp, hi, w, r), lp.n, lp.n * w, buf)));
  return {};
}

// Over ranks that share the gathered K, the key tiles of forward call `p` packed once for all of them: each rank
// packs every W-th tile into one buffer they share (packed, named by *tiles), where each rank's kernel packed every
// tile its queries reach, about all of them (a rank's second chunk of a document sees nearly all of it): 8x the single
// rank's packing at cp 8, about 7% of a packed all_gather forward. The tiles are those the kernel would have packed,
// so the bits do not change. Nothing where the engine packs none for the call (*tiles stays nullptr).
Status share_packed_keys(CpEngine& eng, Communicator& comm, const AttnParams& p, SharedHostBuffer* packed,
                         const float** tiles) {
  const int64_t floats = eng.packed_keys_floats(p);
  if (floats <= 0) return {};
  HCP_TRY(SharedHostBuffer::create(eng, comm, static_cast<size_t>(floats) * sizeof(float), packed));
  auto* dst = reinterpret_cast<float*>(packed->data());
  HCP_TRY(compute_or_abort(&comm, eng.pack_keys(p, comm.rank(), comm.size(), dst)));
  HCP_TRY(comm.barrier());  // every part packed before any kernel reads it
  *tiles = dst;
  return {};
}

// The backward's reduce-scatter over ranks that share host memory, on head-major full dK and dV ([dK | dV] of W n
// rows a head, gathers_heads): this rank's rows of every rank's tensors, added straight out of them in rank order
// (the bits of reduce_scatter_sum) into its token-major dk and dv, without re-laying each rank's full tensors into
// blocks first (two copies of 2 W n rows a rank).
Status sum_own_rows(CpEngine& eng, Communicator& comm, const LocalProblem& lp, const float* full_dkv, float* dk,
                    float* dv) {
  const size_t full_k = static_cast<size_t>(lp.k_elems()) * static_cast<size_t>(comm.size());
  HCP_TRY(eng.zero(dk, static_cast<size_t>(lp.k_elems()) * sizeof(float)));
  HCP_TRY(eng.zero(dv, static_cast<size_t>(lp.v_elems()) * sizeof(float)));
  PeerReads peers;
  HCP_TRY(peers.open(comm, full_dkv));
  const auto add_my_rows = [&](const unsigned char* theirs) -> Status {
    const auto* src = reinterpret_cast<const float*>(theirs);
    // Token by token, so that each pass over dk and dv writes them in order (head by head, each pass strode over
    // the whole of them once per head).
    for (auto [from, to, d] : {std::tuple{src, dk, lp.head_dim}, {src + full_k, dv, lp.head_dim_v}}) {
      const int64_t head_run = lp.n * comm.size() * d, mine = comm.rank() * lp.n * d;
      for (int64_t i = 0; i < lp.n; ++i)
        for (int64_t h = 0; h < lp.kv_heads; ++h)
          HCP_TRY(eng.add_f32(to + (i * lp.kv_heads + h) * d, from + h * head_run + mine + i * d, d));
    }
    return {};
  };
  for (int m = 0; m < comm.size(); ++m) HCP_TRY(peers.read(m, add_my_rows));
  return peers.close();
}

}  // namespace

Status all_gather_forward(CpEngine& eng, Communicator& comm, const LocalProblem& lp, const void* q, const void* k,
                          const void* v, float* out, float* lse) {
  GatheredKv kv;
  HCP_TRY(gather_kv(eng, comm, lp, k, v, true, &kv));
  Buffers buf;
  buf.q = q, buf.k = kv.k_data, buf.v = kv.v_data, buf.out = out, buf.lse = lse, buf.max_logit = lp.max_logit;
  buf.head_major_kv = gathers_heads(lp);
  HeadMajorQueries hm;
  // One call writes each output row once: in the caller's layout, not re-laid after.
  if (buf.head_major_kv) HCP_TRY(queries_head_major(eng, lp, &hm, &buf, false));
  SharedHostBuffer packed;
  const float* packed_keys = nullptr;
  if (lp.host_engines && comm.shares_host_memory())
    HCP_TRY(for_each_call(lp, comm.size(), comm.rank(), buf, kv, [&](const AttnParams& p) {
      return share_packed_keys(eng, comm, p, &packed, &packed_keys);
    }));
  HCP_TRY(for_each_call(lp, comm.size(), comm.rank(), buf, kv, [&](AttnParams p) {
    p.packed_keys = packed_keys;
    return compute_or_abort(&comm, eng.forward(p));
  }));
  return restore_output(eng, lp, buf, out);
}

Status all_gather_backward(CpEngine& eng, Communicator& comm, const LocalProblem& lp, const void* q, const void* k,
                           const void* v, const float* lse, const float* delta, const void* dout, float* dq,
                           float* dk, float* dv) {
  const int w = comm.size();
  GatheredKv kv;
  HCP_TRY(gather_kv(eng, comm, lp, k, v, false, &kv));
  const size_t k_floats = static_cast<size_t>(lp.k_elems()), kv_floats = k_floats + static_cast<size_t>(lp.v_elems());
  // This rank's dK and dV of the full sequence, [dK | dV].
  EngineBuffer full_dkv, blocks, mine;
  HCP_TRY(alloc_elems<float>(eng, static_cast<int64_t>(kv_floats) * w, &full_dkv));
  HCP_TRY(eng.zero(full_dkv.as(), kv_floats * w * sizeof(float)));
  float* full_dk = full_dkv.as<float>();
  float* full_dv = full_dk + k_floats * w;
  Buffers buf;
  buf.q = q, buf.k = kv.k_data, buf.v = kv.v_data, buf.lse = const_cast<float*>(lse), buf.delta = delta;
  buf.dout = dout, buf.dq = dq, buf.dk = full_dk, buf.dv = full_dv;
  buf.head_major_kv = gathers_heads(lp);
  HCP_TRY(for_each_call(
      lp, w, comm.rank(), buf, kv, [&](const AttnParams& p) { return compute_or_abort(&comm, eng.backward(p)); },
      true));
  if (buf.head_major_kv && comm.shares_host_memory()) return sum_own_rows(eng, comm, lp, full_dkv.as<float>(), dk, dv);
  HCP_TRY(alloc_elems<float>(eng, static_cast<int64_t>(kv_floats) * w, &blocks));
  HCP_TRY(alloc_elems<float>(eng, static_cast<int64_t>(kv_floats), &mine));
  // Block m of the reduce-scatter: [dK of rank m's two chunks | dV of them], in rank m's local layout.
  const int64_t half = lp.n / 2, seq = lp.n * w;
  for (int m = 0; m < w; ++m) {
    float* block = blocks.as<float>() + kv_floats * m;
    // dK (head dim D) and dV (Dv).
    const std::tuple<const float*, float*, int64_t> grads[] = {{full_dk, block, lp.head_dim},
                                                               {full_dv, block + k_floats, lp.head_dim_v}};
    for (const auto& [full, to, dim] : grads) {
      const size_t row = static_cast<size_t>(lp.kv_heads * dim) * sizeof(float);
      if (buf.head_major_kv) {
        // Rank m's rows of each head, [m n, (m + 1) n), back to token-major [n, Hkv, D].
        const size_t head = static_cast<size_t>(dim) * sizeof(float);
        HCP_TRY(eng.copy_rows(lp.n, lp.kv_heads, head, to, row, head, full + m * lp.n * dim, head, seq * head));
        continue;
      }
      for (int hi = 0; hi < 2; ++hi) {
        const size_t src = static_cast<size_t>(chunk_of(lp, m, hi, w) * half) * row / sizeof(float);
        const size_t dst = static_cast<size_t>(hi * half) * row / sizeof(float);
        HCP_TRY(eng.copy_rows(lp.batch, half, row, to + dst, lp.n * row, row, full + src, seq * row, row));
      }
    }
  }
  HCP_TRY(comm.reduce_scatter_sum(blocks.as<float>(), mine.as<float>(), kv_floats));
  HCP_TRY(eng.copy_rows(1, 1, k_floats * sizeof(float), dk, 0, 0, mine.as<float>(), 0, 0));
  return eng.copy_rows(1, 1, static_cast<size_t>(lp.v_elems()) * sizeof(float), dv, 0, 0, mine.as<float>() + k_floats,
                       0, 0);
}

}  // namespace hcp::cp
