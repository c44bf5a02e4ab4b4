// Context-parallel attention (reference/cp-attention.md): the four schemes of Transformer Engine - p2p ring,
// a2a (Ulysses), a2a+p2p (hierarchical) and all_gather - forward and backward, over Communicators.
//
// Every rank holds its dual chunks of the sequence (chunk r and chunk 2W-1-r, r = the flat CP rank, which is
// a2a_rank + A * p2p_rank under a2a+p2p) as contiguous [B, S/W, H, D] tensors; shard_sequence / gather_sequence
// convert from and to the full sequence. Results equal single-rank attention over the full sequence; partial
// results are merged in fp32 whatever the input dtype.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "hcp/attention_params.hpp"
#include "hcp/communicator.hpp"
#include "hcp/cp_engine.hpp"
#include "hcp/cp_groups.hpp"
#include "hcp/cp_scheme.hpp"
#include "hcp/log.hpp"
#include "hcp/packed_sequences.hpp"
#include "hcp/parallel_config.hpp"

namespace hcp {

// Attention sinks (Transformer Engine's softmax_type; SinkParams in attention_params.hpp): vanilla has none,
// off_by_one adds a logit 0 to every query row's softmax denominator, learnable a logit per head.
enum class SoftmaxType : int { vanilla = 0, off_by_one = 1, learnable = 2 };
std::string_view softmax_type_name(SoftmaxType type);  // "vanilla", "off-by-one", "learnable" (TE's names)

// One rank's view of the problem.
struct CpShape {
  int64_t batch = 1;
  int64_t seq_local = 0;  // S / W; packed: total_padded / W
  int64_t heads = 0, kv_heads = 0, head_dim = 0;
  // MLA (DeepSeek's 192 for q and k, 128 for v): the head dim of v, out, dout and dv when it differs from head_dim;
  // 0: head_dim.
  int64_t head_dim_v = 0;
  DType dtype = DType::f32;
  bool causal = true;     // within each document
  float scale = 0;      // 0: 1/sqrt(head_dim)
  int kernel_threads = 1;  // CPU kernel threads per rank
  // Packed sequences (thd, packed_sequences.hpp): the documents of the whole batch, the same on every rank; batch
  // must be 1 and the local tensors [seq_local, H, D] hold this rank's chunks of every document. Empty: bshd.
  PackedBatch packed;
  // Sliding window (TE's window_size): query position i sees keys i - window_left .. i + window_right of its
  // document; -1 leaves a side unbounded. With causal, keys after the query stay hidden whatever window_right is.
  int64_t window_left = -1, window_right = -1;
  // Attention sinks: learnable reads sink, H host floats (TE's softmax_offset), the same on every rank; its
  // backward writes the sink's gradient, summed over every query row of the CP group, to d_sink (H host floats,
  // the same sum on every rank; nullptr: not wanted). The forward's lse is then the sink's, lse' (SinkParams).
  SoftmaxType softmax = SoftmaxType::vanilla;
  const float* sink = nullptr;
  float* d_sink = nullptr;
  // Forward, optional: each head's largest logit (scale * q . k over the visible pairs) over the whole batch and
  // every rank of the CP group - Transformer Engine's return_max_logit, what QK-clip reads - as H host floats, the
  // same on every rank (-inf for a head no query sees a key of). Every rank asks for it or none.
  float* max_logit = nullptr;
  // Attention bias (Transformer Engine's post_scale_bias), optional: this rank's query rows of it against every key
  // of the sequence, [bias_batch, bias_heads, bias_rows, S] fp32, contiguous, in the engine's memory - S =
  // seq_local x cp with the keys in natural order, the rows this rank's queries in their local order (TE's layout
  // under CP): bias_batch 1 or batch, bias_heads 1 or heads, bias_rows seq_local, or 1 with batch and heads 1 (TE's
  // 111s). Added to the scaled scores before the softmax. Not with packed sequences (as TE), nor on device engines
  // (the CUDA kernels do not take it yet). Backward, optional: d_bias gets its gradient in the bias's shape (summed
  // over the dimensions it broadcasts; for [1, 1, 1, S], one tensor of the whole group, summed over the group, the
  // same on every rank).
  const float* bias = nullptr;
  int64_t bias_batch = 0, bias_heads = 0, bias_rows = 0;
  float* d_bias = nullptr;
};

// Where a context's tensors live and its kernels run.
struct CpDevice {
  enum class Kind : int { cpu = 0, cuda = 1 };
  Kind kind = Kind::cpu;
  void* stream = nullptr;  // cuda: the cudaStream_t every kernel, copy and NCCL call of the context is ordered on
};

namespace cp {
struct BlockLabels;
}

class CpContext {
 public:
  ~CpContext();
  // Collective over `world`: builds the CP groups of `config` (build_cp_groups, logging at `log_level`) and the
  // context for `comm`, computing on `device`. a2a+p2p needs exactly two hierarchical levels [a2a, p2p]; the other
  // schemes use the flat CP group. With device memory over the in-process world, ranks whose engines share a device
  // copy from each other's buffers device to device, and otherwise stage through host memory (decided together by
  // one all-gather over `world`). Errors: invalid_config, unsupported (no CUDA), and the communicator's.
  static Status create(Communicator& world, const ParallelConfig& config, CpComm comm,
                       std::unique_ptr<CpContext>* out, LogLevel log_level = LogLevel::info,
                       const CpDevice& device = {});
  // The same with an engine of the caller's (cp_engine.hpp).
  static Status create(Communicator& world, const ParallelConfig& config, CpComm comm,
                       std::unique_ptr<CpEngine> engine, std::unique_ptr<CpContext>* out,
                       LogLevel log_level = LogLevel::info);

  // On groups the caller made (nothing is split): `cp`, the CP group in CP rank order, and for a2a+p2p the level
  // groups [a2a, p2p] (empty for the other schemes), borrowed: they must outlive the context. Collective over `cp`.
  // a2a+p2p needs CP rank = a2a rank + a2a size x p2p rank on every member, as Megatron's layout gives; every rank
  // checks every member's ranks (one all-gather), so that all fail alike (invalid_config) when one does not fit.
  static Status create_on_groups(Communicator& cp, const std::vector<Communicator*>& levels, CpComm comm,
                                 std::unique_ptr<CpContext>* out, LogLevel log_level = LogLevel::info,
                                 const CpDevice& device = {});

  CpComm comm() const { return comm_; }
  int cp_rank() const { return groups_.cp->rank(); }
  int cp_size() const { return groups_.cp->size(); }
  const CpGroups& groups() const { return groups_; }

  CpEngine& engine() { return *engine_; }

  // q [B, s, H, D], k [B, s, Hkv, D] and v [B, s, Hkv, Dv] of shape.dtype, contiguous (Dv = head_dim_v, or D);
  // out [B, s, H, Dv]; lse [B, H, s] fp32; all in the
  // engine's memory (device memory for a CUDA context, enqueued on its stream).
  // Collective over the CP group; every rank must pass the same shape (checked: Errc::shape names the ranks).
  Status forward(const CpShape& shape, const void* q, const void* k, const void* v, void* out, float* lse);
  // out and lse as forward returned them; dout like q; dq, dk, dv like q, k, v (shape.dtype).
  Status backward(const CpShape& shape, const void* q, const void* k, const void* v, const void* out,
                  const float* lse, const void* dout, void* dq, void* dk, void* dv);

 private:
  CpContext(CpComm comm, std::unique_ptr<CpEngine> engine, CpGroups groups, bool peer_copy, bool all_host);
  static Status make_engine(Communicator& group, const CpDevice& device, std::unique_ptr<CpEngine>* engine);
  static Status check_given_levels(Communicator& cp, const std::vector<Communicator*>& levels, CpComm comm,
                                   CpEngine* staging);
  static Status check_memory(Communicator& group, const CpEngine& engine);
  // peer_copy: every rank's engine on one device of an in-process world; all_host: every rank's engine on the host.
  static Status survey_engines(Communicator& world, const CpEngine& engine, bool* peer_copy, bool* all_host);
  Status check_shape(const CpShape& shape, bool backward);
  // Attention sinks on the finished forward of heads [h0, h0 + p.heads) (SinkParams without sink, filled here).
  Status apply_sinks(const CpShape& shape, int64_t h0, SinkParams p);
  // The learnable sink's gradient into shape.d_sink, from this rank's lse and delta ([B, H, n]) summed over the
  // CP group.
  Status sink_gradient(const CpShape& shape, int64_t n, const float* lse, const float* delta);
  // shape.max_logit from this rank's per-row maxima `rows` ([B, heads, n], heads h0 ..) and the CP group's.
  Status reduce_max_logit(const CpShape& shape, const float* rows, int64_t heads, int64_t n, int64_t h0);
  // shape.d_bias from this rank's part of it (host, the bias's shape): a [1, 1, 1, S] bias's summed over the group.
  Status bias_gradient(const CpShape& shape, std::vector<float> grad);
  Communicator* exchange_for(Communicator* group, bool peer_copy);
  // The labels of every block of this rank's computation for a packed or windowed shape (kept for the next call
  // with the same documents and window); nullptr for plain shapes.
  Status labels_for(const CpShape& shape, const cp::BlockLabels** out);

  CpComm comm_;
  std::unique_ptr<CpEngine> engine_;  // declared first: destroyed after every communicator that copies through it
  CpGroups groups_;
  // The communicators the data moves over: the groups themselves, or, when the engine's memory is device memory and
  // the groups take host memory, wrappers that move it device to device (ranks on one device) or through host
  // buffers (otherwise). The control exchange (check_shape) uses groups_.cp directly.
  std::vector<std::unique_ptr<Communicator>> exchanges_;
  Communicator* data_cp_ = nullptr;
  Communicator* data_levels_[2] = {nullptr, nullptr};
  // Every rank's engine is a host engine. Then labelled a2a groups put their rows in sequence order
  // (cp::group_order), so the CPU kernels' tiles span whole documents, and labelled all_gathers gather head by head;
  // device engines keep the exchange's member order and the whole-block gathers, which need no copies, where the
  // others would cost a copy launch per document chunk or a collective per head.
  bool all_host_ = false;
  std::unique_ptr<cp::BlockLabels> labels_;
  CpShape labels_shape_;  // what labels_ was built for
};

// How a full sequence tensor is stored: [B, S, H, D] (bshd) or sequence first, [S, B, H, D] (sbhd, Transformer
// Engine's and Megatron's default). A rank's local tensors are bshd either way.
enum class SeqLayout : int { bshd = 0, sbhd = 1 };

// Copies rank r's dual chunks of a full [B, S, H, D] tensor (or [S, B, H, D] with sbhd; elements of elem_bytes)
// into `local` [B, S/W, H, D], and back. S % (2W) == 0 is required (Errc::shape otherwise).
Status shard_sequence(const void* full, void* local, int64_t batch, int64_t seq, int64_t row_elems,
                      size_t elem_bytes, int world, int rank, SeqLayout layout = SeqLayout::bshd);
Status gather_sequence(const void* local, void* full, int64_t batch, int64_t seq, int64_t row_elems,
                       size_t elem_bytes, int world, int rank, SeqLayout layout = SeqLayout::bshd);

// The whole CP computation on `cp` in-process ranks: full q, k, v [B, S, H, D] in, full out and lse out (and with
// dout, the full dq, dk, dv); for demos, tests and the Python binding. hcp_sizes is used by a2a+p2p only.
struct SimulateOptions {
  CpComm comm = CpComm::p2p;
  int cp = 1;
  std::vector<int64_t> hcp_sizes;
  int64_t batch = 1, seq = 0, heads = 0, kv_heads = 0, head_dim = 0;
  int64_t head_dim_v = 0;  // CpShape's: v, out, dout and dv have it (0: head_dim)
  DType dtype = DType::f32;
  bool causal = true;
  float scale = 0;
  int timeout_ms = 60000;
  // Packed: q, k, v are [T, H, D] with T = packed.total_padded() (batch 1, seq ignored); lse [H, T].
  PackedBatch packed;
  int64_t window_left = -1, window_right = -1;  // CpShape's window
  SoftmaxType softmax = SoftmaxType::vanilla;    // CpShape's sinks; learnable reads sink (H floats)
  SeqLayout layout = SeqLayout::bshd;            // of the full q, k, v, dout, out, dq, dk, dv (lse stays [B, H, S])
  const float* sink = nullptr;
  // Attention bias of the whole sequence (CpShape's): [bias_batch, bias_heads, bias_rows, S] fp32 host memory,
  // bias_rows S or 1; each rank takes its query rows. SimulateTensors::d_bias gets its gradient in that shape.
  const float* bias = nullptr;
  int64_t bias_batch = 0, bias_heads = 0, bias_rows = 0;
  // Where the ranks compute: the CPU, or the current CUDA device with one stream per rank (the ranks then exchange
  // by device-to-device copies). make_engine, when set, overrides it (tests, other kernels).
  CpDevice device;
  std::function<std::unique_ptr<CpEngine>()> make_engine;
  int64_t gpus_per_node = 0;  // 0: the layout's default (8); only the group-creation log lines show it
  int kernel_threads = 1;     // CPU kernel threads per rank
  LogLevel log_level = LogLevel::debug;  // of the group-creation lines
};
struct SimulateTensors {
  const void *q = nullptr, *k = nullptr, *v = nullptr;
  void* out = nullptr;
  float* lse = nullptr;           // [B, H, S]
  const void* dout = nullptr;     // backward when set
  void *dq = nullptr, *dk = nullptr, *dv = nullptr;
  float* d_sink = nullptr;        // backward, learnable sink: its gradient (H floats), optional
  float* max_logit = nullptr;     // forward: each head's largest logit (H floats), optional (CpShape::max_logit)
  float* d_bias = nullptr;        // backward, with SimulateOptions::bias: its gradient in its shape, optional
};
// Per-rank summed thread CPU seconds of the forward and backward passes, and the wall time of the slowest rank's
// passes (device work included), for the benchmarks.
struct SimulateTimes {
  double forward_cpu_s = 0, backward_cpu_s = 0;
  double forward_wall_s = 0, backward_wall_s = 0;
};
Status attention_simulate(const SimulateOptions& options, const SimulateTensors& tensors,
                          SimulateTimes* times = nullptr);

// One rank's part of attention_simulate over any communicator of `cp` ranks (an MPI world: one process per rank):
// every rank passes the same full inputs, computes its dual chunks and writes only its own rows of the full
// outputs (chunks cp_rank and 2*cp-1-cp_rank of the sequence). Collective over `world`.
struct RankRun {
  int cp_rank = -1;
  SimulateTimes times;  // this rank's
};
Status attention_rank(Communicator& world, const SimulateOptions& options, const SimulateTensors& tensors,
                      RankRun* run);

}  // namespace hcp
