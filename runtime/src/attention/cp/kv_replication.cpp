#include "kv_replication.hpp"

namespace hcp::cp {
namespace {

// Copy t of every head: a [tokens, Hkv] grid of head rows between the plain and the replicated layout.
Status copy_replica(CpEngine& eng, const LocalProblem& lp, int64_t dim, int64_t f, int64_t t, size_t elem, void* dst,
                    const void* src, bool to_replicated) {
  const int64_t tokens = lp.batch * lp.n;
  const size_t head = static_cast<size_t>(dim) * elem;
  const size_t plain_token = static_cast<size_t>(lp.kv_heads) * head, rep_token = plain_token * static_cast<size_t>(f);
  if (to_replicated)
    return eng.copy_rows(tokens, lp.kv_heads, head, static_cast<unsigned char*>(dst) + t * head, rep_token,
                         f * head, src, plain_token, head);
  return eng.copy_rows(tokens, lp.kv_heads, head, dst, plain_token, head,
                       static_cast<const unsigned char*>(src) + t * head, rep_token, f * head);
}

}  // namespace

Status replicate_kv_heads(CpEngine& eng, const LocalProblem& lp, int64_t dim, int64_t f, const void* in, void* out) {
  for (int64_t t = 0; t < f; ++t) HCP_TRY(copy_replica(eng, lp, dim, f, t, dtype_size(lp.dtype), out, in, true));
  return {};
}

Status sum_replicated_kv_heads(CpEngine& eng, const LocalProblem& lp, int64_t dim, int64_t f, const float* in,
                               float* out, float* scratch) {
  HCP_TRY(copy_replica(eng, lp, dim, f, 0, sizeof(float), out, in, false));
  for (int64_t t = 1; t < f; ++t) {
    HCP_TRY(copy_replica(eng, lp, dim, f, t, sizeof(float), scratch, in, false));
    HCP_TRY(eng.add_f32(out, scratch, lp.batch * lp.n * lp.kv_heads * dim));
  }
  return {};
}

}  // namespace hcp::cp
