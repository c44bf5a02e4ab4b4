// attention_simulate: W in-process ranks run a CP scheme on the full tensors' dual-chunk shards; each rank copies
// its own shard in and its own results out, and sees the rest only through its communicators.
#include <ctime>
#include <mutex>
#include <string>
#include <vector>

#include "hcp/cp_attention.hpp"
#include "hcp/inprocess_world.hpp"
#include "sequence_layout.hpp"

namespace hcp {
namespace {

// chunk c of a [B, S, X] sequence <-> half h of rank r's local [B, S/W, X] one.
Status move_chunks(const void* src, void* dst, int64_t batch, int64_t seq, int64_t row_elems, size_t elem_bytes,
                   int world, int rank, bool to_local) {
  if (world < 1 || rank < 0 || rank >= world)
    return Status(Errc::invalid_argument, "rank " + std::to_string(rank) + " outside a world of " + std::to_string(world));
  if (seq % (2 * static_cast<int64_t>(world)) != 0)
    return Status(Errc::shape, "sequence length " + std::to_string(seq) + " is not divisible by 2 x cp = " +
                                   std::to_string(2 * world));
  const int64_t half = seq / (2 * world), local = seq / world;
  const size_t row = static_cast<size_t>(row_elems) * elem_bytes;
  const int64_t chunks[2] = {rank, 2 * world - 1 - rank};
  for (int h = 0; h < 2; ++h) {
    const size_t full_off = static_cast<size_t>(chunks[h] * half) * row, local_off = static_cast<size_t>(h * half) * row;
    if (to_local)
      cp::copy_rows(batch, half, row, static_cast<unsigned char*>(dst) + local_off, local * row, row,
                    static_cast<const unsigned char*>(src) + full_off, seq * row, row);
    else
      cp::copy_rows(batch, half, row, static_cast<unsigned char*>(dst) + full_off, seq * row, row,
                    static_cast<const unsigned char*>(src) + local_off, local * row, row);
  }
  return {};
}

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

}  // namespace

Status shard_sequence(const void* full, void* local, int64_t batch, int64_t seq, int64_t row_elems,
                      size_t elem_bytes, int world, int rank) {
  return move_chunks(full, local, batch, seq, row_elems, elem_bytes, world, rank, true);
}

Status gather_sequence(const void* local, void* full, int64_t batch, int64_t seq, int64_t row_elems,
                       size_t elem_bytes, int world, int rank) {
  return move_chunks(local, full, batch, seq, row_elems, elem_bytes, world, rank, false);
}

Status attention_simulate(const SimulateOptions& o, const SimulateTensors& t, SimulateTimes* times) {
  if (!t.q || !t.k || !t.v || !t.out || !t.lse)
    return Status(Errc::invalid_argument, "attention_simulate: q, k, v, out and lse are required");
  const bool backward = t.dout != nullptr;
  if (backward && (!t.dq || !t.dk || !t.dv))
    return Status(Errc::invalid_argument, "attention_simulate: dout given without dq, dk and dv");
  if (o.cp < 1 || o.cp > 4096) return Status(Errc::invalid_argument, "attention_simulate: cp must be in [1, 4096]");
  if (o.seq < 1 || o.seq % (2 * static_cast<int64_t>(o.cp)) != 0)
    return Status(Errc::shape, "sequence length " + std::to_string(o.seq) + " is not divisible by 2 x cp = " +
                                   std::to_string(2 * o.cp));
  if (o.timeout_ms < 1) return Status(Errc::invalid_argument, "attention_simulate: timeout must be positive");
  ParallelConfig config;
  config.world_size = o.cp;
  config.cp = o.cp;
  if (o.comm == CpComm::a2a_p2p) config.hcp_sizes = o.hcp_sizes;
  if (auto problem = config.check()) return Status(Errc::invalid_config, *problem);

  CpShape shape;
  shape.batch = o.batch, shape.seq_local = o.seq / o.cp, shape.heads = o.heads, shape.kv_heads = o.kv_heads;
  shape.head_dim = o.head_dim, shape.dtype = o.dtype, shape.causal = o.causal, shape.scale = o.scale;
  const size_t e = dtype_size(o.dtype);
  const int64_t q_row = o.heads * o.head_dim, kv_row = o.kv_heads * o.head_dim;
  int64_t q_elems = 0, kv_elems = 0;
  if (o.batch < 1 || o.heads < 1 || o.kv_heads < 1 || o.head_dim < 1 ||
      __builtin_mul_overflow(o.batch * shape.seq_local, q_row, &q_elems) ||
      __builtin_mul_overflow(o.batch * shape.seq_local, kv_row, &kv_elems))
    return Status(Errc::shape, "attention_simulate: sizes must be positive and their product must fit");

  std::mutex mu;
  SimulateTimes total;
  InProcessWorld world(o.cp, std::chrono::milliseconds(o.timeout_ms));
  Status status = world.run([&](Communicator& comm) -> Status {
    std::unique_ptr<CpContext> ctx;
    HCP_TRY(CpContext::create(comm, config, o.comm, &ctx, LogLevel::debug));
    const int r = ctx->cp_rank();
    std::vector<unsigned char> q(q_elems * e), k(kv_elems * e), v(kv_elems * e), out(q_elems * e);
    std::vector<float> lse(static_cast<size_t>(o.batch * o.heads * shape.seq_local));
    HCP_TRY(shard_sequence(t.q, q.data(), o.batch, o.seq, q_row, e, o.cp, r));
    HCP_TRY(shard_sequence(t.k, k.data(), o.batch, o.seq, kv_row, e, o.cp, r));
    HCP_TRY(shard_sequence(t.v, v.data(), o.batch, o.seq, kv_row, e, o.cp, r));
    double start = thread_cpu_seconds();
    HCP_TRY(ctx->forward(shape, q.data(), k.data(), v.data(), out.data(), lse.data()));
    const double forward_s = thread_cpu_seconds() - start;
    HCP_TRY(gather_sequence(out.data(), t.out, o.batch, o.seq, q_row, e, o.cp, r));
    // lse is [B, H, S]: the same chunks, with B*H "batches" of one value per token.
    HCP_TRY(gather_sequence(lse.data(), t.lse, o.batch * o.heads, o.seq, 1, sizeof(float), o.cp, r));
    double backward_s = 0;
    if (backward) {
      std::vector<unsigned char> dout(q.size()), dq(q.size()), dk(k.size()), dv(v.size());
      HCP_TRY(shard_sequence(t.dout, dout.data(), o.batch, o.seq, q_row, e, o.cp, r));
      start = thread_cpu_seconds();
      HCP_TRY(ctx->backward(shape, q.data(), k.data(), v.data(), out.data(), lse.data(), dout.data(), dq.data(),
                            dk.data(), dv.data()));
      backward_s = thread_cpu_seconds() - start;
      HCP_TRY(gather_sequence(dq.data(), t.dq, o.batch, o.seq, q_row, e, o.cp, r));
      HCP_TRY(gather_sequence(dk.data(), t.dk, o.batch, o.seq, kv_row, e, o.cp, r));
      HCP_TRY(gather_sequence(dv.data(), t.dv, o.batch, o.seq, kv_row, e, o.cp, r));
    }
    std::lock_guard lock(mu);
    total.forward_cpu_s += forward_s;
    total.backward_cpu_s += backward_s;
    return {};
  });
  if (times) *times = total;
  return status;
}

}  // namespace hcp
