// KV heads replicated for an a2a wider than them (GQA/MQA under Ulysses-style a2a, as DeepSpeed and yunchang do;
// Transformer Engine refuses): each of the kv_heads heads is copied f = a2a / kv_heads times, so that every a2a
// member receives one KV head, the one its query heads use; in the backward the f copies' gradients are summed
// back into their head.
#pragma once

#include <cstdint>

#include "hcp/cp_scheme.hpp"  // kv_replication: the factor
#include "local_problem.hpp"

namespace hcp::cp {

// `in` [B, n, Hkv, dim] of lp.dtype -> `out` [B, n, Hkv * f, dim]: head j * f + t is a copy of head j. dim: K's
// head dim or V's.
Status replicate_kv_heads(CpEngine& eng, const LocalProblem& lp, int64_t dim, int64_t f, const void* in, void* out);
// `in` [B, n, Hkv * f, dim] fp32 -> `out` [B, n, Hkv, dim] fp32, head j the sum of heads j * f .. j * f + f - 1;
// `scratch` holds B n Hkv dim floats.
Status sum_replicated_kv_heads(CpEngine& eng, const LocalProblem& lp, int64_t dim, int64_t f, const float* in,
                               float* out, float* scratch);

}  // namespace hcp::cp
