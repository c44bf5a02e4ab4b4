// Single-rank attention on the CPU: flash-style blocking with online softmax (memory O(block) per thread, never an
// S x S matrix), fp32 accumulation, runtime dispatch to the widest vector unit the running CPU has.
#pragma once

#include "hcp/attention_params.hpp"
#include "hcp/status.hpp"

namespace hcp {

// Checks sizes, strides and pointers: Errc::shape for sizes that do not fit (heads % kv_heads, head_dim out of
// [1, 512], non-positive sizes, element offsets that overflow), Errc::invalid_argument for missing pointers.
Status check_attention_params(const AttnParams& p, bool backward);

// out (f32) and lse (natural log of the softmax denominator, scale included) for every query row. A row that sees
// no key gets out 0 and lse -inf.
Status attention_forward_cpu(const AttnParams& p);
// Adds this call's contribution to dq, dk, dv (f32) from q, k, v, dout, the final lse and delta.
Status attention_backward_cpu(const AttnParams& p);

// delta[b, h, s] = sum_d dout * out, the per-row term of the softmax backward. dout: `dtype`; out: f32.
void attention_delta_cpu(DType dtype, int64_t batch, int64_t seq, int64_t heads, int64_t head_dim,
                         const AttnTensor& dout, const AttnTensor& out, const AttnRows& delta);

// SinkParams (attention_params.hpp) applied in place; host memory.
void apply_sink_cpu(const SinkParams& p);
// The sink's gradient from this call's rows: grad[h] -= sum over (b, r) of exp(sink[h] - lse[b, h, r]) *
// delta[b, h, r], rows that see no key (lse -inf) left out. lse and delta [batch, heads, rows], host memory.
void sink_gradient_cpu(int64_t batch, int64_t heads, int64_t rows, const float* lse, const float* delta,
                       const float* sink, double* grad);

// The forward's key tiles of a labelled call, packed once where several calls read the same keys (CP all_gather's
// ranks all read one gathered K): the floats they take (0 when the call packs none, or when they would not fit the
// kernel's own per-head cache), and the packing of tiles part, part + parts, ... of every (batch row, KV head) into
// `dst`, which the calls then name in AttnParams::packed_keys. The layout is the kernel's own (it depends on the
// vector width the dispatcher chose), so the calls must have the parameters the tiles were packed for.
// attention_pack_keys_cpu: the parameter checks' errors, Errc::invalid_argument for a part outside [0, parts) or a
// NULL dst; nothing is written then.
int64_t attention_packed_keys_floats_cpu(const AttnParams& p);
Status attention_pack_keys_cpu(const AttnParams& p, int64_t part, int64_t parts, float* dst);

// The vector width the dispatcher chose on this CPU: "avx512", "avx2" or "generic".
const char* attention_cpu_isa();

}  // namespace hcp
