// Entry points of the CPU attention kernels: parameter checks, one instantiation of the kernel bodies per
// instruction set (the bodies are forced inline, so each becomes native code for its target), the choice among
// them on the running CPU (HCP_CPU_ISA=generic|avx2|avx512 narrows it, for tests and measurements), and the
// worker threads of one call.
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "backward_impl.hpp"
#include "bf16.hpp"
#include "forward_impl.hpp"
#include "half.hpp"
#include "hcp/attention_cpu.hpp"

namespace hcp {

const char* dtype_name(DType dtype) {
  switch (dtype) {
    case DType::f32:
      return "fp32";
    case DType::bf16:
      return "bf16";
    case DType::f16:
      return "fp16";
  }
  return "?";
}

namespace cpu {
namespace {

using TaskFn = void (*)(const AttnParams&, int64_t first, int64_t step);
using PackedKeysFloatsFn = int64_t (*)(const AttnParams&);
using PackKeysFn = void (*)(const AttnParams&, int64_t part, int64_t parts, float* dst);

#if defined(__x86_64__)
[[gnu::target("avx512f,avx2,fma")]] void forward_avx512(const AttnParams& p, int64_t f, int64_t s) {
  forward_tasks<16>(p, f, s);
}
[[gnu::target("avx512f,avx2,fma")]] void backward_avx512(const AttnParams& p, int64_t f, int64_t s) {
  backward_tasks<16>(p, f, s);
}
[[gnu::target("avx512f,avx2,fma")]] int64_t packed_keys_avx512(const AttnParams& p) {
  return forward_packed_keys_floats<16>(p);
}
[[gnu::target("avx512f,avx2,fma")]] void pack_keys_avx512(const AttnParams& p, int64_t part, int64_t parts, float* d) {
  pack_forward_keys<16>(p, part, parts, d);
}
[[gnu::target("avx2,fma")]] void forward_avx2(const AttnParams& p, int64_t f, int64_t s) { forward_tasks<8>(p, f, s); }
[[gnu::target("avx2,fma")]] void backward_avx2(const AttnParams& p, int64_t f, int64_t s) {
  backward_tasks<8>(p, f, s);
}
[[gnu::target("avx2,fma")]] int64_t packed_keys_avx2(const AttnParams& p) { return forward_packed_keys_floats<8>(p); }
[[gnu::target("avx2,fma")]] void pack_keys_avx2(const AttnParams& p, int64_t part, int64_t parts, float* d) {
  pack_forward_keys<8>(p, part, parts, d);
}
#endif
void forward_generic(const AttnParams& p, int64_t f, int64_t s) { forward_tasks<4>(p, f, s); }
void backward_generic(const AttnParams& p, int64_t f, int64_t s) { backward_tasks<4>(p, f, s); }
int64_t packed_keys_generic(const AttnParams& p) { return forward_packed_keys_floats<4>(p); }
void pack_keys_generic(const AttnParams& p, int64_t part, int64_t parts, float* d) {
  pack_forward_keys<4>(p, part, parts, d);
}

struct Isa {
  const char* name;
  TaskFn forward;
  TaskFn backward;
  PackedKeysFloatsFn packed_keys_floats;
  PackKeysFn pack_keys;
};

Isa choose_isa() {
  const char* wanted = std::getenv("HCP_CPU_ISA");
  auto allowed = [&](const char* name) { return wanted == nullptr || *wanted == '\0' || std::strcmp(wanted, name) == 0; };
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (allowed("avx512") && __builtin_cpu_supports("avx512f") != 0)
    return {"avx512", forward_avx512, backward_avx512, packed_keys_avx512, pack_keys_avx512};
  if (allowed("avx2") && __builtin_cpu_supports("avx2") != 0 && __builtin_cpu_supports("fma") != 0)
    return {"avx2", forward_avx2, backward_avx2, packed_keys_avx2, pack_keys_avx2};
#endif
  (void)allowed;
  return {"generic", forward_generic, backward_generic, packed_keys_generic, pack_keys_generic};
}

const Isa& isa() {
  static const Isa chosen = choose_isa();
  return chosen;
}

Status run_tasks(TaskFn fn, const AttnParams& p, int64_t tasks) {
  const int64_t threads = std::max<int64_t>(1, std::min<int64_t>(p.num_threads, tasks));
  if (threads == 1) {
    fn(p, 0, 1);
    return {};
  }
  std::vector<std::thread> workers;
  try {
    for (int64_t t = 1; t < threads; ++t) workers.emplace_back(fn, std::cref(p), t, threads);
  } catch (const std::system_error& e) {
    for (auto& w : workers) w.join();
    return Status(Errc::out_of_memory, std::string("attention: could not start worker threads: ") + e.what());
  }
  fn(p, 0, threads);
  for (auto& w : workers) w.join();
  return {};
}

// The largest element offset a tensor's strides reach must fit in int64 (and so in memory).
bool offsets_fit(const AttnTensor& t, int64_t batch, int64_t seq, int64_t heads, int64_t head_dim) {
  int64_t last = 0, term = 0;
  for (auto [n, stride] : {std::pair{batch, t.stride_b}, {seq, t.stride_s}, {heads, t.stride_h}}) {
    if (stride < 0 || __builtin_mul_overflow(n - 1, stride, &term) || __builtin_add_overflow(last, term, &last))
      return false;
  }
  return !__builtin_add_overflow(last, head_dim, &last);
}

}  // namespace
}  // namespace cpu

Status check_attention_params(const AttnParams& p, bool backward) {
  auto shape_error = [](const std::string& what) { return Status(Errc::shape, "attention: " + what); };
  if (p.batch < 1 || p.sq < 1 || p.sk < 1 || p.heads < 1 || p.kv_heads < 1)
    return shape_error("batch, sq, sk, heads and kv_heads must be positive, got batch " + std::to_string(p.batch) +
                       ", sq " + std::to_string(p.sq) + ", sk " + std::to_string(p.sk) + ", heads " +
                       std::to_string(p.heads) + ", kv_heads " + std::to_string(p.kv_heads));
  if (p.head_dim < 1 || p.head_dim > cpu::kMaxHeadDim)
    return shape_error("head_dim must be in [1, 512], got " + std::to_string(p.head_dim));
  if (p.head_dim_v < 0 || p.head_dim_v > cpu::kMaxHeadDim)
    return shape_error("head_dim_v must be 0 (head_dim) or in [1, 512], got " + std::to_string(p.head_dim_v));
  if (p.heads % p.kv_heads != 0)
    return shape_error("heads (" + std::to_string(p.heads) + ") must be a multiple of kv_heads (" +
                       std::to_string(p.kv_heads) + ")");
  if (!(p.scale > 0) || !std::isfinite(p.scale))
    return Status(Errc::invalid_argument, "attention: softmax scale must be positive and finite");
  // Every tensor the pass reads or writes, with its rows, heads and head dim: q and k (and dq, dk) have head_dim;
  // v, out, dout and dv value_dim. The backward reads delta, not out.
  struct Use {
    const AttnTensor* t;
    int64_t seq, heads, dim;
    bool used;
  };
  const int64_t dv = value_dim(p);
  const Use uses[] = {{&p.q, p.sq, p.heads, p.head_dim, true},     {&p.k, p.sk, p.kv_heads, p.head_dim, true},
                      {&p.v, p.sk, p.kv_heads, dv, true},           {&p.out, p.sq, p.heads, dv, !backward},
                      {&p.dout, p.sq, p.heads, dv, backward},       {&p.dq, p.sq, p.heads, p.head_dim, backward},
                      {&p.dk, p.sk, p.kv_heads, p.head_dim, backward}, {&p.dv, p.sk, p.kv_heads, dv, backward}};
  for (const Use& u : uses) {
    if (!u.used) continue;
    if (u.t->data == nullptr) return Status(Errc::invalid_argument, "attention: a tensor pointer is NULL");
    if (!cpu::offsets_fit(*u.t, p.batch, u.seq, u.heads, u.dim))
      return shape_error("tensor strides are negative or reach past the int64 range");
  }
  // The bias and its gradient: non-negative strides whose largest offset fits.
  for (const AttnPairs* t : {&p.bias, &p.dbias}) {
    if (t->data == nullptr || (t == &p.dbias && !backward)) continue;
    int64_t last = 0, term = 0;
    for (auto [n, stride] : {std::pair{p.batch, t->stride_b}, {p.heads, t->stride_h}, {p.sq, t->stride_q},
                             {p.sk, t->stride_k}})
      if (stride < 0 || __builtin_mul_overflow(n - 1, stride, &term) || __builtin_add_overflow(last, term, &last))
        return shape_error("bias strides are negative or reach past the int64 range");
  }
  const bool q_labels = p.q_labels.seg && p.q_labels.pos, k_labels = p.k_labels.seg && p.k_labels.pos;
  if (q_labels != k_labels || (!q_labels && (p.q_labels.seg || p.q_labels.pos || p.k_labels.seg || p.k_labels.pos)))
    return Status(Errc::invalid_argument, "attention: row labels need seg and pos for both queries and keys");
  if (p.window_left < -1 || p.window_right < -1)
    return Status(Errc::invalid_argument, "attention: a window side must be -1 (unbounded) or >= 0, got (" +
                                              std::to_string(p.window_left) + ", " + std::to_string(p.window_right) +
                                              ")");
  if (p.lse.data == nullptr || (backward && p.delta.data == nullptr))
    return Status(Errc::invalid_argument, "attention: lse or delta pointer is NULL");
  return {};
}

Status attention_forward_cpu(const AttnParams& p) {
  HCP_TRY(check_attention_params(p, false));
  // The task count only splits the call among threads; one thread takes every task whatever it is (a host CP ring
  // makes hundreds of small calls a step, where counting the query blocks cost about 1% of its time).
  if (p.num_threads <= 1) return cpu::run_tasks(cpu::isa().forward, p, 1);
  const int64_t qblocks = cpu::forward_blocks(p);
  return cpu::run_tasks(cpu::isa().forward, p, p.batch * p.heads * qblocks);
}

Status attention_backward_cpu(const AttnParams& p) {
  HCP_TRY(check_attention_params(p, true));
  return cpu::run_tasks(cpu::isa().backward, p, p.batch * p.kv_heads);
}

void attention_delta_cpu(DType dtype, int64_t batch, int64_t seq, int64_t heads, int64_t head_dim,
                         const AttnTensor& dout, const AttnTensor& out, const AttnRows& delta) {
  std::vector<float> row(static_cast<size_t>(head_dim));
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < heads; ++h) {
      float* d = cpu::row_values(delta, b, h);
      for (int64_t s = 0; s < seq; ++s) {
        cpu::pack_rows(dtype, dout, b, s, 1, h, head_dim, 1.0f, row.data(), head_dim, 1);
        const float* o = cpu::f32_row(out, b, s, h);
        float sum = 0;
        for (int64_t i = 0; i < head_dim; ++i) sum += row[static_cast<size_t>(i)] * o[i];
        d[s] = sum;
      }
    }
}

int64_t attention_packed_keys_floats_cpu(const AttnParams& p) {
  if (!check_attention_params(p, false).ok()) return 0;
  return cpu::isa().packed_keys_floats(p);
}
Status attention_pack_keys_cpu(const AttnParams& p, int64_t part, int64_t parts, float* dst) {
  HCP_TRY(check_attention_params(p, false));
  if (parts < 1 || part < 0 || part >= parts)
    return Status(Errc::invalid_argument, "attention: key tile part " + std::to_string(part) + " of " +
                                              std::to_string(parts) + " is outside [0, parts)");
  if (dst == nullptr) return Status(Errc::invalid_argument, "attention: packed key tiles pointer is NULL");
  cpu::isa().pack_keys(p, part, parts, dst);
  return {};
}

const char* attention_cpu_isa() { return cpu::isa().name; }

}  // namespace hcp
