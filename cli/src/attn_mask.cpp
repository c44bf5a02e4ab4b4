#include "attn_mask.hpp"

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
      // Zero is a document with no tokens, as Transformer Engine's cu_seqlens may hold (its CP tests draw them).
      if (len < 0 || len > (int64_t{1} << 31))
        throw Error(Errc::invalid_config, "--seqlens: every length must be in [0, 2^31], got " + std::to_string(len));
      m.packed.cu_seqlens.push_back(m.packed.cu_seqlens.back() + len);
    }
    if (m.packed.cu_seqlens.back() == 0)
      throw Error(Errc::invalid_config, "--seqlens: every document is empty (" + *seqlens + "): nothing to compute");
    m.packed.cu_seqlens_padded = pad_for_cp(m.packed.cu_seqlens, cp);
    if (std::string problem = packed_batch_error(m.packed, cp); !problem.empty())
      throw Error(Errc::invalid_config, "--seqlens: " + problem);
    m.seq = m.packed.total_padded();
  }
  return m;
}

void AttnMask::apply(AttnParams* p) {
  if (!labelled()) return;
  if (seg.empty()) packed_row_labels(packed, seq, &seg, &pos);
  p->q_labels = p->k_labels = {seg.data(), pos.data()};
  p->window_left = window_left, p->window_right = window_right;
}

double AttnMask::visible_pairs() const {
  return hcp::visible_pairs(packed, seq, causal, window_left, window_right);
}

}  // namespace hcp::cli
