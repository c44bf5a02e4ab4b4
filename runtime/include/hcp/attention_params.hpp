// The plain parameter block of every attention kernel (CPU now, CUDA later): pointers, element strides, sizes and
// flags, no ownership. Layout "bshd": element (b, s, h, d) of a tensor is data[b*stride_b + s*stride_s +
// h*stride_h + d] (d contiguous); per-row values (lse, delta) are [B, H, S] with s contiguous.
#pragma once

#include <cstddef>
#include <cstdint>

namespace hcp {

enum class DType : int { f32 = 0, bf16 = 1, f16 = 2 };

inline size_t dtype_size(DType dtype) { return dtype == DType::f32 ? 4 : 2; }
const char* dtype_name(DType dtype);

struct AttnTensor {
  void* data = nullptr;
  int64_t stride_b = 0, stride_s = 0, stride_h = 0;  // in elements
};

// Per-row labels of a query or key sequence: the document (segment) a token belongs to and its position in it.
// Packed sequences, CP chunks in any order and sliding windows all reduce to them: key j is visible to query i iff
// seg[j] == seg[i] >= 0 (a negative segment is padding, seen by nobody and seeing nothing), pos[j] <= pos[i] when
// causal, and pos[i] - window_left <= pos[j] <= pos[i] + window_right for the window sides that are >= 0. Without
// labels a query row i has segment 0 and position i + causal_offset, a key row j segment 0 and position j. Indexed
// by the s index of the tensor (the same for every batch); in the engine's memory.
struct AttnLabels {
  const int32_t* seg = nullptr;
  const int32_t* pos = nullptr;
};

struct AttnRows {
  float* data = nullptr;
  int64_t stride_b = 0, stride_h = 0;  // in elements; s is contiguous
};

// A value per (batch row, head, query row, key row): element (b, h, i, j) at data[b * stride_b + h * stride_h +
// i * stride_q + j * stride_k], fp32; a dimension with stride 0 is broadcast. j is the key's stored row (the index
// of the s dimension of k), whatever order a kernel walks the keys in.
struct AttnPairs {
  float* data = nullptr;
  int64_t stride_b = 0, stride_h = 0, stride_q = 0, stride_k = 0;
};

struct AttnParams {
  DType dtype = DType::f32;  // of q, k, v and dout
  int64_t batch = 0, sq = 0, sk = 0, heads = 0, kv_heads = 0, head_dim = 0;
  // The head dim of v, out, dout and dv where it differs from q's and k's (MLA: DeepSeek's 192 for q and k, 128 for
  // v); 0: head_dim. value_dim() reads it.
  int64_t head_dim_v = 0;
  float scale = 0;      // softmax scale, usually 1/sqrt(head_dim)
  bool causal = false;  // key j is visible to query i iff j <= i + causal_offset
  int64_t causal_offset = 0;  // 0: top-left aligned; sk - sq: bottom-right aligned
  // Forward: out and lse already hold the result over other keys (out normalised, lse its log-sum-exp; -inf for
  // none); this call's keys are merged into it in fp32, exactly as if all keys had been in one call. The ring's
  // output correction, fused into the kernel: no partial buffers, no separate merge pass.
  bool accumulate = false;
  AttnLabels q_labels, k_labels;  // both or neither
  int64_t window_left = -1, window_right = -1;  // sliding window (Mistral / TE window_size); -1: unbounded side

  AttnTensor q, k, v;  // inputs, `dtype`
  AttnTensor out;      // forward: written, f32
  AttnRows lse;        // forward: written; backward: read (the final lse)
  // Forward, optional (data nullptr: not wanted): each query row's largest visible logit, scale * q . k, over this
  // call's keys - max'ed into what the rows hold with accumulate (-inf where a row has seen no key yet).
  // Transformer Engine's return_max_logit reduces these per head.
  AttnRows max_logit;
  // Attention bias (Transformer Engine's post_scale_bias; ALiBi-style), forward and backward, optional (data
  // nullptr: none): added to each scaled score, scale * q . k + bias(b, h, i, j), before the softmax (and before
  // max_logit's maximum, which is of the scores the softmax sees). Read only.
  AttnPairs bias;

  // Backward only.
  AttnTensor dout;     // `dtype`
  AttnRows delta;      // rowsum(dout * out) of the final out, f32
  AttnTensor dq, dk, dv;  // f32, accumulated into (+=), so ring steps and GQA heads add up
  // The bias's gradient, optional (data nullptr: not wanted): dS = P * (dP - delta) of every visible pair added
  // (+=) to its element; invisible pairs add nothing. Every stride must tell the pairs apart (no broadcast: a
  // broadcast bias's gradient is the sum of these over its broadcast dimensions, which the caller takes).
  AttnPairs dbias;

  int num_threads = 1;  // CPU kernels: worker threads for this call (1 = the calling thread only)

  // CPU forward, labelled calls: the call's key tiles packed once for several calls (attention_pack_keys_cpu, on
  // this same call's parameters), read instead of packing them; nullptr: the kernel packs its own.
  const float* packed_keys = nullptr;
};

// Read by the CUDA kernels too (nvcc compiles this header for the device).
#ifdef __CUDACC__
__host__ __device__
#endif
inline int64_t value_dim(const AttnParams& p) {
  return p.head_dim_v > 0 ? p.head_dim_v : p.head_dim;
}

// Attention sinks on a finished forward (Transformer Engine's softmax_type "off-by-one" and "learnable", gpt-oss's
// sinks): every query row's softmax gets one more logit, sink[h], in its denominator, which takes probability mass
// and carries no value: lse' = log(exp(lse) + exp(sink[h])) and out' = out * exp(lse - lse'). A row that sees no
// key (lse -inf: padding) is left as it is. The backward kernels need nothing else: with lse' and out' the usual
// P = exp(s - lse') and delta = rowsum(dout * out') are already the sink's.
struct SinkParams {
  int64_t batch = 0, heads = 0, rows = 0, head_dim = 0;  // head_dim: the output's (the value head dim)
  float* out = nullptr;  // f32; element (b, r, h, d) at b * out_b + r * out_r + h * out_h + d
  int64_t out_b = 0, out_r = 0, out_h = 0;
  float* lse = nullptr;         // [batch, heads, rows]
  const float* sink = nullptr;  // [heads], the engine's memory
};

}  // namespace hcp
