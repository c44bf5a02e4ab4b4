// A naive attention in double precision, used only by tests: the full score matrix, no blocking, no tricks.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace hcp::testing {

// Contiguous bshd tensors as double, plus the sizes.
struct RefProblem {
  int64_t batch = 1, sq = 0, sk = 0, heads = 1, kv_heads = 1, head_dim = 0;
  int64_t head_dim_v = 0;  // of v, out, dout, dv (MLA); 0: head_dim
  bool causal = false;
  int64_t causal_offset = 0;
  double scale = 0;
  std::vector<double> q, k, v, dout;  // [B, S, H, D] (v and dout: Dv)

  int64_t dv() const { return head_dim_v > 0 ? head_dim_v : head_dim; }
  size_t qi(int64_t b, int64_t s, int64_t h, int64_t d) const {
    return static_cast<size_t>(((b * sq + s) * heads + h) * head_dim + d);
  }
  size_t ki(int64_t b, int64_t s, int64_t h, int64_t d) const {
    return static_cast<size_t>(((b * sk + s) * kv_heads + h) * head_dim + d);
  }
  size_t oi(int64_t b, int64_t s, int64_t h, int64_t d) const {  // out, dout
    return static_cast<size_t>(((b * sq + s) * heads + h) * dv() + d);
  }
  size_t vi(int64_t b, int64_t s, int64_t h, int64_t d) const {  // v, dv
    return static_cast<size_t>(((b * sk + s) * kv_heads + h) * dv() + d);
  }
  // Packed sequences and windows (AttnParams' labels): empty label vectors mean segment 0, position i + offset / j.
  std::vector<int32_t> q_seg, q_pos, k_seg, k_pos;
  int64_t window_left = -1, window_right = -1;
  // Attention sinks: one more logit per head in every softmax denominator (empty: none). A row that sees no key
  // stays empty (lse -inf), as hcp defines it.
  std::vector<double> sink;
  // Attention bias, [B, H, Sq, Sk] (broadcast shapes expanded; empty: none), added to the scaled scores.
  std::vector<double> bias;
  double bias_at(int64_t b, int64_t h, int64_t i, int64_t j) const {
    return bias.empty() ? 0.0 : bias[static_cast<size_t>(((b * heads + h) * sq + i) * sk + j)];
  }

  bool visible(int64_t i, int64_t j) const {
    const int64_t qs = q_seg.empty() ? 0 : q_seg[static_cast<size_t>(i)];
    const int64_t ks = k_seg.empty() ? 0 : k_seg[static_cast<size_t>(j)];
    const int64_t qp = q_pos.empty() ? i + causal_offset : q_pos[static_cast<size_t>(i)];
    const int64_t kp = k_pos.empty() ? j : k_pos[static_cast<size_t>(j)];
    if (qs != ks || qs < 0) return false;
    if (causal && kp > qp) return false;
    if (window_left >= 0 && kp < qp - window_left) return false;
    return window_right < 0 || kp <= qp + window_right;
  }
};

struct RefResult {
  std::vector<double> out, lse, dq, dk, dv;  // lse [B, H, Sq]
  std::vector<double> d_sink;                 // [H] with sinks
  std::vector<double> max_logit;              // [B, H, Sq]: each row's largest visible scaled logit (-inf: none)
  std::vector<double> dbias;                  // [B, H, Sq, Sk] with a bias: dS of every pair (0: hidden)
};

inline RefResult reference_attention(const RefProblem& p, bool backward) {
  RefResult r;
  r.out.assign(static_cast<size_t>(p.batch * p.sq * p.heads * p.dv()), 0);
  r.lse.assign(static_cast<size_t>(p.batch * p.heads * p.sq), -std::numeric_limits<double>::infinity());
  r.max_logit = r.lse;
  if (backward) {
    r.dq.assign(p.q.size(), 0);
    r.dk.assign(p.k.size(), 0);
    r.dv.assign(p.v.size(), 0);
    r.d_sink.assign(p.sink.size(), 0);
    if (!p.bias.empty()) r.dbias.assign(p.bias.size(), 0);
  }
  const int64_t group = p.heads / p.kv_heads;
  std::vector<double> prob(static_cast<size_t>(p.sk));
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t h = 0; h < p.heads; ++h) {
      const int64_t g = h / group;
      for (int64_t i = 0; i < p.sq; ++i) {
        double mx = -std::numeric_limits<double>::infinity();
        for (int64_t j = 0; j < p.sk; ++j) {
          if (!p.visible(i, j)) {
            prob[j] = -std::numeric_limits<double>::infinity();
            continue;
          }
          double dot = 0;
          for (int64_t d = 0; d < p.head_dim; ++d) dot += p.q[p.qi(b, i, h, d)] * p.k[p.ki(b, j, g, d)];
          prob[j] = dot * p.scale + p.bias_at(b, h, i, j);
          mx = std::max(mx, prob[j]);
        }
        if (mx == -std::numeric_limits<double>::infinity()) continue;
        r.max_logit[static_cast<size_t>((b * p.heads + h) * p.sq + i)] = mx;
        const bool sinked = !p.sink.empty();
        const double top = sinked ? std::max(mx, p.sink[static_cast<size_t>(h)]) : mx;
        double sum = sinked ? std::exp(p.sink[static_cast<size_t>(h)] - top) : 0.0;
        for (int64_t j = 0; j < p.sk; ++j) sum += prob[j] = p.visible(i, j) ? std::exp(prob[j] - top) : 0.0;
        for (int64_t j = 0; j < p.sk; ++j) prob[j] /= sum;
        const double lse = top + std::log(sum);
        r.lse[static_cast<size_t>((b * p.heads + h) * p.sq + i)] = lse;
        for (int64_t j = 0; j < p.sk; ++j) {
          if (prob[j] == 0) continue;  // hidden keys are not read: padding rows may hold anything, NaN included
          for (int64_t d = 0; d < p.dv(); ++d) r.out[p.oi(b, i, h, d)] += prob[j] * p.v[p.vi(b, j, g, d)];
        }
        if (!backward) continue;
        double delta = 0;
        for (int64_t d = 0; d < p.dv(); ++d) delta += p.dout[p.oi(b, i, h, d)] * r.out[p.oi(b, i, h, d)];
        if (sinked) r.d_sink[static_cast<size_t>(h)] -= std::exp(p.sink[static_cast<size_t>(h)] - lse) * delta;
        for (int64_t j = 0; j < p.sk; ++j) {
          if (prob[j] == 0) continue;
          double dp = 0;
          for (int64_t d = 0; d < p.dv(); ++d) {
            dp += p.dout[p.oi(b, i, h, d)] * p.v[p.vi(b, j, g, d)];
            r.dv[p.vi(b, j, g, d)] += prob[j] * p.dout[p.oi(b, i, h, d)];
          }
          if (!r.dbias.empty()) r.dbias[static_cast<size_t>(((b * p.heads + h) * p.sq + i) * p.sk + j)] = prob[j] * (dp - delta);
          const double ds = prob[j] * (dp - delta) * p.scale;
          for (int64_t d = 0; d < p.head_dim; ++d) {
            r.dq[p.qi(b, i, h, d)] += ds * p.k[p.ki(b, j, g, d)];
            r.dk[p.ki(b, j, g, d)] += ds * p.q[p.qi(b, i, h, d)];
          }
        }
      }
    }
  return r;
}

inline std::vector<float> random_floats(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(gen);
  return v;
}

// max |a - b| / max |b| over the finite entries of b (equal infinities match): the error relative to the
// tensor's scale, which does not blow up on entries that happen to be near zero.
template <class A, class B>
double max_rel_error(const A& a, const B& b) {
  double worst = 0, scale = 0;
  for (size_t i = 0; i < b.size(); ++i) {
    const double x = static_cast<double>(a[i]), y = static_cast<double>(b[i]);
    if (std::isinf(y) && x == y) continue;
    worst = std::max(worst, std::isnan(x) ? INFINITY : std::abs(x - y));
    scale = std::max(scale, std::abs(y));
  }
  return scale > 0 ? worst / scale : worst;
}

}  // namespace hcp::testing
