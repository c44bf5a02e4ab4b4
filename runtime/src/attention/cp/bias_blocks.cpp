#include "bias_blocks.hpp"

#include <algorithm>
#include <utility>

namespace hcp::cp {

std::vector<int64_t> mixed_positions(const MixedOrder& moves, const std::vector<int>& members, int64_t n, int w) {
  int64_t total = 0;
  for (const RowMove& m : moves) total = std::max(total, m.to + m.rows);
  std::vector<int64_t> out(static_cast<size_t>(total));
  for (const RowMove& m : moves)
    for (int64_t r = 0; r < m.rows; ++r)
      out[static_cast<size_t>(m.to + r)] = natural_row(n, w, members[static_cast<size_t>(m.member)], m.from + r);
  return out;
}

BiasBlocks::BiasBlocks(CpEngine& eng, const AttnPairs& rows_bias, int64_t bb, int64_t hb, int64_t q, int64_t seq,
                       int64_t batch, int64_t heads, int64_t rows, bool grad)
    : eng_(eng), rows_bias_(rows_bias), bb_(bb), hb_(hb), q_(q), seq_(seq), batch_(batch), heads_(heads), rows_(rows),
      grad_(grad) {}

void BiasBlocks::set_block(size_t block, std::vector<int64_t> positions) {
  if (positions_.size() <= block) {
    positions_.resize(block + 1);
    gathered_.resize(block + 1);
    uploaded_.resize(block + 1);
    grads_.resize(block + 1);
  }
  if (positions_[block] == positions) return;  // a pass that sets its blocks again keeps what they hold
  positions_[block] = std::move(positions);
  gathered_[block].clear();
  uploaded_[block] = EngineBuffer();
  grads_[block] = EngineBuffer();
}

AttnPairs BiasBlocks::bias(size_t block) {
  const std::vector<int64_t>& cols = positions_[block];
  const auto nk = static_cast<int64_t>(cols.size());
  std::vector<float>& g = gathered_[block];
  if (g.empty()) {
    g.resize(static_cast<size_t>(bb_ * hb_ * q_ * nk));
    float* dst = g.data();
    for (int64_t b = 0; b < bb_; ++b)
      for (int64_t h = 0; h < hb_; ++h)
        for (int64_t i = 0; i < q_; ++i, dst += nk) {
          const float* src =
              rows_bias_.data + b * rows_bias_.stride_b + h * rows_bias_.stride_h + i * rows_bias_.stride_q;
          for (int64_t j = 0; j < nk; ++j) dst[j] = src[cols[static_cast<size_t>(j)]];
        }
    if (eng_.device_memory()) {
      const size_t bytes = g.size() * sizeof(float);
      Status s = eng_.alloc(bytes, &uploaded_[block]);
      if (s.ok()) s = eng_.upload(uploaded_[block].as(), g.data(), bytes);
      if (!s.ok()) {
        status_ = s;
        return {};
      }
    }
  }
  float* data = eng_.device_memory() ? uploaded_[block].as<float>() : g.data();
  return {data, bb_ > 1 ? hb_ * q_ * nk : 0, hb_ > 1 ? q_ * nk : 0, q_ > 1 ? nk : 0, 1};
}

AttnPairs BiasBlocks::grad(size_t block) {
  if (!grad_) return {};
  const auto nk = static_cast<int64_t>(positions_[block].size());
  EngineBuffer& g = grads_[block];
  if (g.as() == nullptr) {
    const size_t bytes = static_cast<size_t>(batch_ * heads_ * rows_ * nk) * sizeof(float);
    Status s = eng_.alloc(bytes, &g);
    if (s.ok()) s = eng_.zero(g.as(), bytes);
    if (!s.ok()) {
      status_ = s;
      return {};
    }
  }
  return {g.as<float>(), heads_ * rows_ * nk, rows_ * nk, nk, 1};
}

Status BiasBlocks::add_grads(float* full) {
  HCP_TRY(status_);
  std::vector<float> host;
  for (size_t block = 0; block < grads_.size(); ++block) {
    if (grads_[block].as() == nullptr) continue;
    const std::vector<int64_t>& cols = positions_[block];
    const auto nk = static_cast<int64_t>(cols.size());
    host.resize(static_cast<size_t>(batch_ * heads_ * rows_ * nk));
    HCP_TRY(eng_.download(host.data(), grads_[block].as(), host.size() * sizeof(float)));
    for (int64_t b = 0; b < batch_; ++b)
      for (int64_t h = 0; h < heads_; ++h)
        for (int64_t i = 0; i < rows_; ++i) {
          const float* src = host.data() + ((b * heads_ + h) * rows_ + i) * nk;
          float* dst = full + ((b * rows_ + i) * heads_ + h) * seq_;
          for (int64_t j = 0; j < nk; ++j) dst[cols[static_cast<size_t>(j)]] += src[j];
        }
  }
  return {};
}

void reduce_bias_grad(const float* full, int64_t batch, int64_t rows, int64_t heads, int64_t seq, int64_t bb,
                      int64_t hb, int64_t q, float* out) {
  std::fill_n(out, bb * hb * q * seq, 0.0f);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t h = 0; h < heads; ++h) {
        const float* src = full + ((b * rows + i) * heads + h) * seq;
        float* dst = out + (((bb > 1 ? b : 0) * hb + (hb > 1 ? h : 0)) * q + (q > 1 ? i : 0)) * seq;
        for (int64_t j = 0; j < seq; ++j) dst[j] += src[j];
      }
}

}  // namespace hcp::cp
