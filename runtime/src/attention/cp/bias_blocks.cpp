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
                       int64_t batch, int64_t heads, int64_t rows, bool grad, bool shared_grad)
    : eng_(eng), rows_bias_(rows_bias), bb_(bb), hb_(hb), q_(q), seq_(seq), batch_(batch), heads_(heads), rows_(rows),
      grad_batch_(shared_grad && bb == 1 ? 1 : batch), grad_heads_(shared_grad && hb == 1 ? 1 : heads), grad_(grad) {}

void BiasBlocks::set_block(size_t block, std::vector<int64_t> positions) {
  if (positions_.size() <= block) {
    positions_.resize(block + 1);
    gathered_.resize(block + 1);
    uploaded_.resize(block + 1);
  }
  if (positions_[block] == positions) return;  // a pass that sets its blocks again keeps what they hold
  positions_[block] = std::move(positions);
  gathered_[block].clear();
  uploaded_[block] = EngineBuffer();
  grads_ = EngineBuffer();  // the blocks' columns changed
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
  if (grads_.as() == nullptr) {
    offsets_.clear();
    columns_ = 0;
    for (const std::vector<int64_t>& cols : positions_) {
      offsets_.push_back(columns_);
      columns_ += static_cast<int64_t>(cols.size());
    }
    const size_t bytes = static_cast<size_t>(grad_batch_ * rows_ * grad_heads_ * columns_) * sizeof(float);
    Status s = eng_.alloc(bytes, &grads_);
    if (s.ok()) s = eng_.zero(grads_.as(), bytes);
    if (!s.ok()) {
      status_ = s;
      return {};
    }
  }
  return {grads_.as<float>() + offsets_[block], grad_batch_ > 1 ? rows_ * grad_heads_ * columns_ : 0,
          grad_heads_ > 1 ? columns_ : 0, grad_heads_ * columns_, 1};
}

Status BiasBlocks::host_grads(std::vector<float>* copy, const float** grads) {
  HCP_TRY(status_);
  if (grads_.as() == nullptr) return Status(Errc::internal, "bias gradient asked for before any block computed it");
  // A device engine's gradient comes over once; a host engine's is read where the kernels wrote it.
  *grads = grads_.as<float>();
  if (!eng_.device_memory()) return {};
  copy->resize(static_cast<size_t>(grad_batch_ * rows_ * grad_heads_ * columns_));
  HCP_TRY(eng_.download(copy->data(), grads_.as(), copy->size() * sizeof(float)));
  *grads = copy->data();
  return {};
}

Status BiasBlocks::reduce_grads(float* out) {
  std::vector<float> copy;
  const float* grads = nullptr;
  HCP_TRY(host_grads(&copy, &grads));
  // In double: a 111s bias's gradient sums every row of every head.
  std::vector<double> sums(static_cast<size_t>(bb_ * hb_ * q_ * seq_), 0.0);
  for (int64_t b = 0; b < grad_batch_; ++b)
    for (int64_t i = 0; i < rows_; ++i)
      for (int64_t h = 0; h < grad_heads_; ++h) {
        const float* src = grads + ((b * rows_ + i) * grad_heads_ + h) * columns_;
        double* dst = sums.data() + (((bb_ > 1 ? b : 0) * hb_ + (hb_ > 1 ? h : 0)) * q_ + (q_ > 1 ? i : 0)) * seq_;
        for (size_t block = 0; block < positions_.size(); ++block) {
          const std::vector<int64_t>& cols = positions_[block];
          const float* from = src + offsets_[block];
          for (size_t j = 0; j < cols.size(); ++j) dst[cols[j]] += from[j];
        }
      }
  std::copy(sums.begin(), sums.end(), out);
  return {};
}

Status BiasBlocks::add_grads(float* full) {
  std::vector<float> copy;
  const float* grads = nullptr;
  HCP_TRY(host_grads(&copy, &grads));
  for (int64_t r = 0; r < grad_batch_ * rows_ * grad_heads_; ++r) {
    const float* src = grads + r * columns_;
    float* dst = full + r * seq_;
    for (size_t block = 0; block < positions_.size(); ++block) {
      const std::vector<int64_t>& cols = positions_[block];
      const float* from = src + offsets_[block];
      for (size_t j = 0; j < cols.size(); ++j) dst[cols[j]] = from[j];
    }
  }
  return {};
}

void reduce_bias_grad(const float* full, int64_t batch, int64_t rows, int64_t heads, int64_t seq, int64_t bb,
                      int64_t hb, int64_t q, float* out) {
  std::vector<double> sums(static_cast<size_t>(bb * hb * q * seq), 0.0);  // as reduce_grads
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t h = 0; h < heads; ++h) {
        const float* src = full + ((b * rows + i) * heads + h) * seq;
        double* dst = sums.data() + (((bb > 1 ? b : 0) * hb + (hb > 1 ? h : 0)) * q + (q > 1 ? i : 0)) * seq;
        for (int64_t j = 0; j < seq; ++j) dst[j] += src[j];
      }
  std::copy(sums.begin(), sums.end(), out);
}

}  // namespace hcp::cp
