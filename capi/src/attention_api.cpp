// C ABI over the in-process world, CP contexts and CP attention.
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>
#include <algorithm>

#include "callback_communicator.hpp"
#include "guard.hpp"
#include "owned_comms.hpp"
#include "hcp/attention_cuda.hpp"
#include "hcp/cp_attention.hpp"
#include "hcp/inprocess_world.hpp"
#include "hcp/nccl_communicator.hpp"
#include "hcp/log.hpp"
#include "hcp/mpi_communicator.hpp"
#include "parallel_config_c.hpp"
#include "struct_versions.hpp"
#include "tensor_view.hpp"

struct hcp_world {
  hcp::InProcessWorld world;
};
// hcp_comm is never defined: an hcp_comm* is an hcp::Communicator* owned by its world or, for NCCL, by the caller.
struct hcp_cp_context {
  std::unique_ptr<hcp::CpContext> context;
  hcp_device device = HCP_DEVICE_CPU;
};

namespace hcp::capi {
namespace {

// A timeout of 0 means the default; negative ones are refused.
constexpr int64_t kDefaultTimeoutMs = 60000;

std::chrono::milliseconds timeout_of(int64_t timeout_ms, const char* fn, const char* name = "timeout_ms") {
  if (timeout_ms < 0 || timeout_ms > INT32_MAX)
    throw Error(Errc::invalid_argument, std::string(fn) + ": " + name + " (" + std::to_string(timeout_ms) +
                                            ") must be in [0, 2^31) ms (0: the default, 60000)");
  return std::chrono::milliseconds(timeout_ms == 0 ? kDefaultTimeoutMs : timeout_ms);
}


void throw_status(const Status& s) {
  if (!s.ok()) throw Error(s.code(), s.message());
}

// The checked views of q, k, v, out, lse (and dout, dq, dk, dv) and the shape they describe.
struct AttnArgs {
  TensorView q, k, v, out, lse, dout, dq, dk, dv;
  CpShape shape;
};

AttnArgs attn_args(const hcp_tensor* q, const hcp_tensor* k, const hcp_tensor* v, const hcp_tensor* out,
                   const hcp_tensor* lse, const hcp_tensor* dout, const hcp_tensor* dq, const hcp_tensor* dk,
                   const hcp_tensor* dv, bool backward, const char* fn) {
  AttnArgs a;
  a.q = view(q, 4, fn, "q");
  a.k = view(k, 4, fn, "k");
  a.v = view(v, 4, fn, "v");
  a.out = view(out, 4, fn, "out");
  a.lse = view(lse, 3, fn, "lse");
  const DType dt = a.q.dtype;
  TensorView kv_shape = a.q;
  kv_shape.shape[2] = a.k.shape[2];
  expect_like(a.k, kv_shape, 4, dt, fn, "k", "q (with k's heads)");
  // v's head dim may differ from q's and k's (MLA); out, dout and dv have v's.
  TensorView v_shape = a.k;
  v_shape.shape[3] = a.v.shape[3];
  expect_like(a.v, v_shape, 4, dt, fn, "v", "k (with v's head dim)");
  TensorView out_shape = a.q;
  out_shape.shape[3] = a.v.shape[3];
  expect_like(a.out, out_shape, 4, dt, fn, "out", "q (with v's head dim)");
  TensorView lse_shape;
  lse_shape.device = a.q.device;
  lse_shape.shape[0] = a.q.shape[0], lse_shape.shape[1] = a.q.shape[2], lse_shape.shape[2] = a.q.shape[1];
  expect_like(a.lse, lse_shape, 3, DType::f32, fn, "lse", "[B, H, S] of q");
  if (backward) {
    a.dout = view(dout, 4, fn, "dout");
    a.dq = view(dq, 4, fn, "dq");
    a.dk = view(dk, 4, fn, "dk");
    a.dv = view(dv, 4, fn, "dv");
    expect_like(a.dout, out_shape, 4, dt, fn, "dout", "out");
    expect_like(a.dq, a.q, 4, dt, fn, "dq", "q");
    expect_like(a.dk, a.k, 4, dt, fn, "dk", "k");
    expect_like(a.dv, a.v, 4, dt, fn, "dv", "v");
  }
  a.shape.batch = a.q.shape[0], a.shape.seq_local = a.q.shape[1], a.shape.heads = a.q.shape[2];
  a.shape.kv_heads = a.k.shape[2], a.shape.head_dim = a.q.shape[3], a.shape.head_dim_v = a.v.shape[3];
  a.shape.dtype = dt;
  return a;
}

void expect_device(const AttnArgs& a, hcp_device device, const char* fn) {
  if (a.q.device != device)
    throw Error(Errc::invalid_argument, std::string(fn) + ": the tensors are " +
                                            (a.q.device == HCP_DEVICE_CUDA ? "CUDA" : "host") +
                                            " memory but the context computes on the " +
                                            (device == HCP_DEVICE_CUDA ? "CUDA device" : "CPU"));
}

// The window and the packed documents of hcp_attn_options / hcp_attn_simulate_options (the same fields).
struct Mask {
  PackedBatch packed;
  int64_t window_left = -1, window_right = -1;
};

template <class Options>
Mask read_mask(const Options& o, const char* fn) {
  Mask m;
  const std::string where = std::string(fn) + ": options->";
  if (o.sliding_window != 0 && o.sliding_window != 1)
    throw Error(Errc::invalid_argument, where + "sliding_window must be 0 or 1, got " + std::to_string(o.sliding_window));
  if (o.sliding_window == 1) {
    if (o.window_left < -1 || o.window_right < -1)
      throw Error(Errc::invalid_argument, where + "window_left and window_right must be -1 (unbounded) or >= 0, got (" +
                                              std::to_string(o.window_left) + ", " + std::to_string(o.window_right) +
                                              ")");
    m.window_left = o.window_left, m.window_right = o.window_right;
  }
  if (o.num_sequences == 0) {
    if (o.cu_seqlens != nullptr || o.cu_seqlens_padded != nullptr)
      throw Error(Errc::invalid_argument, where + "cu_seqlens is set but num_sequences is 0");
    return m;
  }
  if (o.cu_seqlens == nullptr)
    throw Error(Errc::invalid_argument, where + "cu_seqlens is NULL with num_sequences " + std::to_string(o.num_sequences));
  if (o.num_sequences > static_cast<uint32_t>(INT32_MAX))
    throw Error(Errc::shape, where + "num_sequences is above 2^31 - 1");
  m.packed.cu_seqlens.assign(o.cu_seqlens, o.cu_seqlens + o.num_sequences + 1);
  if (o.cu_seqlens_padded)
    m.packed.cu_seqlens_padded.assign(o.cu_seqlens_padded, o.cu_seqlens_padded + o.num_sequences + 1);
  return m;
}

// The attention sinks of hcp_attn_options / hcp_attn_simulate_options (the same fields).
struct Sinks {
  SoftmaxType type = SoftmaxType::vanilla;
  const float* offset = nullptr;
  float* d_offset = nullptr;
};

template <class Options>
Sinks read_sinks(const Options& o, const char* fn) {
  const std::string where = std::string(fn) + ": options->";
  if (o.softmax_type < HCP_SOFTMAX_VANILLA || o.softmax_type > HCP_SOFTMAX_LEARNABLE)
    throw Error(Errc::invalid_argument, where + "softmax_type (" + std::to_string(o.softmax_type) +
                                            ") is not an hcp_softmax_type value");
  const bool learnable = o.softmax_type == HCP_SOFTMAX_LEARNABLE;
  if (learnable && o.softmax_offset == nullptr)
    throw Error(Errc::invalid_argument, where + "softmax_offset is NULL with HCP_SOFTMAX_LEARNABLE (one per head)");
  if (!learnable && (o.softmax_offset != nullptr || o.d_softmax_offset != nullptr))
    throw Error(Errc::invalid_argument, where + "softmax_offset and d_softmax_offset go with HCP_SOFTMAX_LEARNABLE");
  return {static_cast<SoftmaxType>(o.softmax_type), o.softmax_offset, o.d_softmax_offset};
}

void apply_options(const hcp_attn_options* options, CpShape* shape, const char* fn) {
  hcp_attn_options o = hcp_attn_options HCP_ATTN_OPTIONS_INIT;
  if (options != nullptr) o = read_versioned(options, o, fn, "options");
  if (!(o.softmax_scale >= 0) || o.softmax_scale == INFINITY)
    throw Error(Errc::invalid_argument, std::string(fn) + ": options->softmax_scale must be >= 0 and finite");
  shape->causal = o.causal != 0;
  shape->scale = o.softmax_scale;
  shape->kernel_threads = o.kernel_threads < 1 ? 1 : o.kernel_threads;
  Mask m = read_mask(o, fn);
  shape->packed = std::move(m.packed);
  shape->window_left = m.window_left, shape->window_right = m.window_right;
  const Sinks sinks = read_sinks(o, fn);
  shape->softmax = sinks.type, shape->sink = sinks.offset, shape->d_sink = sinks.d_offset;
  shape->max_logit = o.max_logit;
}

// The attention bias and its gradient of hcp_attn_options / hcp_attn_simulate_options (the same fields): float32
// [Bb, Hb, rows, keys] with keys as given (checked by the caller) and d_attn_bias like attn_bias.
struct BiasArgs {
  TensorView bias, d_bias;
  bool given = false, grad = false;
};
template <class Options>
BiasArgs read_bias(const Options& o, bool backward, const char* fn) {
  BiasArgs b;
  if (o.attn_bias == nullptr) {
    if (o.d_attn_bias != nullptr)
      throw Error(Errc::invalid_argument, std::string(fn) + ": options->d_attn_bias is set without attn_bias");
    return b;
  }
  b.bias = view(o.attn_bias, 4, fn, "options->attn_bias");
  if (b.bias.dtype != DType::f32)
    throw Error(Errc::shape, std::string(fn) + ": options->attn_bias must be float32");
  b.given = true;
  if (backward && o.d_attn_bias != nullptr) {
    b.d_bias = view(o.d_attn_bias, 4, fn, "options->d_attn_bias");
    expect_like(b.d_bias, b.bias, 4, DType::f32, fn, "options->d_attn_bias", "options->attn_bias");
    b.grad = true;
  }
  return b;
}

// The bias of a per-rank call into `shape` (its keys: the whole sequence, seq_local x cp), staged; on the
// context's device, as the other tensors.
void apply_bias(const hcp_attn_options* options, bool backward, int cp, hcp_device device, ContiguousStaging* staged,
                CpShape* shape, const char* fn) {
  if (options == nullptr) return;
  const hcp_attn_options o = read_versioned(options, hcp_attn_options HCP_ATTN_OPTIONS_INIT, fn, "options");
  const BiasArgs b = read_bias(o, backward, fn);
  if (!b.given) return;
  if (b.bias.device != device)
    throw Error(Errc::invalid_argument, std::string(fn) + ": options->attn_bias must be on the context's device, as "
                                                          "q is");
  if (b.bias.shape[3] != shape->seq_local * cp)
    throw Error(Errc::shape, std::string(fn) + ": options->attn_bias has " + std::to_string(b.bias.shape[3]) +
                                 " keys; the sequence has S = S_local x cp = " +
                                 std::to_string(shape->seq_local * cp));
  shape->bias = static_cast<const float*>(staged->input(b.bias));
  shape->bias_batch = b.bias.shape[0], shape->bias_heads = b.bias.shape[1], shape->bias_rows = b.bias.shape[2];
  if (b.grad) shape->d_bias = static_cast<float*>(staged->output(b.d_bias));
}

CpComm to_cp_comm(int value, const char* fn) {
  if (value < 0 || value > 3)
    throw Error(Errc::invalid_argument, std::string(fn) + ": cp_comm (" + std::to_string(value) +
                                            ") is not an hcp_cp_comm value");
  return static_cast<CpComm>(value);
}

}  // namespace
}  // namespace hcp::capi

using namespace hcp::capi;

extern "C" {

HCP_API hcp_status hcp_set_log_callback(hcp_log_fn callback, void* user) {
  return guarded("hcp_set_log_callback", [&] { hcp::set_log_callback(callback, user); });
}

HCP_API hcp_status hcp_world_create(hcp_world** out, int32_t ranks, int64_t timeout_ms) {
  const char* fn = "hcp_world_create";
  return guarded(fn, [&] {
    require(out, fn, "out");
    *out = nullptr;
    *out = new hcp_world{hcp::InProcessWorld(ranks, timeout_of(timeout_ms, fn))};
  });
}

HCP_API void hcp_world_destroy(hcp_world* world) {
  if (world == nullptr) return;
  for (int r = 0; r < world->world.size(); ++r) forget_handle(&world->world.comm(r));
  forget_handle(world);
  delete world;
}

HCP_API hcp_status hcp_world_last_error(char** out_message, const hcp_world* world) {
  return copy_handle_error(out_message, world, __func__);
}

HCP_API hcp_status hcp_world_comm(hcp_comm** out, hcp_world* world, int32_t rank) {
  const char* fn = "hcp_world_comm";
  return guarded_on(world, fn, [&] {
    require(out, fn, "out");
    require(world, fn, "world");
    *out = reinterpret_cast<hcp_comm*>(&world->world.comm(rank));
  });
}

HCP_API hcp_status hcp_comm_rank(int32_t* out_rank, int32_t* out_size, const hcp_comm* comm) {
  const char* fn = __func__;
  return guarded_on(comm, fn, [&] {
    require(out_rank, fn, "out_rank");
    require(out_size, fn, "out_size");
    require(comm, fn, "comm");
    const auto* c = reinterpret_cast<const hcp::Communicator*>(comm);
    *out_rank = c->rank();
    *out_size = c->size();
  });
}

HCP_API hcp_status hcp_comm_abort(hcp_comm* comm, const char* reason) {
  const char* fn = "hcp_comm_abort";
  return guarded_on(comm, fn, [&] {
    require(comm, fn, "comm");
    reinterpret_cast<hcp::Communicator*>(comm)->abort(reason ? reason : "aborted by the caller");
  });
}

HCP_API hcp_status hcp_nccl_unique_id(uint8_t out_id[HCP_NCCL_UNIQUE_ID_BYTES]) {
  const char* fn = "hcp_nccl_unique_id";
  return guarded(fn, [&] {
    require(out_id, fn, "out_id");
    unsigned char id[hcp::kNcclUniqueIdBytes];
    throw_status(hcp::nccl_unique_id(id));
    std::memcpy(out_id, id, sizeof id);
  });
}

HCP_API hcp_status hcp_comm_create_nccl(hcp_comm** out, const uint8_t id[HCP_NCCL_UNIQUE_ID_BYTES], int32_t rank,
                                        int32_t size, void* cuda_stream, int64_t timeout_ms) {
  const char* fn = "hcp_comm_create_nccl";
  return guarded(fn, [&] {
    require(out, fn, "out");
    *out = nullptr;
    require(id, fn, "id");
    unsigned char bytes[hcp::kNcclUniqueIdBytes];
    std::memcpy(bytes, id, sizeof bytes);
    std::unique_ptr<hcp::Communicator> comm;
    throw_status(hcp::make_nccl_communicator(bytes, rank, size, {cuda_stream, timeout_of(timeout_ms, fn)}, &comm));
    *out = own(std::move(comm));
  });
}

HCP_API hcp_status hcp_comm_wrap_nccl(hcp_comm** out, void* nccl_comm, void* cuda_stream, int64_t timeout_ms) {
  const char* fn = "hcp_comm_wrap_nccl";
  return guarded(fn, [&] {
    require(out, fn, "out");
    *out = nullptr;
    require(nccl_comm, fn, "nccl_comm");
    std::unique_ptr<hcp::Communicator> comm;
    throw_status(hcp::make_nccl_communicator(nccl_comm, {cuda_stream, timeout_of(timeout_ms, fn)}, &comm));
    *out = own(std::move(comm));
  });
}

HCP_API hcp_status hcp_mpi_init(int32_t* out_initialized_here) {
  return guarded(__func__, [&] {
    bool here = false;
    throw_status(hcp::mpi_init(&here));
    if (out_initialized_here) *out_initialized_here = here ? 1 : 0;
  });
}

HCP_API hcp_status hcp_mpi_finalize(void) {
  return guarded(__func__, [&] { throw_status(hcp::mpi_finalize()); });
}

HCP_API hcp_status hcp_comm_create_mpi(hcp_comm** out, int64_t mpi_comm, int64_t timeout_ms) {
  const char* fn = __func__;
  return guarded(fn, [&] {
    require(out, fn, "out");
    *out = nullptr;
    std::unique_ptr<hcp::Communicator> comm;
    throw_status(hcp::make_mpi_communicator(mpi_comm, timeout_of(timeout_ms, fn), &comm));
    *out = own(std::move(comm));
  });
}

HCP_API hcp_status hcp_comm_create_nccl_mpi(hcp_comm** out, int64_t mpi_comm, void* cuda_stream,
                                            int64_t timeout_ms) {
  const char* fn = __func__;
  return guarded(fn, [&] {
    require(out, fn, "out");
    *out = nullptr;
    const std::chrono::milliseconds timeout = timeout_of(timeout_ms, fn);
    std::unique_ptr<hcp::Communicator> mpi;  // for this rank's place in mpi_comm
    throw_status(hcp::make_mpi_communicator(mpi_comm, timeout, &mpi));
    // Rank 0's id and whether it could make one: the others must not wait for an id that will not come.
    unsigned char message[hcp::kNcclUniqueIdBytes + 1] = {};
    hcp::Status made;
    if (mpi->rank() == 0) {
      unsigned char id[hcp::kNcclUniqueIdBytes];
      made = hcp::nccl_unique_id(id);
      message[0] = made.ok() ? 1 : 0;
      if (made.ok()) std::memcpy(message + 1, id, sizeof id);
    }
    throw_status(hcp::mpi_broadcast(mpi_comm, message, sizeof message, timeout));
    throw_status(made);  // rank 0's own reason, with its status
    if (message[0] != 1)
      throw hcp::Error(hcp::Errc::unsupported, "rank 0 could not create the NCCL unique id (see its error)");
    unsigned char id[hcp::kNcclUniqueIdBytes];
    std::memcpy(id, message + 1, sizeof id);
    std::unique_ptr<hcp::Communicator> comm;
    throw_status(hcp::make_nccl_communicator(id, mpi->rank(), mpi->size(), {cuda_stream, timeout}, &comm));
    *out = own(std::move(comm));
  });
}

HCP_API hcp_status hcp_comm_create_callbacks(hcp_comm** out, const hcp_comm_callbacks* callbacks) {
  const char* fn = __func__;
  return guarded(fn, [&] {
    require(out, fn, "out");
    *out = nullptr;
    *out = own(make_callback_communicator(callbacks, fn));
  });
}

HCP_API void hcp_comm_destroy(hcp_comm* comm) {
  take_owned(comm);  // destroyed here; NULL or a world's communicator: nothing
}

HCP_API hcp_status hcp_comm_last_error(char** out_message, const hcp_comm* comm) {
  return copy_handle_error(out_message, comm, __func__);
}

// Both create functions, each naming itself in its messages.
static hcp_status create_context(const char* fn, hcp_cp_context** out, const hcp_parallel_config* config,
                                 hcp_comm* world_comm, hcp_cp_comm cp_comm, const hcp_cp_context_options* options) {
  return guarded_on(world_comm, fn, [&] {
    require(out, fn, "out");
    *out = nullptr;
    require(world_comm, fn, "world_comm");
    hcp_cp_context_options o = hcp_cp_context_options HCP_CP_CONTEXT_OPTIONS_INIT;
    if (options != nullptr) o = read_versioned(options, o, fn, "options");
    const hcp::ParallelConfig c = to_config(config, fn);
    const hcp::CpComm scheme = to_cp_comm(cp_comm, fn);
    auto ctx = std::make_unique<hcp_cp_context>();
    ctx->device = to_device(o.device, fn, "options->device");
    hcp::CpDevice device;
    if (ctx->device == HCP_DEVICE_CUDA) device.kind = hcp::CpDevice::Kind::cuda, device.stream = o.cuda_stream;
    throw_status(hcp::CpContext::create(*reinterpret_cast<hcp::Communicator*>(world_comm), c, scheme, &ctx->context,
                                        hcp::LogLevel::info, device));
    *out = ctx.release();
  });
}

HCP_API hcp_status hcp_cp_context_create_with(hcp_cp_context** out, const hcp_parallel_config* config,
                                              hcp_comm* world_comm, hcp_cp_comm cp_comm,
                                              const hcp_cp_context_options* options) {
  return create_context(__func__, out, config, world_comm, cp_comm, options);
}

HCP_API hcp_status hcp_cp_context_create(hcp_cp_context** out, const hcp_parallel_config* config,
                                         hcp_comm* world_comm, hcp_cp_comm cp_comm) {
  return create_context(__func__, out, config, world_comm, cp_comm, nullptr);
}

HCP_API hcp_status hcp_cp_context_create_on_groups(hcp_cp_context** out, hcp_comm* cp_group,
                                                   hcp_comm* const* level_groups, uint32_t num_levels,
                                                   hcp_cp_comm cp_comm, const hcp_cp_context_options* options) {
  const char* fn = __func__;
  return guarded_on(cp_group, fn, [&] {
    require(out, fn, "out");
    *out = nullptr;
    require(cp_group, fn, "cp_group");
    if (num_levels > 0) require(level_groups, fn, "level_groups");
    if (num_levels > 2)
      throw hcp::Error(hcp::Errc::invalid_argument,
                       std::string(fn) + ": num_levels (" + std::to_string(num_levels) + ") must be 0 or 2");
    std::vector<hcp::Communicator*> levels;
    for (uint32_t i = 0; i < num_levels; ++i) {
      if (level_groups[i] == nullptr)
        throw hcp::Error(hcp::Errc::invalid_argument,
                         std::string(fn) + ": level_groups[" + std::to_string(i) + "] is NULL");
      levels.push_back(reinterpret_cast<hcp::Communicator*>(level_groups[i]));
    }
    hcp_cp_context_options o = hcp_cp_context_options HCP_CP_CONTEXT_OPTIONS_INIT;
    if (options != nullptr) o = read_versioned(options, o, fn, "options");
    const hcp::CpComm scheme = to_cp_comm(cp_comm, fn);
    auto ctx = std::make_unique<hcp_cp_context>();
    ctx->device = to_device(o.device, fn, "options->device");
    hcp::CpDevice device;
    if (ctx->device == HCP_DEVICE_CUDA) device.kind = hcp::CpDevice::Kind::cuda, device.stream = o.cuda_stream;
    throw_status(hcp::CpContext::create_on_groups(*reinterpret_cast<hcp::Communicator*>(cp_group), levels, scheme,
                                                  &ctx->context, hcp::LogLevel::info, device));
    *out = ctx.release();
  });
}

HCP_API void hcp_cp_context_destroy(hcp_cp_context* context) {
  forget_handle(context);
  delete context;
}

HCP_API hcp_status hcp_cp_context_last_error(char** out_message, const hcp_cp_context* context) {
  return copy_handle_error(out_message, context, __func__);
}

HCP_API hcp_status hcp_cp_context_rank(int32_t* out_cp_rank, int32_t* out_cp_size, const hcp_cp_context* context) {
  const char* fn = "hcp_cp_context_rank";
  return guarded_on(context, fn, [&] {
    require(out_cp_rank, fn, "out_cp_rank");
    require(out_cp_size, fn, "out_cp_size");
    require(context, fn, "context");
    *out_cp_rank = context->context->cp_rank();
    *out_cp_size = context->context->cp_size();
  });
}

HCP_API hcp_status hcp_attn_forward(hcp_cp_context* context, const hcp_attn_options* options, const hcp_tensor* q,
                                    const hcp_tensor* k, const hcp_tensor* v, const hcp_tensor* out,
                                    const hcp_tensor* lse) {
  const char* fn = "hcp_attn_forward";
  return guarded_on(context, fn, [&] {
    require(context, fn, "context");
    AttnArgs a = attn_args(q, k, v, out, lse, nullptr, nullptr, nullptr, nullptr, false, fn);
    expect_device(a, context->device, fn);
    apply_options(options, &a.shape, fn);
    ContiguousStaging staged(context->context->engine());
    apply_bias(options, false, context->context->cp_size(), context->device, &staged, &a.shape, fn);
    void* q_data = staged.input(a.q);
    void* k_data = staged.input(a.k);
    void* v_data = staged.input(a.v);
    void* out_data = staged.output(a.out);
    void* lse_data = staged.output(a.lse);
    throw_status(context->context->forward(a.shape, q_data, k_data, v_data, out_data, static_cast<float*>(lse_data)));
    staged.finish();
  });
}

HCP_API hcp_status hcp_attn_backward(hcp_cp_context* context, const hcp_attn_options* options,
                                     const hcp_tensor* q, const hcp_tensor* k, const hcp_tensor* v,
                                     const hcp_tensor* out, const hcp_tensor* lse, const hcp_tensor* dout,
                                     const hcp_tensor* dq, const hcp_tensor* dk, const hcp_tensor* dv) {
  const char* fn = "hcp_attn_backward";
  return guarded_on(context, fn, [&] {
    require(context, fn, "context");
    AttnArgs a = attn_args(q, k, v, out, lse, dout, dq, dk, dv, true, fn);
    expect_device(a, context->device, fn);
    apply_options(options, &a.shape, fn);
    a.shape.max_logit = nullptr;  // a forward output: the backward neither computes nor checks it
    ContiguousStaging staged(context->context->engine());
    apply_bias(options, true, context->context->cp_size(), context->device, &staged, &a.shape, fn);
    void* in[6] = {staged.input(a.q), staged.input(a.k), staged.input(a.v), staged.input(a.out),
                   staged.input(a.lse), staged.input(a.dout)};
    void* grads[3] = {staged.output(a.dq), staged.output(a.dk), staged.output(a.dv)};
    throw_status(context->context->backward(a.shape, in[0], in[1], in[2], in[3], static_cast<const float*>(in[4]),
                                            in[5], grads[0], grads[1], grads[2]));
    staged.finish();
  });
}

HCP_API hcp_status hcp_attn_simulate(const hcp_attn_simulate_options* options, const hcp_tensor* q,
                                     const hcp_tensor* k, const hcp_tensor* v, const hcp_tensor* out,
                                     const hcp_tensor* lse, const hcp_tensor* dout, const hcp_tensor* dq,
                                     const hcp_tensor* dk, const hcp_tensor* dv) {
  const char* fn = "hcp_attn_simulate";
  return guarded(fn, [&] {
    const hcp_attn_simulate_options o =
        read_versioned(options, hcp_attn_simulate_options HCP_ATTN_SIMULATE_OPTIONS_INIT, fn, "options");
    const bool backward = dout != nullptr;
    AttnArgs a = attn_args(q, k, v, out, lse, dout, dq, dk, dv, backward, fn);
    // The full tensors are host memory whatever the ranks compute on.
    expect_device(a, HCP_DEVICE_CPU, fn);
    const hcp_device device = to_device(o.device, fn, "options->device");
    if (o.hcp_sizes == nullptr && o.num_hcp_levels != 0)
      throw hcp::Error(hcp::Errc::invalid_argument, std::string(fn) + ": options->hcp_sizes is NULL with levels");
    const std::chrono::milliseconds timeout = timeout_of(o.timeout_ms, fn, "options->timeout_ms");
    if (!(o.softmax_scale >= 0) || o.softmax_scale == INFINITY)
      throw hcp::Error(hcp::Errc::invalid_argument, std::string(fn) + ": options->softmax_scale must be >= 0");
    hcp::SimulateOptions s;
    s.comm = to_cp_comm(o.cp_comm, fn);
    s.cp = o.cp;
    if (o.hcp_sizes) s.hcp_sizes.assign(o.hcp_sizes, o.hcp_sizes + o.num_hcp_levels);
    s.batch = a.shape.batch, s.seq = a.shape.seq_local, s.heads = a.shape.heads, s.kv_heads = a.shape.kv_heads;
    s.head_dim = a.shape.head_dim, s.head_dim_v = a.shape.head_dim_v, s.dtype = a.shape.dtype, s.causal = o.causal != 0, s.scale = o.softmax_scale;
    s.timeout_ms = static_cast<int>(timeout.count());
    if (device == HCP_DEVICE_CUDA) s.device.kind = hcp::CpDevice::Kind::cuda;
    Mask m = read_mask(o, fn);
    if (!m.packed.empty() && m.packed.total_padded() != s.seq)
      throw hcp::Error(hcp::Errc::shape, std::string(fn) + ": the packed batch has " +
                                             std::to_string(m.packed.total_padded()) +
                                             " padded tokens but q has S = " + std::to_string(s.seq));
    s.packed = std::move(m.packed);
    s.window_left = m.window_left, s.window_right = m.window_right;
    const Sinks sinks = read_sinks(o, fn);
    s.softmax = sinks.type, s.sink = sinks.offset;
    const std::unique_ptr<hcp::CpEngine> host = hcp::make_cpu_engine();
    ContiguousStaging staged(*host);
    hcp::SimulateTensors t;
    t.q = staged.input(a.q), t.k = staged.input(a.k), t.v = staged.input(a.v), t.out = staged.output(a.out);
    t.lse = static_cast<float*>(staged.output(a.lse));
    t.max_logit = o.max_logit;
    const BiasArgs bias = read_bias(o, backward, fn);
    if (bias.given) {
      if (bias.bias.shape[3] != s.seq)
        throw hcp::Error(hcp::Errc::shape, std::string(fn) + ": options->attn_bias has " +
                                               std::to_string(bias.bias.shape[3]) + " keys; q has S = " +
                                               std::to_string(s.seq));
      if (bias.bias.device != HCP_DEVICE_CPU)
        throw hcp::Error(hcp::Errc::invalid_argument, std::string(fn) + ": options->attn_bias must be host memory");
      s.bias = static_cast<const float*>(staged.input(bias.bias));
      s.bias_batch = bias.bias.shape[0], s.bias_heads = bias.bias.shape[1], s.bias_rows = bias.bias.shape[2];
      if (bias.grad) t.d_bias = static_cast<float*>(staged.output(bias.d_bias));
    }
    if (backward) {
      t.dout = staged.input(a.dout), t.dq = staged.output(a.dq), t.dk = staged.output(a.dk);
      t.dv = staged.output(a.dv);
      t.d_sink = sinks.d_offset;
    }
    throw_status(hcp::attention_simulate(s, t));
    staged.finish();
  });
}

HCP_API hcp_status hcp_packed_rank_indices(const int64_t* cu_seqlens, const int64_t* cu_seqlens_padded,
                                           uint32_t num_sequences, int32_t cp, int32_t rank, int64_t* out_indices,
                                           int64_t capacity, int64_t* out_count) {
  const char* fn = __func__;
  return guarded(fn, [&] {
    require(out_count, fn, "out_count");
    *out_count = 0;
    require(cu_seqlens, fn, "cu_seqlens");
    if (num_sequences == 0 || num_sequences > static_cast<uint32_t>(INT32_MAX))
      throw hcp::Error(hcp::Errc::invalid_argument, std::string(fn) + ": num_sequences must be in [1, 2^31)");
    if (cp < 1 || rank < 0 || rank >= cp)
      throw hcp::Error(hcp::Errc::invalid_argument, std::string(fn) + ": rank " + std::to_string(rank) +
                                                        " is outside a CP group of " + std::to_string(cp));
    hcp::PackedBatch batch;
    batch.cu_seqlens.assign(cu_seqlens, cu_seqlens + num_sequences + 1);
    if (cu_seqlens_padded) batch.cu_seqlens_padded.assign(cu_seqlens_padded, cu_seqlens_padded + num_sequences + 1);
    if (const std::string problem = hcp::packed_batch_error(batch, cp); !problem.empty())
      throw hcp::Error(hcp::Errc::shape, std::string(fn) + ": " + problem);
    const int64_t count = batch.total_padded() / cp;
    if (out_indices == nullptr || capacity < count)
      throw hcp::Error(hcp::Errc::invalid_argument, std::string(fn) + ": out_indices must hold " +
                                                        std::to_string(count) + " indices, capacity is " +
                                                        std::to_string(capacity));
    const std::vector<int64_t> indices = hcp::packed_rank_indices(batch, cp, rank);
    std::copy(indices.begin(), indices.end(), out_indices);
    *out_count = count;
  });
}

}  // extern "C"
