#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "hcp/dtype_convert.hpp"
#include "hcp/attention_cpu.hpp"
#include "hcp/cp_attention.hpp"
#include "local_problem.hpp"
#include "sequence_layout.hpp"

namespace hcp {

using cp::LocalProblem;

std::string_view cp_comm_name(CpComm comm) {
  switch (comm) {
    case CpComm::p2p:
      return "p2p";
    case CpComm::a2a:
      return "a2a";
    case CpComm::a2a_p2p:
      return "a2a+p2p";
    case CpComm::all_gather:
      return "all_gather";
  }
  return "?";
}

CpComm parse_cp_comm(std::string_view name) {
  for (CpComm c : {CpComm::p2p, CpComm::a2a, CpComm::a2a_p2p, CpComm::all_gather})
    if (name == cp_comm_name(c)) return c;
  throw Error(Errc::invalid_argument,
              "unknown cp_comm_type '" + std::string(name) + "': expected p2p, a2a, a2a+p2p or all_gather");
}

Status CpContext::create(Communicator& world, const ParallelConfig& config, CpComm comm,
                         std::unique_ptr<CpContext>* out, LogLevel log_level) {
  if (out == nullptr) return Status(Errc::invalid_argument, "CpContext::create: out is NULL");
  // Decided from the config alone, so every rank returns here alike and nobody waits for a collective.
  if (comm == CpComm::a2a_p2p && (!config.hcp_sizes || config.hcp_sizes->size() != 2))
    return Status(Errc::invalid_config,
                  "cp_comm_type a2a+p2p needs hierarchical_context_parallel_sizes with two levels [a2a, p2p]");
  CpGroups groups;
  HCP_TRY(build_cp_groups(world, config, &groups, log_level));
  if (comm == CpComm::a2a_p2p) {
    const int a = groups.levels[0]->size();
    if (groups.cp->rank() != groups.levels[0]->rank() + a * groups.levels[1]->rank())
      return Status(Errc::internal, "CP rank " + std::to_string(groups.cp->rank()) + " is not a2a rank + " +
                                        std::to_string(a) + " * p2p rank");
  }
  out->reset(new CpContext(comm, std::move(groups)));
  return {};
}

namespace {

// The a2a group (nullptr: none) and the ring group (nullptr: a ring of one) of a scheme.
struct Stages {
  Communicator* a2a = nullptr;
  Communicator* ring = nullptr;
};

Stages stages_of(CpComm comm, const CpGroups& g) {
  switch (comm) {
    case CpComm::p2p:
      return {nullptr, g.cp.get()};
    case CpComm::a2a:
      return {g.cp.get(), nullptr};
    case CpComm::a2a_p2p:
      return {g.levels[0]->size() > 1 ? g.levels[0].get() : nullptr, g.levels[1].get()};
    case CpComm::all_gather:
      break;
  }
  return {};
}

std::string local_problem_error(const CpShape& s, int64_t a2a) {
  if (s.batch < 1 || s.seq_local < 1 || s.heads < 1 || s.kv_heads < 1 || s.head_dim < 1)
    return "batch, seq_local, heads, kv_heads and head_dim must be positive";
  if (s.seq_local % 2 != 0)
    return "the sequence must divide into 2 x cp chunks: local length " + std::to_string(s.seq_local) + " is odd";
  if (s.heads % s.kv_heads != 0)
    return "heads (" + std::to_string(s.heads) + ") must be a multiple of kv_heads (" + std::to_string(s.kv_heads) + ")";
  if (s.heads % a2a != 0 || s.kv_heads % a2a != 0)
    return "heads (" + std::to_string(s.heads) + ") and kv_heads (" + std::to_string(s.kv_heads) +
           ") must be divisible by the a2a size " + std::to_string(a2a);
  if (s.head_dim > 512) return "head_dim must be at most 512, got " + std::to_string(s.head_dim);
  int64_t elems = 0;
  if (__builtin_mul_overflow(s.batch, s.seq_local, &elems) || __builtin_mul_overflow(elems, s.heads, &elems) ||
      __builtin_mul_overflow(elems, s.head_dim, &elems) || elems > (int64_t{1} << 40))
    return "batch * seq_local * heads * head_dim is too large";
  return {};
}

LocalProblem local_problem(const CpShape& s) {
  LocalProblem lp;
  lp.batch = s.batch, lp.n = s.seq_local, lp.heads = s.heads, lp.kv_heads = s.kv_heads, lp.head_dim = s.head_dim;
  lp.dtype = s.dtype, lp.causal = s.causal, lp.threads = std::max(1, s.kernel_threads);
  lp.scale = s.scale > 0 ? s.scale : 1.0f / std::sqrt(static_cast<float>(s.head_dim));
  return lp;
}

// The problem after an a2a over `a` ranks: a times the tokens, 1/a of the heads.
LocalProblem after_a2a(LocalProblem lp, int a) {
  lp.n *= a, lp.heads /= a, lp.kv_heads /= a;
  return lp;
}

cp::SeqTensor q_geometry(const LocalProblem& lp, size_t elem) { return {lp.batch, lp.n, lp.heads, lp.head_dim, elem}; }
cp::SeqTensor kv_geometry(const LocalProblem& lp, size_t elem) {
  return {lp.batch, lp.n, lp.kv_heads, lp.head_dim, elem};
}

}  // namespace

Status CpContext::check_shape(const CpShape& shape, bool backward) {
  const Stages st = stages_of(comm_, groups_);
  const std::string problem = local_problem_error(shape, st.a2a ? st.a2a->size() : 1);
  uint32_t scale_bits = 0;
  std::memcpy(&scale_bits, &shape.scale, sizeof scale_bits);
  const int64_t mine[10] = {problem.empty() ? 0 : 1, shape.batch, shape.seq_local, shape.heads, shape.kv_heads,
                            shape.head_dim, static_cast<int64_t>(shape.dtype), shape.causal, backward, scale_bits};
  std::vector<int64_t> all(10 * static_cast<size_t>(cp_size()));
  HCP_TRY(groups_.cp->all_gather(mine, all.data(), sizeof(mine)));
  if (!problem.empty()) return Status(Errc::shape, "CP rank " + std::to_string(cp_rank()) + ": " + problem);
  static const char* const names[] = {"", "batch", "seq_local", "heads", "kv_heads", "head_dim", "dtype", "causal",
                                      "pass", "scale"};
  for (int r = 0; r < cp_size(); ++r) {
    const int64_t* theirs = all.data() + 10 * r;
    if (theirs[0] != 0) {
      return Status(Errc::shape, "CP rank " + std::to_string(r) + " has an invalid shape (see its error)");
    }
    for (int i = 1; i < 10; ++i)
      if (theirs[i] != mine[i])
        return Status(Errc::shape, "CP ranks disagree on " + std::string(names[i]) + ": rank " +
                                       std::to_string(cp_rank()) + " has " + std::to_string(mine[i]) + ", rank " +
                                       std::to_string(r) + " has " + std::to_string(theirs[i]));
  }
  return {};
}

Status CpContext::forward(const CpShape& shape, const void* q, const void* k, const void* v, void* out, float* lse) {
  if (!q || !k || !v || !out || !lse) return Status(Errc::invalid_argument, "CP forward: a tensor pointer is NULL");
  HCP_TRY(check_shape(shape, false));
  const LocalProblem lp = local_problem(shape);
  std::vector<float> out32(static_cast<size_t>(lp.q_elems()));
  if (comm_ == CpComm::all_gather) {
    HCP_TRY(cp::all_gather_forward(*groups_.cp, lp, q, k, v, out32.data(), lse));
    convert_from_f32(out32.data(), out, lp.dtype, lp.q_elems());
    return {};
  }
  const Stages st = stages_of(comm_, groups_);
  if (st.a2a == nullptr) {
    HCP_TRY(cp::ring_forward(st.ring, lp, q, k, v, out32.data(), lse));
    convert_from_f32(out32.data(), out, lp.dtype, lp.q_elems());
    return {};
  }
  const int a = st.a2a->size();
  const size_t e = dtype_size(lp.dtype);
  const LocalProblem mixed = after_a2a(lp, a);
  const auto qg = q_geometry(lp, e), kvg = kv_geometry(lp, e);
  std::vector<unsigned char> qa(qg.bytes()), ka(kvg.bytes()), va(kvg.bytes()), scratch(2 * qg.bytes());
  HCP_TRY(cp::a2a_scatter_heads(*st.a2a, qg, q, qa.data(), scratch.data()));
  HCP_TRY(cp::a2a_scatter_heads(*st.a2a, kvg, k, ka.data(), scratch.data()));
  HCP_TRY(cp::a2a_scatter_heads(*st.a2a, kvg, v, va.data(), scratch.data()));
  std::vector<float> lse_mixed(static_cast<size_t>(lp.batch * lp.heads * lp.n));
  HCP_TRY(cp::ring_forward(st.ring, mixed, qa.data(), ka.data(), va.data(), out32.data(), lse_mixed.data()));
  // Back to the caller's dtype before the inverse exchange, as Transformer Engine does: half the bytes to move.
  convert_from_f32(out32.data(), qa.data(), lp.dtype, lp.q_elems());
  HCP_TRY(cp::a2a_gather_heads(*st.a2a, qg, qa.data(), out, scratch.data()));
  std::vector<float> row_scratch(2 * lse_mixed.size());
  return cp::a2a_gather_rows(*st.a2a, lp.batch, lp.heads, lp.n, lse_mixed.data(), lse, row_scratch.data());
}

Status CpContext::backward(const CpShape& shape, const void* q, const void* k, const void* v, const void* out,
                           const float* lse, const void* dout, void* dq, void* dk, void* dv) {
  if (!q || !k || !v || !out || !lse || !dout || !dq || !dk || !dv)
    return Status(Errc::invalid_argument, "CP backward: a tensor pointer is NULL");
  HCP_TRY(check_shape(shape, true));
  const LocalProblem lp = local_problem(shape);
  // delta = rowsum(dO * O) is per (token, head), so it is computed here, before any exchange.
  std::vector<float> out32(static_cast<size_t>(lp.q_elems()));
  convert_to_f32(out, lp.dtype, out32.data(), lp.q_elems());
  std::vector<float> delta(static_cast<size_t>(lp.batch * lp.heads * lp.n));
  const int64_t row = lp.heads * lp.head_dim;
  attention_delta_cpu(lp.dtype, lp.batch, lp.n, lp.heads, lp.head_dim, {const_cast<void*>(dout), lp.n * row, row, lp.head_dim},
                      {out32.data(), lp.n * row, row, lp.head_dim}, {delta.data(), lp.heads * lp.n, lp.n});
  std::vector<float> dq32(static_cast<size_t>(lp.q_elems()), 0.0f), dk32(static_cast<size_t>(lp.kv_elems()), 0.0f),
      dv32(dk32.size(), 0.0f);
  auto finish = [&](void* q_dst, void* k_dst, void* v_dst) {
    convert_from_f32(dq32.data(), q_dst, lp.dtype, lp.q_elems());
    convert_from_f32(dk32.data(), k_dst, lp.dtype, lp.kv_elems());
    convert_from_f32(dv32.data(), v_dst, lp.dtype, lp.kv_elems());
  };
  if (comm_ == CpComm::all_gather) {
    HCP_TRY(cp::all_gather_backward(*groups_.cp, lp, q, k, v, lse, delta.data(), dout, dq32.data(), dk32.data(),
                                    dv32.data()));
    finish(dq, dk, dv);
    return {};
  }
  const Stages st = stages_of(comm_, groups_);
  if (st.a2a == nullptr) {
    HCP_TRY(cp::ring_backward(st.ring, lp, q, k, v, lse, delta.data(), dout, dq32.data(), dk32.data(), dv32.data()));
    finish(dq, dk, dv);
    return {};
  }
  const int a = st.a2a->size();
  const size_t e = dtype_size(lp.dtype);
  const LocalProblem mixed = after_a2a(lp, a);
  const auto qg = q_geometry(lp, e), kvg = kv_geometry(lp, e);
  std::vector<unsigned char> qa(qg.bytes()), ka(kvg.bytes()), va(kvg.bytes()), da(qg.bytes()), scratch(2 * qg.bytes());
  HCP_TRY(cp::a2a_scatter_heads(*st.a2a, qg, q, qa.data(), scratch.data()));
  HCP_TRY(cp::a2a_scatter_heads(*st.a2a, kvg, k, ka.data(), scratch.data()));
  HCP_TRY(cp::a2a_scatter_heads(*st.a2a, kvg, v, va.data(), scratch.data()));
  HCP_TRY(cp::a2a_scatter_heads(*st.a2a, qg, dout, da.data(), scratch.data()));
  std::vector<float> lse_mixed(delta.size()), delta_mixed(delta.size()), row_scratch(2 * delta.size());
  HCP_TRY(cp::a2a_scatter_rows(*st.a2a, lp.batch, lp.heads, lp.n, lse, lse_mixed.data(), row_scratch.data()));
  HCP_TRY(cp::a2a_scatter_rows(*st.a2a, lp.batch, lp.heads, lp.n, delta.data(), delta_mixed.data(),
                               row_scratch.data()));
  HCP_TRY(cp::ring_backward(st.ring, mixed, qa.data(), ka.data(), va.data(), lse_mixed.data(), delta_mixed.data(),
                            da.data(), dq32.data(), dk32.data(), dv32.data()));
  // Convert in place into the exchange buffers (same element count, caller's dtype), then scatter back.
  finish(qa.data(), ka.data(), va.data());
  HCP_TRY(cp::a2a_gather_heads(*st.a2a, qg, qa.data(), dq, scratch.data()));
  HCP_TRY(cp::a2a_gather_heads(*st.a2a, kvg, ka.data(), dk, scratch.data()));
  return cp::a2a_gather_heads(*st.a2a, kvg, va.data(), dv, scratch.data());
}

}  // namespace hcp
