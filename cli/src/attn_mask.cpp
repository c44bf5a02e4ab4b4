#include "attn_mask.hpp"

#include <algorithm>

#include "hcp/error.hpp"
#include "int_list.hpp"

namespace hcp::cli {

AttnMask make_attn_mask(const std::optional<std::string>& seqlens, const std::optional<std::string>& window, int cp,
                        bool causal, int64_t seq) {
  AttnMask m;
  m.causal = causal;
  m.seq = seq;
  if (window) {
    const std::vector<int64_t> sides = parse_int_list(*window, "--window");
    if (sides.size() != 2 || sides[0] < -1 || sides[1] < -1)
      throw Error(Errc::invalid_config, "--window takes LEFT,RIGHT with each side -1 (unbounded) or >= 0, got '" +
                                            *window + "'");
    m.window_left = sides[0], m.window_right = sides[1];
  }
  if (seqlens) {
    m.packed.cu_seqlens = {0};
    for (int64_t len : parse_int_list(*seqlens, "--seqlens")) {
      if (len < 1 || len > (int64_t{1} << 31))
        throw Error(Errc::invalid_config, "--seqlens: every length must be in [1, 2^31], got " + std::to_string(len));
      m.packed.cu_seqlens.push_back(m.packed.cu_seqlens.back() + len);
    }
    m.packed.cu_seqlens_padded = pad_for_cp(m.packed.cu_seqlens, cp);
    if (std::string problem = packed_batch_error(m.packed, cp); !problem.empty())
      throw Error(Errc::invalid_config, "--seqlens: " + problem);
    m.seq = m.packed.total_padded();
  }
  if (!m.labelled()) return m;
  m.seg.assign(static_cast<size_t>(m.seq), 0);
  m.pos.resize(static_cast<size_t>(m.seq));
  const PackedBatch whole{{0, m.seq}, {}};
  const PackedBatch& b = m.packed.empty() ? whole : m.packed;
  for (size_t d = 0; d + 1 < b.padded().size(); ++d)
    for (int64_t i = b.padded()[d]; i < b.padded()[d + 1]; ++i) {
      const int64_t at = i - b.padded()[d];
      m.seg[static_cast<size_t>(i)] = at < b.cu_seqlens[d + 1] - b.cu_seqlens[d] ? static_cast<int32_t>(d) : -1;
      m.pos[static_cast<size_t>(i)] = static_cast<int32_t>(at);
    }
  return m;
}

void AttnMask::apply(AttnParams* p) const {
  if (!labelled()) return;
  p->q_labels = p->k_labels = {seg.data(), pos.data()};
  p->window_left = window_left, p->window_right = window_right;
}

double AttnMask::visible_pairs() const {
  const std::vector<int64_t> whole{0, seq};
  const std::vector<int64_t>& cu = packed.empty() ? whole : packed.cu_seqlens;
  double pairs = 0;
  for (size_t d = 0; d + 1 < cu.size(); ++d) {
    const int64_t len = cu[d + 1] - cu[d];
    for (int64_t i = 0; i < len; ++i) {
      int64_t lo = 0, hi = causal ? i : len - 1;
      if (window_left >= 0) lo = std::max(lo, i - window_left);
      if (window_right >= 0) hi = std::min(hi, i + window_right);
      if (hi >= lo) pairs += static_cast<double>(hi - lo + 1);
    }
  }
  return pairs;
}

}  // namespace hcp::cli
