// attention_simulate: W in-process ranks run a CP scheme on the full tensors' dual-chunk shards; each rank copies
// its own shard in and its own results out, and sees the rest only through its communicators.
#include <algorithm>
#include <ctime>
#include <mutex>
#include <string>
#include <vector>

#include "hcp/attention_cuda.hpp"
#include "hcp/cp_attention.hpp"
#include "hcp/inprocess_world.hpp"
#include "bias_blocks.hpp"
#include "sequence_layout.hpp"

namespace hcp {
namespace {

// chunk c of a [B, S, X] sequence (or [S, B, X] with sbhd) <-> half h of rank r's local [B, S/W, X] one.
Status move_chunks(const void* src, void* dst, int64_t batch, int64_t seq, int64_t row_elems, size_t elem_bytes,
                   int world, int rank, bool to_local, SeqLayout layout) {
  if (world < 1 || rank < 0 || rank >= world)
    return Status(Errc::invalid_argument, "rank " + std::to_string(rank) + " outside a world of " + std::to_string(world));
  if (seq % (2 * static_cast<int64_t>(world)) != 0)
    return Status(Errc::shape, "sequence length " + std::to_string(seq) + " is not divisible by 2 x cp = " +
                                   std::to_string(2 * world));
  const int64_t half = seq / (2 * world), local = seq / world;
  const size_t row = static_cast<size_t>(row_elems) * elem_bytes;
  const int64_t chunks[2] = {rank, 2 * world - 1 - rank};
  // The full tensor's batch and token strides: token s of batch b at (b S + s) rows, or (s B + b) rows with sbhd.
  const bool seq_first = layout == SeqLayout::sbhd;
  const size_t full_b = seq_first ? row : static_cast<size_t>(seq) * row;
  const size_t full_r = seq_first ? static_cast<size_t>(batch) * row : row;
  for (int h = 0; h < 2; ++h) {
    const size_t full_off = static_cast<size_t>(chunks[h] * half) * full_r, local_off = static_cast<size_t>(h * half) * row;
    if (to_local)
      cp::copy_rows(batch, half, row, static_cast<unsigned char*>(dst) + local_off, local * row, row,
                    static_cast<const unsigned char*>(src) + full_off, full_b, full_r);
    else
      cp::copy_rows(batch, half, row, static_cast<unsigned char*>(dst) + full_off, full_b, full_r,
                    static_cast<const unsigned char*>(src) + local_off, local * row, row);
  }
  return {};
}

double seconds_of(clockid_t id) {
  timespec ts{};
  clock_gettime(id, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// This thread's CPU time and the wall time since construction.
class Clock {
 public:
  struct Span {
    double cpu_s = 0, wall_s = 0;
  };
  Span lap() const {
    return {seconds_of(CLOCK_THREAD_CPUTIME_ID) - cpu0_, seconds_of(CLOCK_MONOTONIC) - wall0_};
  }

 private:
  double cpu0_ = seconds_of(CLOCK_THREAD_CPUTIME_ID), wall0_ = seconds_of(CLOCK_MONOTONIC);
};

// A rank's CUDA stream, destroyed with the rank (after its engine's buffers, which are declared later).
struct RankStream {
  void* handle = nullptr;
  RankStream() = default;
  RankStream(const RankStream&) = delete;
  RankStream& operator=(const RankStream&) = delete;
  ~RankStream() { cuda_stream_destroy(handle); }
};

}  // namespace

Status shard_sequence(const void* full, void* local, int64_t batch, int64_t seq, int64_t row_elems,
                      size_t elem_bytes, int world, int rank, SeqLayout layout) {
  return move_chunks(full, local, batch, seq, row_elems, elem_bytes, world, rank, true, layout);
}

Status gather_sequence(const void* local, void* full, int64_t batch, int64_t seq, int64_t row_elems,
                       size_t elem_bytes, int world, int rank, SeqLayout layout) {
  return move_chunks(local, full, batch, seq, row_elems, elem_bytes, world, rank, false, layout);
}

namespace {

// What every rank derives from the options: the configuration, this rank's shape and the element counts.
struct Plan {
  ParallelConfig config;
  CpShape shape;
  size_t e = 0;
  // Elements per token and per rank of q (and dq), the output (out, dout: the value head dim), K (dK) and V (dV).
  int64_t q_row = 0, o_row = 0, k_row = 0, v_row = 0, q_elems = 0, o_elems = 0, k_elems = 0, v_elems = 0;
  int64_t seq = 0;  // full sequence length (packed: padded tokens)
  bool backward = false;
  SeqLayout layout = SeqLayout::bshd;  // of the full tensors (lse: always [B, H, S])

  // Rank r's rows of a full tensor [B, seq, X] (`outer` of them, each [seq, row]; [seq, outer, X] when `layout`
  // is sbhd) and back. Packed batches have one row of the batch: the layouts are the same bytes.
  Status shard(const void* full, void* local, int64_t outer, int64_t row, size_t elem, int cp, int r,
               SeqLayout as = SeqLayout::bshd) const {
    if (!shape.packed.empty()) return shard_packed(full, local, shape.packed, row, elem, cp, r, outer);
    return shard_sequence(full, local, outer, seq, row, elem, cp, r, as);
  }
  Status gather(const void* local, void* full, int64_t outer, int64_t row, size_t elem, int cp, int r,
                SeqLayout as = SeqLayout::bshd) const {
    if (!shape.packed.empty()) return gather_packed(local, full, shape.packed, row, elem, cp, r, outer);
    return gather_sequence(local, full, outer, seq, row, elem, cp, r, as);
  }
};

Status make_plan(const SimulateOptions& o, const SimulateTensors& t, Plan* plan) {
  if (!t.q || !t.k || !t.v || !t.out || !t.lse)
    return Status(Errc::invalid_argument, "q, k, v, out and lse are required");
  plan->backward = t.dout != nullptr;
  if (plan->backward && (!t.dq || !t.dk || !t.dv))
    return Status(Errc::invalid_argument, "dout given without dq, dk and dv");
  if (o.cp < 1 || o.cp > 4096)
    return Status(Errc::invalid_config, "cp must be in [1, 4096], got " + std::to_string(o.cp));
  const int64_t seq = o.packed.empty() ? o.seq : o.packed.total_padded();
  if (!o.packed.empty()) {
    if (std::string problem = packed_batch_error(o.packed, o.cp); !problem.empty()) return Status(Errc::shape, problem);
    if (o.batch != 1) return Status(Errc::shape, "packed sequences need batch 1, got " + std::to_string(o.batch));
    if (seq < 1) return Status(Errc::shape, "the packed batch has no tokens");
  } else if (o.seq < 1 || o.seq % (2 * static_cast<int64_t>(o.cp)) != 0)
    return Status(Errc::shape, "sequence length " + std::to_string(o.seq) + " is not divisible by 2 x cp = " +
                                   std::to_string(2 * o.cp));
  if (o.timeout_ms < 1) return Status(Errc::invalid_argument, "the timeout must be positive");
  plan->config.world_size = o.cp;
  plan->config.cp = o.cp;
  // Hierarchical sizes are the layout of any scheme (their groups are built and logged); only a2a+p2p computes on them.
  if (!o.hcp_sizes.empty()) plan->config.hcp_sizes = o.hcp_sizes;
  if (o.gpus_per_node > 0) plan->config.gpus_per_node = o.gpus_per_node;
  if (auto problem = plan->config.check()) return Status(Errc::invalid_config, *problem);
  CpShape& shape = plan->shape;
  shape.batch = o.batch, shape.seq_local = seq / o.cp, shape.heads = o.heads, shape.kv_heads = o.kv_heads;
  shape.head_dim = o.head_dim, shape.head_dim_v = o.head_dim_v, shape.dtype = o.dtype, shape.causal = o.causal, shape.scale = o.scale;
  shape.kernel_threads = o.kernel_threads;
  shape.packed = o.packed, shape.window_left = o.window_left, shape.window_right = o.window_right;
  shape.softmax = o.softmax, shape.sink = o.sink;
  if (o.bias) {
    // Checked before any rank copies its rows out of it (CpContext would refuse the same, later).
    const bool per_row = o.bias_rows == seq, one_row = o.bias_rows == 1 && o.bias_batch == 1 && o.bias_heads == 1;
    if ((!per_row && !one_row) || (o.bias_batch != 1 && o.bias_batch != o.batch) ||
        (o.bias_heads != 1 && o.bias_heads != o.heads))
      return Status(Errc::shape, "the bias must be [1 or batch, 1 or heads, S, S] or [1, 1, 1, S] (Transformer "
                                 "Engine's shapes), got [" +
                                     std::to_string(o.bias_batch) + ", " + std::to_string(o.bias_heads) + ", " +
                                     std::to_string(o.bias_rows) + ", S]");
    shape.bias_batch = o.bias_batch, shape.bias_heads = o.bias_heads;
    shape.bias_rows = o.bias_rows == 1 ? 1 : shape.seq_local;
  }
  plan->seq = seq;
  plan->layout = o.layout;
  plan->e = dtype_size(o.dtype);
  if (o.batch < 1 || o.heads < 1 || o.kv_heads < 1 || o.head_dim < 1 || o.head_dim_v < 0 || o.heads > (1 << 20) ||
      o.kv_heads > (1 << 20) || o.head_dim > (1 << 20) || o.head_dim_v > (1 << 20))
    return Status(Errc::shape, "sizes must be positive and their product must fit");
  const int64_t dv = o.head_dim_v > 0 ? o.head_dim_v : o.head_dim;
  plan->q_row = o.heads * o.head_dim, plan->o_row = o.heads * dv;
  plan->k_row = o.kv_heads * o.head_dim, plan->v_row = o.kv_heads * dv;
  int64_t tokens = 0;
  if (__builtin_mul_overflow(o.batch, shape.seq_local, &tokens) ||
      __builtin_mul_overflow(tokens, plan->q_row, &plan->q_elems) ||
      __builtin_mul_overflow(tokens, plan->o_row, &plan->o_elems) ||
      __builtin_mul_overflow(tokens, plan->k_row, &plan->k_elems) ||
      __builtin_mul_overflow(tokens, plan->v_row, &plan->v_elems))
    return Status(Errc::shape, "sizes must be positive and their product must fit");
  return {};
}

// `own_process`: this rank is the only one writing to t (one rank per process); otherwise the ranks share t and
// CP rank 0 alone writes the values every rank computes (the sink's gradient).
Status run_rank(Communicator& comm, const SimulateOptions& o, const Plan& plan, const SimulateTensors& t,
                RankRun* run, bool own_process) {
  const size_t e = plan.e;
  const int64_t q_row = plan.q_row, o_row = plan.o_row, k_row = plan.k_row, v_row = plan.v_row;
  const int64_t q_elems = plan.q_elems, o_elems = plan.o_elems, k_elems = plan.k_elems, v_elems = plan.v_elems;
  CpShape shape = plan.shape;
  RankStream stream;
  std::unique_ptr<CpEngine> engine;
  if (o.make_engine) {
    engine = o.make_engine();
    if (!engine) return Status(Errc::internal, "make_engine returned no engine");
  } else if (o.device.kind == CpDevice::Kind::cuda) {
    HCP_TRY(cuda_stream_create(&stream.handle));
    HCP_TRY(make_cuda_engine(stream.handle, &engine));
  } else {
    engine = make_cpu_engine();
  }
  std::unique_ptr<CpContext> ctx;
  HCP_TRY(CpContext::create(comm, plan.config, o.comm, std::move(engine), &ctx, o.log_level));
  CpEngine& eng = ctx->engine();
  const int r = ctx->cp_rank();
  run->cp_rank = r;
  std::vector<unsigned char> host(static_cast<size_t>(std::max(q_elems, o_elems)) * e);  // the largest tensor
  EngineBuffer q, k, v, out, lse;
  auto shard_in = [&](const void* full, int64_t row, int64_t elems, EngineBuffer* buf) -> Status {
    HCP_TRY(plan.shard(full, host.data(), o.batch, row, e, o.cp, r, plan.layout));
    HCP_TRY(eng.alloc(static_cast<size_t>(elems) * e, buf));
    return eng.upload(buf->as(), host.data(), static_cast<size_t>(elems) * e);
  };
  auto gather_out = [&](const EngineBuffer& buf, void* full, int64_t row, int64_t elems) -> Status {
    HCP_TRY(eng.download(host.data(), buf.as(), static_cast<size_t>(elems) * e));
    return plan.gather(host.data(), full, o.batch, row, e, o.cp, r, plan.layout);
  };
  // This rank's rows of the bias (its queries' rows in local order; a [.., 1, S] bias is every rank's).
  const int64_t seq_full = plan.seq, n = shape.seq_local;
  std::vector<float> bias_rows, d_bias;
  if (o.bias) {
    const int64_t planes = o.bias_batch * o.bias_heads;
    if (o.bias_rows == 1) {
      bias_rows.assign(o.bias, o.bias + planes * seq_full);
    } else {
      bias_rows.resize(static_cast<size_t>(planes * n * seq_full));
      for (int64_t pl = 0; pl < planes; ++pl)
        for (int64_t l = 0; l < n; ++l)
          std::copy_n(o.bias + (pl * seq_full + cp::natural_row(n, o.cp, r, l)) * seq_full, seq_full,
                      bias_rows.data() + (pl * n + l) * seq_full);
    }
    d_bias.assign(bias_rows.size(), 0.0f);
  }
  EngineBuffer bias_buf, d_bias_buf;  // CpShape's bias is the engine's memory
  if (o.bias) {
    const size_t bytes = bias_rows.size() * sizeof(float);
    HCP_TRY(eng.alloc(bytes, &bias_buf));
    HCP_TRY(eng.upload(bias_buf.as(), bias_rows.data(), bytes));
    HCP_TRY(eng.alloc(bytes, &d_bias_buf));
    shape.bias = bias_buf.as<float>();
  }
  HCP_TRY(shard_in(t.q, q_row, q_elems, &q));
  HCP_TRY(shard_in(t.k, k_row, k_elems, &k));
  HCP_TRY(shard_in(t.v, v_row, v_elems, &v));
  HCP_TRY(eng.alloc(static_cast<size_t>(o_elems) * e, &out));
  const int64_t rows = o.batch * o.heads * shape.seq_local;
  HCP_TRY(eng.alloc(static_cast<size_t>(rows) * sizeof(float), &lse));
  std::vector<float> max_logit(static_cast<size_t>(o.heads));
  if (t.max_logit) shape.max_logit = max_logit.data();
  Clock clock;
  HCP_TRY(ctx->forward(shape, q.as(), k.as(), v.as(), out.as(), lse.as<float>()));
  shape.max_logit = nullptr;
  if (t.max_logit && (own_process || r == 0)) std::copy(max_logit.begin(), max_logit.end(), t.max_logit);
  HCP_TRY(eng.synchronize());
  const Clock::Span forward = clock.lap();
  HCP_TRY(gather_out(out, t.out, o_row, o_elems));
  // lse is [B, H, S]: the same chunks, with B*H "batches" of one value per token.
  std::vector<float> lse_host(static_cast<size_t>(rows));
  HCP_TRY(eng.download(lse_host.data(), lse.as(), lse_host.size() * sizeof(float)));
  HCP_TRY(plan.gather(lse_host.data(), t.lse, o.batch * o.heads, 1, sizeof(float), o.cp, r));
  Clock::Span backward;
  if (plan.backward) {
    EngineBuffer dout, dq, dk, dv;
    HCP_TRY(shard_in(t.dout, o_row, o_elems, &dout));
    HCP_TRY(eng.alloc(static_cast<size_t>(q_elems) * e, &dq));
    HCP_TRY(eng.alloc(static_cast<size_t>(k_elems) * e, &dk));
    HCP_TRY(eng.alloc(static_cast<size_t>(v_elems) * e, &dv));
    std::vector<float> d_sink(static_cast<size_t>(o.heads));
    shape.d_sink = d_sink.data();
    if (o.bias && t.d_bias) shape.d_bias = d_bias_buf.as<float>();
    clock = Clock();
    HCP_TRY(ctx->backward(shape, q.as(), k.as(), v.as(), out.as(), lse.as<float>(), dout.as(), dq.as(), dk.as(),
                          dv.as()));
    HCP_TRY(eng.synchronize());
    backward = clock.lap();
    HCP_TRY(gather_out(dq, t.dq, q_row, q_elems));
    HCP_TRY(gather_out(dk, t.dk, k_row, k_elems));
    HCP_TRY(gather_out(dv, t.dv, v_row, v_elems));
    if (t.d_sink != nullptr && shape.softmax == SoftmaxType::learnable && (own_process || r == 0))
      std::copy(d_sink.begin(), d_sink.end(), t.d_sink);
    if (o.bias && t.d_bias) {  // this rank's rows of the gradient; a [.., 1, S] bias's is the group's, on every rank
      HCP_TRY(eng.download(d_bias.data(), d_bias_buf.as(), d_bias.size() * sizeof(float)));
      const int64_t planes = o.bias_batch * o.bias_heads;
      if (o.bias_rows == 1) {
        if (own_process || r == 0) std::copy(d_bias.begin(), d_bias.end(), t.d_bias);
      } else {
        for (int64_t pl = 0; pl < planes; ++pl)
          for (int64_t l = 0; l < n; ++l)
            std::copy_n(d_bias.data() + (pl * n + l) * seq_full, seq_full,
                        t.d_bias + (pl * seq_full + cp::natural_row(n, o.cp, r, l)) * seq_full);
      }
    }
  }
  run->times.forward_cpu_s = forward.cpu_s, run->times.backward_cpu_s = backward.cpu_s;
  run->times.forward_wall_s = forward.wall_s, run->times.backward_wall_s = backward.wall_s;
  return {};
}

}  // namespace

Status attention_rank(Communicator& world, const SimulateOptions& o, const SimulateTensors& t, RankRun* run) {
  Plan plan;
  HCP_TRY(make_plan(o, t, &plan));
  if (world.size() != o.cp)
    return Status(Errc::invalid_config, "cp is " + std::to_string(o.cp) + " but the communicator has " +
                                            std::to_string(world.size()) + " ranks");
  RankRun ignored;
  return run_rank(world, o, plan, t, run ? run : &ignored, true);
}

Status attention_simulate(const SimulateOptions& o, const SimulateTensors& t, SimulateTimes* times) {
  Plan plan;
  HCP_TRY(make_plan(o, t, &plan));
  std::mutex mu;
  SimulateTimes total;
  InProcessWorld world(o.cp, std::chrono::milliseconds(o.timeout_ms));
  Status status = world.run([&](Communicator& comm) -> Status {
    RankRun run;
    HCP_TRY(run_rank(comm, o, plan, t, &run, false));
    std::lock_guard lock(mu);
    total.forward_cpu_s += run.times.forward_cpu_s;
    total.backward_cpu_s += run.times.backward_cpu_s;
    total.forward_wall_s = std::max(total.forward_wall_s, run.times.forward_wall_s);
    total.backward_wall_s = std::max(total.backward_wall_s, run.times.backward_wall_s);
    return {};
  });
  if (times) *times = total;
  return status;
}

}  // namespace hcp
