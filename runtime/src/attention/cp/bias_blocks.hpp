// Attention bias under CP (Transformer Engine's post_scale_bias, CpShape::bias): a participant holds the bias of its
// query rows against every key of the sequence in natural order (TE's layout: [Bb, Hb, rows, S]); a kernel call
// meets the keys of one block - a ring member's rows, or the gathered keys - in that block's own row order. The
// blocks' bias columns are gathered once per pass into [Bb, Hb, rows, block keys] and handed to the calls
// (AttnParams::bias); in the backward the blocks' dS go to one gradient whose columns are the blocks' keys one block
// after another ([B, rows, H, keys of every block], token-major), put back in natural order once at the end. The gathering and the adding back run
// on the host (bias rows in host memory); a device engine's calls read the gathered blocks and write the gradients in
// its memory (uploaded, zeroed and downloaded once a pass): O(S^2 / cp) bytes a pass next to O(S^2 D / cp) work.
#pragma once

#include <cstdint>
#include <vector>

#include "hcp/attention_params.hpp"
#include "hcp/cp_engine.hpp"
#include "row_labels.hpp"
#include "sequence_layout.hpp"

namespace hcp::cp {

// The natural sequence position of local row l of CP rank m, whose n rows are its dual chunks m and 2w-1-m.
inline int64_t natural_row(int64_t n, int w, int m, int64_t l) {
  const int64_t half = n / 2;
  return l < half ? m * half + l : (2 * static_cast<int64_t>(w) - 1 - m) * half + (l - half);
}

// The natural positions of a mixed block's rows: group members' local rows placed by `moves` (cp::group_order);
// member j of the moves is CP rank members[j].
std::vector<int64_t> mixed_positions(const MixedOrder& moves, const std::vector<int>& members, int64_t n, int w);

class BiasBlocks {
 public:
  // `rows_bias`: [bb, hb, q, seq] by its strides (stride_k 1; q: the participant's `rows`, or 1 for a bias
  // broadcast over queries) of a participant with `batch` x `heads` heads and `rows` query rows. grad: the backward
  // keeps each block's gradient.
  // shared_grad: the calls may add the gradient of every batch row (when bb is 1) and of every head (when hb is 1)
  // into one: a host engine whose kernel runs on one thread adds them one after another (a device engine, or
  // several threads, would race).
  BiasBlocks(CpEngine& eng, const AttnPairs& rows_bias, int64_t bb, int64_t hb, int64_t q, int64_t seq,
             int64_t batch, int64_t heads, int64_t rows, bool grad, bool shared_grad = false);
  // Block `block`'s keys: the natural position of each of its rows (all blocks are added before a pass).
  void set_block(size_t block, std::vector<int64_t> positions);
  // The bias of a block in its keys' order, gathered on first use; and its gradient, zero on first use; in the
  // engine's memory. An allocation failure leaves the view empty and is returned by status().
  AttnPairs bias(size_t block);
  AttnPairs grad(size_t block);
  Status status() const { return status_; }
  // The gradient in natural column order into `full` (host): [grad_batch, rows, grad_heads, seq] (token-major, the
  // a2a's form). Every element is written: the blocks' keys are every key of the sequence once.
  Status add_grads(float* full);
  int64_t grad_batch() const { return grad_batch_; }
  int64_t grad_heads() const { return grad_heads_; }
  // The gradient summed into the bias's shape [bb, hb, q, seq] (natural columns) at `out`.
  Status reduce_grads(float* out);

 private:
  CpEngine& eng_;
  AttnPairs rows_bias_;  // host memory
  int64_t bb_, hb_, q_, seq_, batch_, heads_, rows_;
  int64_t grad_batch_, grad_heads_;  // the gradient's: batch_ and heads_, or 1 where shared
  bool grad_;
  std::vector<std::vector<int64_t>> positions_;
  std::vector<std::vector<float>> gathered_;
  std::vector<EngineBuffer> uploaded_;  // device engines' copies of gathered_
  EngineBuffer grads_;                  // [batch, rows, heads, columns]: block b's keys from column offsets_[b]
  std::vector<int64_t> offsets_;
  int64_t columns_ = 0;
  Status status_;
  Status host_grads(std::vector<float>* copy, const float** grads);
};

// The bias's gradient in its own shape [bb, hb, q, seq] from the full one [batch, rows, heads, seq] (token-major):
// sums over the dimensions the bias broadcasts (batch when bb is 1, heads when hb is 1, rows when q is 1).
void reduce_bias_grad(const float* full, int64_t batch, int64_t rows, int64_t heads, int64_t seq, int64_t bb,
                      int64_t hb, int64_t q, float* out);

}  // namespace hcp::cp
