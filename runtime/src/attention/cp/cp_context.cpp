#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "hcp/cp_attention.hpp"

#include "hcp/attention_cpu.hpp"
#include "hcp/borrowed_communicator.hpp"
#include "hcp/log.hpp"
#include "kv_replication.hpp"
#include "local_problem.hpp"
#include "row_labels.hpp"
#include "sequence_layout.hpp"
#include "bias_blocks.hpp"
#include "../../comm/host_exchange.hpp"
#include "../../comm/peer_copy_communicator.hpp"
#include "../../comm/staged_communicator.hpp"

namespace hcp {

using cp::LocalProblem;

std::string_view softmax_type_name(SoftmaxType type) {
  switch (type) {
    case SoftmaxType::off_by_one: return "off-by-one";
    case SoftmaxType::learnable: return "learnable";
    default: return "vanilla";
  }
}

Status CpContext::create(Communicator& world, const ParallelConfig& config, CpComm comm,
                         std::unique_ptr<CpContext>* out, LogLevel log_level, const CpDevice& device) {
  if (out == nullptr) return Status(Errc::invalid_argument, "CpContext::create: out is NULL");
  std::unique_ptr<CpEngine> engine;
  HCP_TRY(make_engine(world, device, &engine));
  return create(world, config, comm, std::move(engine), out, log_level);
}

// Decided locally: a rank without CUDA fails here before any collective; the others then time out or see it
// abort, so abort the group to make that immediate.
Status CpContext::make_engine(Communicator& group, const CpDevice& device, std::unique_ptr<CpEngine>* engine) {
  if (device.kind != CpDevice::Kind::cuda) {
    *engine = make_cpu_engine();
    return {};
  }
  Status made = make_cuda_engine(device.stream, engine);
  if (!made.ok()) group.abort(made.code(), made.message());
  return made;
}

Status CpContext::create_on_groups(Communicator& cp, const std::vector<Communicator*>& levels, CpComm comm,
                                   std::unique_ptr<CpContext>* out, LogLevel log_level, const CpDevice& device) {
  if (out == nullptr) return Status(Errc::invalid_argument, "CpContext::create_on_groups: out is NULL");
  std::unique_ptr<CpEngine> engine;
  HCP_TRY(make_engine(cp, device, &engine));
  Status checked = check_memory(cp, *engine);
  for (Communicator* level : levels)
    if (checked.ok() && level != nullptr) checked = check_memory(*level, *engine);
  if (checked.ok()) checked = check_given_levels(cp, levels, comm, engine.get());
  if (!checked.ok()) {
    cp.abort(checked.code(), checked.message());
    return checked;
  }
  CpGroups groups;
  groups.cp = std::make_unique<BorrowedCommunicator>(cp);
  for (int r = 0; r < cp.size(); ++r) groups.cp_ranks.push_back(r);  // the caller's world ranks are not known
  for (Communicator* level : levels) groups.levels.push_back(std::make_unique<BorrowedCommunicator>(*level));
  std::string line = "[hcp] cp rank " + std::to_string(cp.rank()) + ": using the caller's CONTEXT_PARALLEL_GROUP size=" +
                     std::to_string(cp.size());
  if (levels.size() == 2)
    line += " and HIERARCHICAL_CONTEXT_PARALLEL_GROUPS sizes=[" + std::to_string(levels[0]->size()) + "," +
            std::to_string(levels[1]->size()) + "]";
  log_line(log_level, line);
  bool peer_copy = false, all_host = false;
  HCP_TRY(survey_engines(cp, *engine, &peer_copy, &all_host));
  out->reset(new CpContext(comm, std::move(engine), std::move(groups), peer_copy, all_host));
  return {};
}

// A communicator that moves device memory (NCCL, the caller's callbacks with device CUDA) hands its buffers to the
// network as device pointers: a host engine's buffers would be read as such. Decided locally (no collective can
// move host data over it), so the group is aborted to fail the other ranks at once.
Status CpContext::check_memory(Communicator& group, const CpEngine& engine) {
  if (!group.device_memory() || engine.device_memory()) return {};
  Status wrong(Errc::invalid_config, "rank " + std::to_string(group.rank()) +
                                         ": the communicator moves device memory (NCCL, or callbacks with device "
                                         "CUDA) but the context computes on the " + engine.name() +
                                         " engine in host memory: create the context with device CUDA");
  group.abort(wrong.code(), wrong.message());
  return wrong;
}

// The level groups a caller gave: two for a2a+p2p (none otherwise), sizes a x p = cp, and every member's CP rank
// equal to its a2a rank + a x its p2p rank (the order the scheme's exchanges assume). Decided from every member's
// ranks, gathered over the CP group, so that every rank returns the same status.
Status CpContext::check_given_levels(Communicator& cp, const std::vector<Communicator*>& levels, CpComm comm,
                                     CpEngine* staging) {
  const bool hierarchical = comm == CpComm::a2a_p2p;
  if (levels.size() != (hierarchical ? 2u : 0u))
    return Status(Errc::invalid_config, hierarchical ? "a2a+p2p needs two level groups [a2a, p2p], got " +
                                                           std::to_string(levels.size())
                                                     : "level groups are for a2a+p2p only");
  if (!hierarchical) return {};
  for (const Communicator* level : levels)
    if (level == nullptr) return Status(Errc::invalid_argument, "a level group is NULL");
  const int32_t mine[3] = {cp.rank(), levels[0]->rank(), levels[1]->rank()};
  std::vector<int32_t> all(static_cast<size_t>(3 * cp.size()));
  HCP_TRY(host_all_gather(cp, staging, mine, all.data(), sizeof mine));
  const int a = levels[0]->size(), p = levels[1]->size();
  if (static_cast<int64_t>(a) * p != cp.size())
    return Status(Errc::invalid_config, "level groups of " + std::to_string(a) + " and " + std::to_string(p) +
                                            " ranks for a CP group of " + std::to_string(cp.size()));
  for (size_t i = 0; i < all.size(); i += 3) {
    if (all[i] != all[i + 1] + a * all[i + 2])
      return Status(Errc::invalid_config, "CP rank " + std::to_string(all[i]) + " has a2a rank " +
                                              std::to_string(all[i + 1]) + " and p2p rank " +
                                              std::to_string(all[i + 2]) + ": a2a+p2p needs CP rank = a2a rank + " +
                                              std::to_string(a) + " x p2p rank (Megatron's layout)");
  }
  return {};
}

Status CpContext::create(Communicator& world, const ParallelConfig& config, CpComm comm,
                         std::unique_ptr<CpEngine> engine, std::unique_ptr<CpContext>* out, LogLevel log_level) {
  if (out == nullptr || engine == nullptr)
    return Status(Errc::invalid_argument, "CpContext::create: out or engine is NULL");
  // Decided from the config alone, so every rank returns here alike and nobody waits for a collective.
  if (comm == CpComm::a2a_p2p && (!config.hcp_sizes || config.hcp_sizes->size() != 2))
    return Status(Errc::invalid_config,
                  "cp_comm_type a2a+p2p needs hierarchical_context_parallel_sizes with two levels [a2a, p2p]");
  HCP_TRY(check_memory(world, *engine));
  CpGroups groups;
  HCP_TRY(build_cp_groups(world, config, &groups, log_level, engine.get()));
  if (comm == CpComm::a2a_p2p) {
    const int a = groups.levels[0]->size();
    if (groups.cp->rank() != groups.levels[0]->rank() + a * groups.levels[1]->rank())
      return Status(Errc::internal, "CP rank " + std::to_string(groups.cp->rank()) + " is not a2a rank + " +
                                        std::to_string(a) + " * p2p rank");
  }
  bool peer_copy = false, all_host = false;
  HCP_TRY(survey_engines(world, *engine, &peer_copy, &all_host));
  out->reset(new CpContext(comm, std::move(engine), std::move(groups), peer_copy, all_host));
  return {};
}

// Over a host-memory world every rank states its engine's device; when all are on one device (and the world is
// in-process) the data moves device to device, otherwise through host memory. Collective, so every rank decides
// alike, whatever engine it has. A device-memory world (NCCL) has device engines only.
Status CpContext::survey_engines(Communicator& world, const CpEngine& engine, bool* peer_copy, bool* all_host) {
  *peer_copy = *all_host = false;
  if (world.device_memory()) return {};
  const int32_t mine = engine.device_memory() ? engine.device_ordinal() : -1;
  std::vector<int32_t> all(static_cast<size_t>(world.size()));
  HCP_TRY(world.all_gather(&mine, all.data(), sizeof(mine)));
  const bool one_device = std::all_of(all.begin(), all.end(), [&](int32_t d) { return d == all[0]; });
  *peer_copy = world.in_process() && all[0] >= 0 && one_device;
  *all_host = one_device && all[0] == -1;
  return {};
}

CpContext::~CpContext() = default;

CpContext::CpContext(CpComm comm, std::unique_ptr<CpEngine> engine, CpGroups groups, bool peer_copy, bool all_host)
    : comm_(comm), engine_(std::move(engine)), groups_(std::move(groups)), all_host_(all_host) {
  data_cp_ = exchange_for(groups_.cp.get(), peer_copy);
  for (size_t i = 0; i < groups_.levels.size() && i < 2; ++i)
    data_levels_[i] = exchange_for(groups_.levels[i].get(), peer_copy);
}

Communicator* CpContext::exchange_for(Communicator* group, bool peer_copy) {
  if (!engine_->device_memory() || group->device_memory()) return group;
  if (peer_copy)
    exchanges_.push_back(std::make_unique<PeerCopyCommunicator>(group, engine_.get(), nullptr));
  else
    exchanges_.push_back(std::make_unique<StagedCommunicator>(group, engine_.get(), nullptr));
  return exchanges_.back().get();
}

namespace {

// The a2a group (nullptr: none) and the ring group (nullptr: a ring of one) of a scheme.
struct Stages {
  Communicator* a2a = nullptr;
  Communicator* ring = nullptr;
};

std::string sink_error(const CpShape& s) {
  if (s.softmax != SoftmaxType::vanilla && s.softmax != SoftmaxType::off_by_one && s.softmax != SoftmaxType::learnable)
    return "softmax type " + std::to_string(static_cast<int>(s.softmax)) + " is not vanilla, off-by-one or learnable";
  if (s.softmax != SoftmaxType::learnable) return {};
  if (s.sink == nullptr) return "a learnable softmax needs its sink values (one per head)";
  for (int64_t h = 0; h < s.heads; ++h)
    if (!std::isfinite(s.sink[h])) return "the sink of head " + std::to_string(h) + " is not finite";
  return {};
}

// FNV-1a, the fingerprints of check_shape's fields that are lists: the low `bytes` bytes of `value` into `h`.
constexpr uint64_t kFnvOffset = 1469598103934665603ull;
uint64_t fnv_mix(uint64_t h, uint64_t value, int bytes) {
  for (int byte = 0; byte < bytes; ++byte) h = (h ^ ((value >> (8 * byte)) & 0xff)) * 1099511628211ull;
  return h;
}

// The sink values' bits: ranks that pass different sinks disagree here.
int64_t sink_fingerprint(const CpShape& s) {
  if (s.softmax != SoftmaxType::learnable || s.sink == nullptr) return 0;
  uint64_t h = kFnvOffset;
  for (int64_t i = 0; i < s.heads; ++i) {
    uint32_t bits = 0;
    std::memcpy(&bits, &s.sink[i], sizeof bits);
    h = fnv_mix(h, bits, 4);
  }
  return static_cast<int64_t>(h >> 1);
}

// The attention bias's fields (CpShape::bias).
std::string bias_error(const CpShape& s, int cp) {
  if (!s.bias) return s.d_bias ? "d_bias is set without a bias" : "";
  if (!s.packed.empty()) return "attention bias does not take packed sequences (thd; Transformer Engine neither)";
  const bool rows_ok = s.bias_rows == s.seq_local || (s.bias_rows == 1 && s.bias_batch == 1 && s.bias_heads == 1);
  if ((s.bias_batch != 1 && s.bias_batch != s.batch) || (s.bias_heads != 1 && s.bias_heads != s.heads) || !rows_ok)
    return "the bias must be [1 or batch, 1 or heads, seq_local, S] or [1, 1, 1, S] (Transformer Engine's shapes), got [" +
           std::to_string(s.bias_batch) + ", " + std::to_string(s.bias_heads) + ", " + std::to_string(s.bias_rows) +
           ", S]";
  int64_t elems = 0;
  if (__builtin_mul_overflow(s.batch * s.seq_local, s.heads, &elems) ||
      __builtin_mul_overflow(elems, s.seq_local * cp, &elems) || elems > (int64_t{1} << 40))
    return "the bias's gradient, batch * heads * seq_local * S, is too large";
  return {};
}

std::string local_problem_error(const CpShape& s, int cp, int64_t a2a, const CpEngine& eng) {
  if (s.batch < 1 || s.seq_local < 1 || s.heads < 1 || s.kv_heads < 1 || s.head_dim < 1)
    return "batch, seq_local, heads, kv_heads and head_dim must be positive";
  if (s.window_left < -1 || s.window_right < -1)
    return "a window side must be -1 (unbounded) or >= 0, got (" + std::to_string(s.window_left) + ", " +
           std::to_string(s.window_right) + ")";
  if (std::string problem = sink_error(s); !problem.empty()) return problem;
  if (!s.packed.empty()) {
    if (s.batch != 1) return "packed sequences (thd) need batch 1, got " + std::to_string(s.batch);
    if (std::string problem = packed_batch_error(s.packed, cp); !problem.empty()) return problem;
    if (s.packed.total_padded() != s.seq_local * cp)
      return "the packed batch has " + std::to_string(s.packed.total_padded()) + " padded tokens, so seq_local must be " +
             std::to_string(s.packed.total_padded() / cp) + ", got " + std::to_string(s.seq_local);
  } else if (s.seq_local * cp > std::numeric_limits<int32_t>::max() && (s.window_left >= 0 || s.window_right >= 0)) {
    return "a windowed sequence is limited to 2^31 - 1 tokens";
  }
  if (s.seq_local % 2 != 0)
    return "the sequence must divide into 2 x cp chunks: local length " + std::to_string(s.seq_local) + " is odd";
  if (s.heads % s.kv_heads != 0)
    return "heads (" + std::to_string(s.heads) + ") must be a multiple of kv_heads (" + std::to_string(s.kv_heads) + ")";
  if (s.heads % a2a != 0)
    return "heads (" + std::to_string(s.heads) + ") must be divisible by the a2a size " + std::to_string(a2a);
  // An a2a wider than the KV heads replicates them (kv_replication.hpp); that needs kv_heads to divide it.
  if (kv_replication(s.kv_heads, a2a) == 0)
    return "kv_heads (" + std::to_string(s.kv_heads) + ") and the a2a size " + std::to_string(a2a) +
           " must divide one another (the a2a splits the KV heads, or replicates them when it is wider)";
  if (s.head_dim > 512) return "head_dim must be at most 512, got " + std::to_string(s.head_dim);
  if (s.head_dim_v < 0 || s.head_dim_v > 512)
    return "head_dim_v must be 0 (head_dim) or in [1, 512], got " + std::to_string(s.head_dim_v);
  if (Status supported = eng.supports(s.dtype, s.head_dim); !supported.ok()) return supported.message();
  if (s.head_dim_v > 0 && s.head_dim_v != s.head_dim)
    if (Status supported = eng.supports(s.dtype, s.head_dim_v); !supported.ok())
      return "head_dim_v: " + supported.message();
  int64_t elems = 0;
  if (__builtin_mul_overflow(s.batch, s.seq_local, &elems) || __builtin_mul_overflow(elems, s.heads, &elems) ||
      __builtin_mul_overflow(elems, std::max(s.head_dim, s.head_dim_v), &elems) || elems > (int64_t{1} << 40))
    return "batch * seq_local * heads * head_dim is too large";
  return bias_error(s, cp);
}

LocalProblem local_problem(const CpShape& s) {
  LocalProblem lp;
  lp.batch = s.batch, lp.n = s.seq_local, lp.heads = s.heads, lp.kv_heads = s.kv_heads, lp.head_dim = s.head_dim;
  lp.head_dim_v = s.head_dim_v > 0 ? s.head_dim_v : s.head_dim;
  lp.dtype = s.dtype, lp.causal = s.causal, lp.threads = std::max(1, s.kernel_threads);
  lp.scale = s.scale > 0 ? s.scale : 1.0f / std::sqrt(static_cast<float>(s.head_dim));
  return lp;
}

// The problem after an a2a over `a` ranks: a times the tokens, 1/a of the heads.
// The problem with each KV head replicated f times, and its K and V made so when f > 1 (k and v then point there).
LocalProblem with_kv_replicas(LocalProblem lp, int64_t f) {
  lp.kv_heads *= f;
  return lp;
}
Status replicate_kv(CpEngine& eng, const LocalProblem& lp, int64_t f, const void** k, const void** v,
                    EngineBuffer* k_rep, EngineBuffer* v_rep) {
  if (f == 1) return {};
  const LocalProblem lr = with_kv_replicas(lp, f);
  HCP_TRY(eng.alloc(lr.k_bytes(), k_rep));
  HCP_TRY(eng.alloc(lr.v_bytes(), v_rep));
  HCP_TRY(cp::replicate_kv_heads(eng, lp, lp.head_dim, f, *k, k_rep->as()));
  HCP_TRY(cp::replicate_kv_heads(eng, lp, lp.head_dim_v, f, *v, v_rep->as()));
  *k = k_rep->as(), *v = v_rep->as();
  return {};
}

LocalProblem after_a2a(LocalProblem lp, int a) {
  lp.n *= a, lp.heads /= a, lp.kv_heads /= a;
  return lp;
}

// The exchanged tensors' shapes: q (and dq), the output (out, dout: the value head dim), K (and dK), V (and dV).
cp::SeqTensor q_geometry(const LocalProblem& lp, size_t elem) { return {lp.batch, lp.n, lp.heads, lp.head_dim, elem}; }
cp::SeqTensor o_geometry(const LocalProblem& lp, size_t elem) {
  return {lp.batch, lp.n, lp.heads, lp.head_dim_v, elem};
}
cp::SeqTensor k_geometry(const LocalProblem& lp, size_t elem) {
  return {lp.batch, lp.n, lp.kv_heads, lp.head_dim, elem};
}
cp::SeqTensor v_geometry(const LocalProblem& lp, size_t elem) {
  return {lp.batch, lp.n, lp.kv_heads, lp.head_dim_v, elem};
}

size_t bytes_of(int64_t elems, size_t elem) { return static_cast<size_t>(elems) * elem; }

// Both offset lists (fnv_mix): ranks that pass different documents disagree here.
int64_t fingerprint(const PackedBatch& packed) {
  uint64_t h = kFnvOffset;
  for (const auto* list : {&packed.cu_seqlens, &packed.cu_seqlens_padded}) {
    for (int64_t x : *list) h = fnv_mix(h, static_cast<uint64_t>(x), 8);
    h = fnv_mix(h, 0xff, 1);
  }
  return static_cast<int64_t>(h >> 1);
}

}  // namespace

Status CpContext::check_shape(const CpShape& shape, bool backward) {
  const int64_t a2a = comm_ == CpComm::a2a ? cp_size() : comm_ == CpComm::a2a_p2p ? groups_.levels[0]->size() : 1;
  const std::string problem = local_problem_error(shape, cp_size(), a2a, *engine_);
  uint32_t scale_bits = 0;
  std::memcpy(&scale_bits, &shape.scale, sizeof scale_bits);
  constexpr int kFields = 21;
  const bool sinks_valid = problem.empty();  // sink values are read only once they are known to be there
  const int64_t mine[kFields] = {problem.empty() ? 0 : 1, shape.batch, shape.seq_local, shape.heads, shape.kv_heads,
                                 shape.head_dim, static_cast<int64_t>(shape.dtype), shape.causal, backward,
                                 scale_bits, shape.packed.documents(), fingerprint(shape.packed), shape.window_left,
                                 shape.window_right, static_cast<int64_t>(shape.softmax),
                                 sinks_valid ? sink_fingerprint(shape) : 0, shape.max_logit != nullptr,
                                 shape.head_dim_v > 0 ? shape.head_dim_v : shape.head_dim,
                                 shape.bias ? shape.bias_batch : 0, shape.bias ? shape.bias_heads : 0,
                                 shape.bias ? shape.bias_rows : 0};
  if (cp_size() == 1) {
    if (!problem.empty()) return Status(Errc::shape, "CP rank 0: " + problem);
    return {};
  }
  // Each rank compares its fields with its ring predecessor's (equal neighbours all round: all equal), then the
  // ranks share one verdict byte each, so that every rank fails together and names the rank that knows why.
  // Memory is O(cp) per rank, not O(cp * fields): in one process with thousands of ranks that is the difference
  // between megabytes and gigabytes.
  const int n = cp_size(), me = cp_rank(), prev = (me + n - 1) % n;
  int64_t theirs[kFields] = {};
  HCP_TRY(host_send_recv(*groups_.cp, engine_.get(), mine, sizeof(mine), (me + 1) % n, theirs, sizeof(theirs), prev));
  static const char* const names[] = {"", "batch", "seq_local", "heads", "kv_heads", "head_dim", "dtype", "causal",
                                      "pass", "scale", "packed documents", "cu_seqlens (fingerprint)",
                                      "window_left", "window_right", "softmax type", "sink values (fingerprint)",
                                      "max logit (asked for)", "head_dim_v", "bias batch", "bias heads",
                                      "bias rows"};
  // A verdict byte: 0 agrees, 1 has an invalid shape of its own, 1 + i differs from its predecessor on field i.
  int differs = 0;
  for (int i = 1; i < kFields && !differs; ++i)
    if (theirs[i] != mine[i]) differs = i;
  const auto verdict = static_cast<unsigned char>(!problem.empty() ? 1 : differs ? 1 + differs : 0);
  std::vector<unsigned char> verdicts(static_cast<size_t>(n));
  HCP_TRY(host_all_gather(*groups_.cp, engine_.get(), &verdict, verdicts.data(), 1));
  if (!problem.empty()) return Status(Errc::shape, "CP rank " + std::to_string(me) + ": " + problem);
  if (differs)
    return Status(Errc::shape, "CP ranks disagree on " + std::string(names[differs]) + ": rank " +
                                   std::to_string(me) + " has " + std::to_string(mine[differs]) + ", rank " +
                                   std::to_string(prev) + " has " + std::to_string(theirs[differs]));
  for (int r = 0; r < n; ++r) {
    const int v = verdicts[static_cast<size_t>(r)];
    if (v == 1) return Status(Errc::shape, "CP rank " + std::to_string(r) + " has an invalid shape (see its error)");
    if (v > 1)
      return Status(Errc::shape, "CP ranks disagree on " + std::string(names[v - 1]) + ": rank " + std::to_string(r) +
                                     " differs from rank " + std::to_string((r + n - 1) % n) + " (see its error)");
  }
  return {};
}

namespace {

// Whether [a, a + an) and [b, b + bn) share a byte (engine pointers of one address space: host or CUDA UVA).
bool overlaps(const void* a, size_t an, const void* b, size_t bn) {
  const auto x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
  return x < y + bn && y < x + an;
}

Stages stages_of(CpComm comm, Communicator* cp, Communicator* const levels[2]) {
  switch (comm) {
    case CpComm::p2p:
      return {nullptr, cp};
    case CpComm::a2a:
      return {cp, nullptr};
    case CpComm::a2a_p2p:
      return {levels[0]->size() > 1 ? levels[0] : nullptr, levels[1]};
    case CpComm::all_gather:
      break;
  }
  return {};
}

// The whole batch the CP ranks share: the packed documents, or a plain sequence as one document.
PackedBatch whole_batch(const CpShape& shape, int w) {
  return shape.packed.empty() ? PackedBatch{{0, shape.seq_local * w}, {}} : shape.packed;
}

// The CP ranks of ring member p's a2a group of size a, in member order (flat CP rank of member m is m + a * p).
std::vector<int> group_members(int a, int p) {
  std::vector<int> members;
  for (int m = 0; m < a; ++m) members.push_back(m + a * p);
  return members;
}

// The moves of this rank's a2a group (sequence_layout.hpp): sequence order, the natural order plain causal sections
// need and whole documents for labelled ones on host engines, or member order (CpContext::all_host_).
cp::MixedOrder mixed_order(const CpShape& shape, int w, const Stages& st, bool in_sequence) {
  const int p = st.ring ? st.ring->rank() : 0;
  return cp::group_order(whole_batch(shape, w), w, group_members(st.a2a->size(), p), in_sequence).moves;
}

// Whether a2a+p2p's a2a stage writes the ring's operands where the ring reads them (cp::ring_forward_head_major,
// cp::ring_backward_shared): host engines (decided collectively: all_host) whose a2a and ring members all share
// host memory.
bool a2a_ring_share_memory(const CpEngine& eng, const Stages& st, bool all_host) {
  return all_host && st.ring != nullptr && cp::a2a_reads_in_place(eng, *st.a2a) && st.ring->shares_host_memory();
}

// The ring block's writer for a2a+p2p over shared memory: the a2a scatters K and V head-major straight into it.
cp::KvWriter kv_into_ring_block(CpEngine& eng, Communicator& a2a, const cp::MixedOrder& order, const cp::SeqTensor& kg,
                                const cp::SeqTensor& vg, const void* k, const void* v) {
  return [&eng, &a2a, &order, kg, vg, k, v](unsigned char* kv) -> Status {
    HCP_TRY(cp::a2a_scatter_heads_head_major(eng, a2a, order, kg, k, kv));
    return cp::a2a_scatter_heads_head_major(eng, a2a, order, vg, v, kv + kg.bytes());
  };
}

// The bias as given (CpShape::bias, the engine's memory) in host memory, where the blocks are gathered.
Status bias_on_host(CpEngine& eng, const CpShape& s, int w, std::vector<float>* host) {
  host->resize(static_cast<size_t>(s.bias_batch * s.bias_heads * s.bias_rows * s.seq_local * w));
  return eng.download(host->data(), s.bias, host->size() * sizeof(float));
}

// Attention bias (bias_blocks.hpp) of a rank that computes its own query rows against blocks of keys: the ring
// members' rows (`ring`: p2p), or the gathered keys (all_gather, whose block all_gather.cpp sets). `host` keeps the
// rows.
Status own_rows_bias(CpEngine& eng, const CpShape& s, int w, const LocalProblem& lp, bool ring, bool grad,
                     std::vector<float>* host, std::unique_ptr<cp::BiasBlocks>* out) {
  HCP_TRY(bias_on_host(eng, s, w, host));
  const int64_t seq = lp.n * w, q = s.bias_rows;
  const AttnPairs given{host->data(), s.bias_heads * q * seq, q * seq, seq, 1};
  // One kernel thread on a host engine adds the broadcast rows' and heads' gradients into one (bias_blocks.hpp): a
  // gradient per (batch row, head) would be H x larger than an 11ss bias, most of a backward's time in page faults.
  const bool shared = !eng.device_memory() && lp.threads <= 1;
  *out = std::make_unique<cp::BiasBlocks>(eng, given, s.bias_batch, s.bias_heads, q, seq, lp.batch, lp.heads, lp.n,
                                          grad, shared);
  for (int src = 0; ring && src < w; ++src) {
    std::vector<int64_t> positions(static_cast<size_t>(lp.n));
    for (int64_t l = 0; l < lp.n; ++l) positions[static_cast<size_t>(l)] = cp::natural_row(lp.n, w, src, l);
    (*out)->set_block(static_cast<size_t>(src), std::move(positions));
  }
  return {};
}

// The same after an a2a: the rank computes its a2a group's rows (`order`) on its head group, so each member's bias
// rows go where its queries went - the bias [Bb, Hb, n, S] laid token-major [Bb, n, slots, S] and scattered as the
// queries are, into `host` - and the ring's blocks are the a2a groups' rows. A per-head bias has a slot per head (the
// a2a splits them); a bias shared by the heads one slot per a2a member, so that each gets every group row once. A
// bias broadcast over queries (111s) needs no exchange.
Status a2a_rows_bias(CpEngine& eng, Communicator& a2a, const cp::MixedOrder& order, const CpShape& s, int w,
                     const LocalProblem& lp, const LocalProblem& mixed, int ring, bool in_sequence, bool grad,
                     std::vector<float>* host, std::unique_ptr<cp::BiasBlocks>* out) {
  const int64_t seq = lp.n * w, heads = lp.heads;
  std::vector<float> given;
  HCP_TRY(bias_on_host(eng, s, w, &given));
  if (s.bias_rows == 1) {
    *host = std::move(given);
    *out = std::make_unique<cp::BiasBlocks>(eng, AttnPairs{host->data(), 0, 0, 0, 1}, 1, 1, 1, seq, lp.batch,
                                            mixed.heads, mixed.n, grad, !eng.device_memory() && lp.threads <= 1);
  } else {
    const int64_t slots = s.bias_heads > 1 ? heads : a2a.size(), mixed_heads = slots / a2a.size();
    const cp::SeqTensor local{s.bias_batch, lp.n, slots, seq, sizeof(float)};
    host->resize(local.bytes() / sizeof(float));
    for (int64_t b = 0; b < s.bias_batch; ++b)
      for (int64_t l = 0; l < lp.n; ++l)
        for (int64_t h = 0; h < slots; ++h)
          std::copy_n(given.data() + ((b * s.bias_heads + (s.bias_heads > 1 ? h : 0)) * lp.n + l) * seq, seq,
                      host->data() + ((b * lp.n + l) * slots + h) * seq);
    EngineBuffer token_major, mixed_rows, scratch;
    HCP_TRY(eng.alloc(local.bytes(), &token_major));
    HCP_TRY(eng.alloc(local.bytes(), &mixed_rows));
    HCP_TRY(eng.alloc(2 * local.bytes(), &scratch));
    HCP_TRY(eng.upload(token_major.as(), host->data(), local.bytes()));
    HCP_TRY(cp::a2a_scatter_heads(eng, a2a, order, local, token_major.as(), mixed_rows.as(), scratch.as()));
    HCP_TRY(eng.download(host->data(), mixed_rows.as(), local.bytes()));
    const AttnPairs rows{host->data(), mixed.n * mixed_heads * seq, seq, mixed_heads * seq, 1};
    *out = std::make_unique<cp::BiasBlocks>(eng, rows, s.bias_batch, mixed_heads, mixed.n, seq, lp.batch,
                                            mixed.heads, mixed.n, grad, !eng.device_memory() && lp.threads <= 1);
  }
  const int a = a2a.size();
  for (int p = 0; p < ring; ++p) {
    const std::vector<int> members = group_members(a, p);
    (*out)->set_block(static_cast<size_t>(p),
                      cp::mixed_positions(cp::group_order(whole_batch(s, w), w, members, in_sequence).moves, members,
                                          lp.n, w));
  }
  return {};
}

bool same_labels(const CpShape& a, const CpShape& b) {
  return a.packed.cu_seqlens == b.packed.cu_seqlens && a.packed.cu_seqlens_padded == b.packed.cu_seqlens_padded &&
         a.window_left == b.window_left && a.window_right == b.window_right && a.seq_local == b.seq_local &&
         a.causal == b.causal;
}

}  // namespace

Status CpContext::labels_for(const CpShape& shape, const cp::BlockLabels** out) {
  *out = nullptr;
  if (shape.packed.empty() && shape.window_left < 0 && shape.window_right < 0) return {};
  if (labels_ && same_labels(shape, labels_shape_)) {
    *out = labels_.get();
    return {};
  }
  labels_.reset();
  const int w = cp_size();
  // A plain sequence is the packed batch of one document.
  const PackedBatch batch = whole_batch(shape, w);
  std::vector<cp::RowRuns> runs;
  auto labels = std::make_unique<cp::BlockLabels>();
  if (comm_ == CpComm::all_gather) {
    for (int m = 0; m < w; ++m) runs.push_back(cp::rank_runs(batch, w, m));
    labels->me = cp_rank();
    HCP_TRY(cp::upload_runs(*engine_, cp::concat_runs(runs), labels.get(), &labels->all_keys));
    if (all_host_) {  // host ranks that share memory write the forward's K and V in sequence order (all_gather.cpp)
      cp::GroupOrder in_sequence = cp::group_order(batch, w, group_members(w, 0));
      HCP_TRY(cp::upload_runs(*engine_, in_sequence.runs, labels.get(), &labels->all_keys_in_sequence));
      labels->all_moves = std::move(in_sequence.moves);
    }
  } else {
    // Ring member p's block: its a2a group's rows in mixed_order's order, its own rows without an a2a.
    const Stages st = stages_of(comm_, data_cp_, data_levels_);
    const int a = st.a2a ? st.a2a->size() : 1, ring = st.ring ? st.ring->size() : 1;
    labels->me = st.ring ? st.ring->rank() : 0;
    for (int p = 0; p < ring; ++p)
      runs.push_back(cp::group_order(batch, w, group_members(a, p), all_host_).runs);
  }
  labels->window_left = shape.window_left, labels->window_right = shape.window_right;
  const cp::RowRuns& mine = runs[static_cast<size_t>(labels->me)];
  for (const cp::RowRuns& block : runs) {
    labels->blocks.emplace_back();
    HCP_TRY(cp::upload_runs(*engine_, block, labels.get(), &labels->blocks.back()));
    labels->seen.push_back(cp::any_visible(mine, block, shape.causal, shape.window_left, shape.window_right) ? 1 : 0);
  }
  labels_ = std::move(labels);
  labels_shape_ = shape;
  *out = labels_.get();
  return {};
}

Status CpContext::forward(const CpShape& shape, const void* q, const void* k, const void* v, void* out, float* lse) {
  if (!q || !k || !v || !out || !lse) return Status(Errc::invalid_argument, "CP forward: a tensor pointer is NULL");
  HCP_TRY(check_shape(shape, false));
  CpEngine& eng = *engine_;
  LocalProblem lp = local_problem(shape);
  lp.host_engines = all_host_;
  HCP_TRY(labels_for(shape, &lp.labels));
  EngineBuffer out32, max_rows;
  if (shape.max_logit) HCP_TRY(cp::alloc_elems<float>(eng, lp.batch * lp.heads * lp.n, &max_rows));
  lp.max_logit = shape.max_logit ? max_rows.as<float>() : nullptr;
  const Stages st = stages_of(comm_, data_cp_, data_levels_);
  std::unique_ptr<cp::BiasBlocks> bias;
  std::vector<float> bias_rows;
  if (comm_ == CpComm::all_gather || st.a2a == nullptr) {
    if (shape.bias) {
      HCP_TRY(own_rows_bias(eng, shape, cp_size(), lp, comm_ != CpComm::all_gather, false, &bias_rows, &bias));
      lp.bias = bias.get();
    }
    // An fp32 output is the kernels' own form: written in place, not through a copy, unless it shares memory with
    // an input (a ring of one writes it while still reading k and v).
    const size_t o_bytes = static_cast<size_t>(lp.o_elems()) * sizeof(float);
    const bool in_place = lp.dtype == DType::f32 && !overlaps(out, o_bytes, q, bytes_of(lp.q_elems(), 4)) &&
                          !overlaps(out, o_bytes, k, lp.k_bytes()) && !overlaps(out, o_bytes, v, lp.v_bytes());
    float* o32 = static_cast<float*>(out);
    if (!in_place) {
      HCP_TRY(cp::alloc_elems<float>(eng, lp.o_elems(), &out32));
      o32 = out32.as<float>();
    }
    if (comm_ == CpComm::all_gather)
      HCP_TRY(cp::all_gather_forward(eng, *data_cp_, lp, q, k, v, o32, lse));
    else
      HCP_TRY(cp::ring_forward(eng, st.ring, lp, q, k, v, o32, lse));
    SinkParams sinks;
    sinks.batch = lp.batch, sinks.heads = lp.heads, sinks.rows = lp.n, sinks.head_dim = lp.head_dim_v;
    sinks.out = o32, sinks.lse = lse;
    sinks.out_h = lp.head_dim_v, sinks.out_r = lp.heads * lp.head_dim_v, sinks.out_b = lp.n * sinks.out_r;
    HCP_TRY(apply_sinks(shape, 0, sinks));
    if (shape.max_logit) HCP_TRY(reduce_max_logit(shape, max_rows.as<float>(), lp.heads, lp.n, 0));
    return in_place ? Status{} : eng.convert_from_f32(o32, out, lp.dtype, lp.o_elems());
  }
  HCP_TRY(cp::alloc_elems<float>(eng, lp.o_elems(), &out32));
  const int a = st.a2a->size();
  const size_t e = dtype_size(lp.dtype);
  const int64_t f = kv_replication(lp.kv_heads, a);
  const LocalProblem lr = with_kv_replicas(lp, f);
  EngineBuffer k_rep, v_rep;
  HCP_TRY(replicate_kv(eng, lp, f, &k, &v, &k_rep, &v_rep));
  const LocalProblem mixed = after_a2a(lr, a);
  const auto qg = q_geometry(lp, e), og = o_geometry(lp, e), kg = k_geometry(lr, e), vg = v_geometry(lr, e);
  // The queries' buffer takes the output back in the caller's dtype too.
  EngineBuffer qa, lse_mixed, row_scratch;
  HCP_TRY(eng.alloc(std::max(qg.bytes(), og.bytes()), &qa));
  const int64_t rows = lp.batch * lp.heads * lp.n;
  HCP_TRY(cp::alloc_elems<float>(eng, rows, &lse_mixed));
  HCP_TRY(cp::alloc_elems<float>(eng, 2 * rows, &row_scratch));
  const cp::MixedOrder order = mixed_order(shape, cp_size(), st, lp.labels == nullptr || all_host_);
  // Over host engines whose ranks share host memory the a2a writes the ring's operands in the ring's own
  // head-major form, K and V straight into the block the ring's ranks share, and gathers the head-major output
  // back: one copy of each tensor where the a2a and the ring's re-layout made two (about 6% of the ranks' time in
  // the packed a2a+p2p forward).
  const bool head_major = a2a_ring_share_memory(eng, st, all_host_);
  LocalProblem mixed_lp = mixed;
  if (shape.bias) {
    HCP_TRY(a2a_rows_bias(eng, *st.a2a, order, shape, cp_size(), lp, mixed, st.ring ? st.ring->size() : 1,
                          lp.labels == nullptr || all_host_, false, &bias_rows, &bias));
    mixed_lp.bias = bias.get();
  }
  EngineBuffer ka, va, scratch;
  if (head_major) {
    HCP_TRY(cp::a2a_scatter_heads_head_major(eng, *st.a2a, order, qg, q, qa.as()));
    const cp::KvWriter write_kv = kv_into_ring_block(eng, *st.a2a, order, kg, vg, k, v);
    HCP_TRY(cp::ring_forward_head_major(eng, *st.ring, mixed_lp, qa.as(), write_kv, out32.as<float>(),
                                        lse_mixed.as<float>()));
  } else {
    HCP_TRY(eng.alloc(kg.bytes(), &ka));
    HCP_TRY(eng.alloc(vg.bytes(), &va));
    HCP_TRY(eng.alloc(2 * std::max(qg.bytes(), og.bytes()), &scratch));
    HCP_TRY(cp::a2a_scatter_heads(eng, *st.a2a, order, qg, q, qa.as(), scratch.as()));
    HCP_TRY(cp::a2a_scatter_heads(eng, *st.a2a, order, kg, k, ka.as(), scratch.as()));
    HCP_TRY(cp::a2a_scatter_heads(eng, *st.a2a, order, vg, v, va.as(), scratch.as()));
    HCP_TRY(cp::ring_forward(eng, st.ring, mixed_lp, qa.as(), ka.as(), va.as(), out32.as<float>(),
                             lse_mixed.as<float>()));
  }
  // Sinks on the a2a's side, in fp32: this rank holds a2a group rank j's heads j x H/a .. (j + 1) x H/a - 1 of
  // every token (a2a_scatter_heads sends head group j to rank j), token-major or head-major.
  SinkParams sinks;
  const int64_t dv = lp.head_dim_v;
  sinks.batch = lp.batch, sinks.heads = mixed.heads, sinks.rows = mixed.n, sinks.head_dim = dv;
  sinks.out = out32.as<float>(), sinks.lse = lse_mixed.as<float>();
  sinks.out_b = mixed.n * mixed.heads * dv;
  sinks.out_h = head_major ? mixed.n * dv : dv;
  sinks.out_r = head_major ? dv : mixed.heads * dv;
  HCP_TRY(apply_sinks(shape, static_cast<int64_t>(st.a2a->rank()) * mixed.heads, sinks));
  if (shape.max_logit)
    HCP_TRY(reduce_max_logit(shape, max_rows.as<float>(), mixed.heads, mixed.n,
                             static_cast<int64_t>(st.a2a->rank()) * mixed.heads));
  // Back to the caller's dtype before the inverse exchange, as Transformer Engine does: half the bytes to move (an
  // fp32 output goes as it is). The conversion keeps the layout, head-major or not.
  const void* mixed_out = out32.as();
  if (lp.dtype != DType::f32) {
    HCP_TRY(eng.convert_from_f32(out32.as<float>(), qa.as(), lp.dtype, lp.o_elems()));
    mixed_out = qa.as();
  }
  if (head_major)
    HCP_TRY(cp::a2a_gather_heads_head_major(eng, *st.a2a, order, og, mixed_out, out));
  else
    HCP_TRY(cp::a2a_gather_heads(eng, *st.a2a, order, og, mixed_out, out, scratch.as()));
  return cp::a2a_gather_rows(eng, *st.a2a, order, lp.batch, lp.heads, lp.n, lse_mixed.as<float>(), lse,
                             row_scratch.as<float>());
}

// Each head's maximum over this rank's rows, then over the CP group's (max is exact: any order gives the same bits).
// Collective whenever max_logit is asked for (the same on every rank, check_shape).
Status CpContext::reduce_max_logit(const CpShape& shape, const float* rows, int64_t heads, int64_t n, int64_t h0) {
  const auto count = static_cast<size_t>(shape.batch * heads * n), all_heads = static_cast<size_t>(shape.heads);
  std::vector<float> host(count);
  HCP_TRY(engine_->download(host.data(), rows, count * sizeof(float)));
  std::vector<float> mine(all_heads, -std::numeric_limits<float>::infinity());
  for (int64_t b = 0; b < shape.batch; ++b)
    for (int64_t h = 0; h < heads; ++h) {
      const float* row = host.data() + (b * heads + h) * n;
      float& m = mine[static_cast<size_t>(h0 + h)];
      for (int64_t i = 0; i < n; ++i) m = std::max(m, row[i]);
    }
  std::vector<float> everyone(all_heads * static_cast<size_t>(cp_size()));
  HCP_TRY(host_all_gather(*groups_.cp, engine_.get(), mine.data(), everyone.data(), all_heads * sizeof(float)));
  for (size_t h = 0; h < all_heads; ++h) {
    float m = -std::numeric_limits<float>::infinity();
    for (size_t r = 0; r < static_cast<size_t>(cp_size()); ++r) m = std::max(m, everyone[r * all_heads + h]);
    shape.max_logit[h] = m;
  }
  return {};
}

// The bias's gradient from the full one of this rank's rows ([B, n, H, S], token-major) into shape.d_bias; a bias
// broadcast over queries (111s) is one tensor of the whole group, so its gradient is the group's sum (in rank order,
// the same bits on every rank), as the learnable sink's is.
Status CpContext::bias_gradient(const CpShape& shape, std::vector<float> grad) {
  const int w = cp_size();
  if (shape.bias_rows == 1 && w > 1) {
    std::vector<float> all(grad.size() * static_cast<size_t>(w));
    HCP_TRY(host_all_gather(*groups_.cp, engine_.get(), grad.data(), all.data(), grad.size() * sizeof(float)));
    for (size_t j = 0; j < grad.size(); ++j) {
      float sum = 0;
      for (size_t r = 0; r < static_cast<size_t>(w); ++r) sum += all[r * grad.size() + j];
      grad[j] = sum;
    }
  }
  return engine_->upload(shape.d_bias, grad.data(), grad.size() * sizeof(float));
}

Status CpContext::apply_sinks(const CpShape& shape, int64_t h0, SinkParams p) {
  if (shape.softmax == SoftmaxType::vanilla) return {};
  std::vector<float> values(static_cast<size_t>(p.heads), 0.0f);  // off-by-one: a logit 0
  if (shape.softmax == SoftmaxType::learnable) std::copy_n(shape.sink + h0, p.heads, values.begin());
  EngineBuffer sink;
  HCP_TRY(cp::alloc_elems<float>(*engine_, p.heads, &sink));
  HCP_TRY(engine_->upload(sink.as(), values.data(), values.size() * sizeof(float)));
  p.sink = sink.as<float>();
  return engine_->apply_sink(p);
}

// dsink[h] = -sum over the group's query rows of exp(sink[h] - lse') x delta (SinkParams): each rank's rows here,
// in double, then the ranks' sums added in rank order, so every rank writes the same bits. Collective whenever the
// softmax is learnable (the same on every rank, check_shape), whether or not this rank wants the result.
Status CpContext::sink_gradient(const CpShape& shape, int64_t n, const float* lse, const float* delta) {
  if (shape.softmax != SoftmaxType::learnable) return {};
  const size_t rows = static_cast<size_t>(shape.batch * shape.heads * n), heads = static_cast<size_t>(shape.heads);
  std::vector<float> l(rows), d(rows);  // host copies: a device engine's lse and delta live on the GPU
  HCP_TRY(engine_->download(l.data(), lse, rows * sizeof(float)));
  HCP_TRY(engine_->download(d.data(), delta, rows * sizeof(float)));
  std::vector<double> mine(heads, 0.0), all(heads * static_cast<size_t>(cp_size()));
  sink_gradient_cpu(shape.batch, shape.heads, n, l.data(), d.data(), shape.sink, mine.data());
  HCP_TRY(host_all_gather(*groups_.cp, engine_.get(), mine.data(), all.data(), heads * sizeof(double)));
  if (shape.d_sink == nullptr) return {};
  for (size_t h = 0; h < heads; ++h) {
    double sum = 0;
    for (size_t r = 0; r < static_cast<size_t>(cp_size()); ++r) sum += all[r * heads + h];
    shape.d_sink[h] = static_cast<float>(sum);
  }
  return {};
}

Status CpContext::backward(const CpShape& shape, const void* q, const void* k, const void* v, const void* out,
                           const float* lse, const void* dout, void* dq, void* dk, void* dv) {
  if (!q || !k || !v || !out || !lse || !dout || !dq || !dk || !dv)
    return Status(Errc::invalid_argument, "CP backward: a tensor pointer is NULL");
  HCP_TRY(check_shape(shape, true));
  CpEngine& eng = *engine_;
  LocalProblem lp = local_problem(shape);
  lp.host_engines = all_host_;
  HCP_TRY(labels_for(shape, &lp.labels));
  const int64_t rows = lp.batch * lp.heads * lp.n;
  // delta = rowsum(dO * O) is per (token, head), so it is computed here, before any exchange.
  EngineBuffer out32, delta, dq32, dk32, dv32;
  HCP_TRY(cp::alloc_elems<float>(eng, lp.o_elems(), &out32));
  HCP_TRY(cp::alloc_elems<float>(eng, rows, &delta));
  HCP_TRY(cp::alloc_elems<float>(eng, lp.q_elems(), &dq32));
  HCP_TRY(cp::alloc_elems<float>(eng, lp.k_elems(), &dk32));
  HCP_TRY(cp::alloc_elems<float>(eng, lp.v_elems(), &dv32));
  HCP_TRY(eng.convert_to_f32(out, lp.dtype, out32.as<float>(), lp.o_elems()));
  {
    const cp::Section all{0, lp.n, 0, lp.n, false, 0};
    cp::Buffers b;
    b.dout = dout, b.out = out32.as<float>(), b.delta = delta.as<float>();
    HCP_TRY(eng.delta(cp::section_params(lp, all, lp.n, lp.n, b)));
  }
  HCP_TRY(sink_gradient(shape, lp.n, lse, delta.as<float>()));
  HCP_TRY(eng.zero(dq32.as(), bytes_of(lp.q_elems(), 4)));
  HCP_TRY(eng.zero(dk32.as(), bytes_of(lp.k_elems(), 4)));
  HCP_TRY(eng.zero(dv32.as(), bytes_of(lp.v_elems(), 4)));
  auto finish = [&](void* q_dst, void* k_dst, void* v_dst) -> Status {
    HCP_TRY(eng.convert_from_f32(dq32.as<float>(), q_dst, lp.dtype, lp.q_elems()));
    HCP_TRY(eng.convert_from_f32(dk32.as<float>(), k_dst, lp.dtype, lp.k_elems()));
    return eng.convert_from_f32(dv32.as<float>(), v_dst, lp.dtype, lp.v_elems());
  };
  const Stages st = stages_of(comm_, data_cp_, data_levels_);
  // The bias's gradient: this rank's rows of it, [B, n, H, S], reduced to the bias's shape at the end.
  const bool bias_grad = shape.bias && shape.d_bias;
  std::unique_ptr<cp::BiasBlocks> bias;
  const int64_t seq = lp.n * cp_size();
  std::vector<float> d_bias(bias_grad ? static_cast<size_t>(shape.bias_batch * shape.bias_heads * shape.bias_rows * seq)
                                      : 0);
  const auto finish_own_rows = [&]() -> Status {
    if (bias_grad) {
      HCP_TRY(bias->reduce_grads(d_bias.data()));
      HCP_TRY(bias_gradient(shape, std::move(d_bias)));
    }
    return finish(dq, dk, dv);
  };
  std::vector<float> bias_rows;
  if ((comm_ == CpComm::all_gather || st.a2a == nullptr) && shape.bias) {
    HCP_TRY(own_rows_bias(eng, shape, cp_size(), lp, comm_ != CpComm::all_gather, bias_grad, &bias_rows, &bias));
    lp.bias = bias.get();
  }
  if (comm_ == CpComm::all_gather) {
    HCP_TRY(cp::all_gather_backward(eng, *data_cp_, lp, q, k, v, lse, delta.as<float>(), dout, dq32.as<float>(),
                                    dk32.as<float>(), dv32.as<float>()));
    return finish_own_rows();
  }
  if (st.a2a == nullptr) {
    HCP_TRY(cp::ring_backward(eng, st.ring, lp, q, k, v, lse, delta.as<float>(), dout, dq32.as<float>(),
                              dk32.as<float>(), dv32.as<float>()));
    return finish_own_rows();
  }
  const int a = st.a2a->size();
  const size_t e = dtype_size(lp.dtype);
  const int64_t f = kv_replication(lp.kv_heads, a);
  const LocalProblem lr = with_kv_replicas(lp, f);
  EngineBuffer k_rep, v_rep;
  HCP_TRY(replicate_kv(eng, lp, f, &k, &v, &k_rep, &v_rep));
  const LocalProblem mixed = after_a2a(lr, a);
  const auto qg = q_geometry(lp, e), og = o_geometry(lp, e), kg = k_geometry(lr, e), vg = v_geometry(lr, e);
  EngineBuffer qa, ka, va, da, scratch, lse_mixed, delta_mixed, row_scratch;
  HCP_TRY(eng.alloc(qg.bytes(), &qa));
  HCP_TRY(eng.alloc(kg.bytes(), &ka));
  HCP_TRY(eng.alloc(vg.bytes(), &va));
  HCP_TRY(eng.alloc(og.bytes(), &da));
  HCP_TRY(cp::alloc_elems<float>(eng, rows, &lse_mixed));
  HCP_TRY(cp::alloc_elems<float>(eng, rows, &delta_mixed));
  HCP_TRY(cp::alloc_elems<float>(eng, 2 * rows, &row_scratch));
  const cp::MixedOrder order = mixed_order(shape, cp_size(), st, lp.labels == nullptr || all_host_);
  LocalProblem mixed_lp = mixed;
  if (shape.bias) {
    HCP_TRY(a2a_rows_bias(eng, *st.a2a, order, shape, cp_size(), lp, mixed, st.ring ? st.ring->size() : 1,
                          lp.labels == nullptr || all_host_, bias_grad, &bias_rows, &bias));
    mixed_lp.bias = bias.get();
  }
  // The mixed rows' bias gradient back to this rank's rows, then to the bias's shape.
  const auto finish_mixed_bias = [&]() -> Status {
    if (!bias_grad) return {};
    // The mixed rows' gradient per (batch row, head) - or summed where the calls shared it (bias_blocks.hpp) - goes
    // back as the a2a's heads: a member's sum over its heads is one slot, and the slots are summed below.
    const int64_t gb = bias->grad_batch(), slots = bias->grad_heads() * st.a2a->size();
    std::vector<float> mixed_full(static_cast<size_t>(gb * lp.n * slots * seq)), full(mixed_full.size());
    HCP_TRY(bias->add_grads(mixed_full.data()));
    const cp::SeqTensor grad_rows{gb, lp.n, slots, seq, sizeof(float)};
    EngineBuffer mixed_grad, local_grad, scratch32;
    HCP_TRY(eng.alloc(grad_rows.bytes(), &mixed_grad));
    HCP_TRY(eng.alloc(grad_rows.bytes(), &local_grad));
    HCP_TRY(eng.alloc(2 * grad_rows.bytes(), &scratch32));
    HCP_TRY(eng.upload(mixed_grad.as(), mixed_full.data(), grad_rows.bytes()));
    HCP_TRY(cp::a2a_gather_heads(eng, *st.a2a, order, grad_rows, mixed_grad.as(), local_grad.as(), scratch32.as()));
    HCP_TRY(eng.download(full.data(), local_grad.as(), grad_rows.bytes()));
    cp::reduce_bias_grad(full.data(), gb, shape.seq_local, slots, seq, shape.bias_batch, shape.bias_heads,
                         shape.bias_rows, d_bias.data());
    return bias_gradient(shape, std::move(d_bias));
  };
  // Over host engines whose ranks share host memory (and no replicated heads to sum), the a2a scatters q, dO, K and
  // V in the ring's head-major form, K and V straight into the ring's shared block, and gathers dK and dV from the
  // ring's shared sums and dQ from its head-major form, where the ring would re-lay and copy them in and out again.
  const bool shared = f == 1 && a2a_ring_share_memory(eng, st, all_host_);
  if (shared) {  // in the ring's head-major form (K and V in the ring's block, below)
    HCP_TRY(cp::a2a_scatter_heads_head_major(eng, *st.a2a, order, qg, q, qa.as()));
    HCP_TRY(cp::a2a_scatter_heads_head_major(eng, *st.a2a, order, og, dout, da.as()));
  } else {
    HCP_TRY(eng.alloc(2 * std::max(qg.bytes(), og.bytes()), &scratch));  // the exchanges' staging
    HCP_TRY(cp::a2a_scatter_heads(eng, *st.a2a, order, qg, q, qa.as(), scratch.as()));
    HCP_TRY(cp::a2a_scatter_heads(eng, *st.a2a, order, kg, k, ka.as(), scratch.as()));
    HCP_TRY(cp::a2a_scatter_heads(eng, *st.a2a, order, vg, v, va.as(), scratch.as()));
    HCP_TRY(cp::a2a_scatter_heads(eng, *st.a2a, order, og, dout, da.as(), scratch.as()));
  }
  HCP_TRY(cp::a2a_scatter_rows(eng, *st.a2a, order, lp.batch, lp.heads, lp.n, lse, lse_mixed.as<float>(),
                               row_scratch.as<float>()));
  HCP_TRY(cp::a2a_scatter_rows(eng, *st.a2a, order, lp.batch, lp.heads, lp.n, delta.as<float>(),
                               delta_mixed.as<float>(), row_scratch.as<float>()));
  // A gradient in the caller's dtype for the inverse exchange: an fp32 one as it is, others converted into `to`.
  const auto in_dtype = [&](const float* grad, int64_t elems, void* to, const void** ready) -> Status {
    *ready = grad;
    if (lp.dtype == DType::f32) return {};
    *ready = to;
    return eng.convert_from_f32(grad, to, lp.dtype, elems);
  };
  if (shared) {
    const cp::KvWriter write_kv = kv_into_ring_block(eng, *st.a2a, order, kg, vg, k, v);
    const cp::KvSumsReader gather_sums = [&](const float* dk_sum, const float* dv_sum) -> Status {
      const void* ready = nullptr;
      HCP_TRY(in_dtype(dk_sum, lp.k_elems(), ka.as(), &ready));
      HCP_TRY(cp::a2a_gather_heads_head_major(eng, *st.a2a, order, kg, ready, dk));
      HCP_TRY(in_dtype(dv_sum, lp.v_elems(), va.as(), &ready));
      return cp::a2a_gather_heads_head_major(eng, *st.a2a, order, vg, ready, dv);
    };
    // dq32 is zero, so it is as good head-major as token-major.
    HCP_TRY(cp::ring_backward_shared(eng, *st.ring, mixed_lp, qa.as(), write_kv, lse_mixed.as<float>(),
                                     delta_mixed.as<float>(), da.as(), dq32.as<float>(), gather_sums));
    const void* ready = nullptr;
    HCP_TRY(in_dtype(dq32.as<float>(), lp.q_elems(), qa.as(), &ready));
    HCP_TRY(cp::a2a_gather_heads_head_major(eng, *st.a2a, order, qg, ready, dq));
    return finish_mixed_bias();
  }
  if (f == 1) {
    HCP_TRY(cp::ring_backward(eng, st.ring, mixed_lp, qa.as(), ka.as(), va.as(), lse_mixed.as<float>(),
                              delta_mixed.as<float>(), da.as(), dq32.as<float>(), dk32.as<float>(), dv32.as<float>()));
    // Convert in place into the exchange buffers (same element count, caller's dtype), then scatter back.
    HCP_TRY(finish(qa.as(), ka.as(), va.as()));
    HCP_TRY(cp::a2a_gather_heads(eng, *st.a2a, order, qg, qa.as(), dq, scratch.as()));
    HCP_TRY(cp::a2a_gather_heads(eng, *st.a2a, order, kg, ka.as(), dk, scratch.as()));
    HCP_TRY(cp::a2a_gather_heads(eng, *st.a2a, order, vg, va.as(), dv, scratch.as()));
    return finish_mixed_bias();
  }
  // Replicated KV heads: their gradients go back in fp32 and are summed per head before the caller's dtype.
  EngineBuffer dk_rep, dv_rep, local_rep, scratch32;
  const auto kg32 = k_geometry(lr, sizeof(float)), vg32 = v_geometry(lr, sizeof(float));
  const size_t rep_bytes = std::max(kg32.bytes(), vg32.bytes());
  HCP_TRY(cp::alloc_elems<float>(eng, lr.k_elems(), &dk_rep));
  HCP_TRY(cp::alloc_elems<float>(eng, lr.v_elems(), &dv_rep));
  HCP_TRY(eng.alloc(rep_bytes, &local_rep));
  HCP_TRY(eng.alloc(2 * rep_bytes, &scratch32));
  HCP_TRY(eng.zero(dk_rep.as(), kg32.bytes()));
  HCP_TRY(eng.zero(dv_rep.as(), vg32.bytes()));
  HCP_TRY(cp::ring_backward(eng, st.ring, mixed_lp, qa.as(), ka.as(), va.as(), lse_mixed.as<float>(),
                            delta_mixed.as<float>(), da.as(), dq32.as<float>(), dk_rep.as<float>(),
                            dv_rep.as<float>()));
  HCP_TRY(eng.convert_from_f32(dq32.as<float>(), qa.as(), lp.dtype, lp.q_elems()));
  HCP_TRY(cp::a2a_gather_heads(eng, *st.a2a, order, qg, qa.as(), dq, scratch.as()));
  const std::tuple<EngineBuffer*, EngineBuffer*, cp::SeqTensor> grads[] = {{&dk_rep, &dk32, kg32},
                                                                            {&dv_rep, &dv32, vg32}};
  for (const auto& [rep, sum, geometry] : grads) {
    HCP_TRY(cp::a2a_gather_heads(eng, *st.a2a, order, geometry, rep->as(), local_rep.as(), scratch32.as()));
    // dk_rep's own memory is free again: the sum's scratch.
    HCP_TRY(cp::sum_replicated_kv_heads(eng, lp, geometry.x, f, local_rep.as<float>(), sum->as<float>(),
                                        rep->as<float>()));
  }
  HCP_TRY(eng.convert_from_f32(dk32.as<float>(), dk, lp.dtype, lp.k_elems()));
  HCP_TRY(eng.convert_from_f32(dv32.as<float>(), dv, lp.dtype, lp.v_elems()));
  return finish_mixed_bias();
}

}  // namespace hcp
