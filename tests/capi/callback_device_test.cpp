// The caller's communicator with device memory (hcp_comm_callbacks, device HCP_DEVICE_CUDA) under the CUDA engine's
// kernels, on the block emulator: what hcp.torch does with CUDA tensors over NCCL process groups. Each member's
// functions get only live device buffers of the rank's device, and touch them after the stream's earlier work (as
// a stream-ordered implementation - NCCL through torch.distributed - enqueues after it): they synchronize the
// emulated stream, check every pointer against the emulated device memory, then move the bytes with the in-process
// backend. Every scheme, forward and backward, against the same emulated kernels exchanging by hcp's own paths, and
// a host engine on a device-memory communicator is refused on every rank.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "../../capi/src/callback_communicator.hpp"
#include "../../capi/src/owned_comms.hpp"
#include "../../runtime/src/attention/cpu/bf16.hpp"
#include "../runtime/emulated_device_memory.hpp"
#include "../runtime/emulated_engine.hpp"
#include "hcp/cp_attention.hpp"
#include "hcp/inprocess_world.hpp"
#include "hcp/packed_sequences.hpp"

namespace {

using hcp::testing::EmulatedDeviceMemory;
using hcp::testing::EmulatedGpuEngine;

// A member's state (`user`): its in-process communicator, and the slot of its rank's engine - made by attention_rank
// after the groups are split, so the groups look it up when called. Groups split from it share the slot.
struct DeviceMember {
  hcp::Communicator* comm = nullptr;
  std::unique_ptr<hcp::Communicator> owned;
  EmulatedGpuEngine** engine = nullptr;
  std::string error;
};

DeviceMember* member(void* user) { return static_cast<DeviceMember*>(user); }

// The stream's earlier work done, and each non-empty [ptr, ptr + bytes) inside a live buffer of the rank's device.
int32_t ready(DeviceMember* m, std::initializer_list<std::pair<const void*, size_t>> buffers) {
  EmulatedGpuEngine* engine = *m->engine;
  if (engine == nullptr) {
    m->error = "called before the rank's engine exists";
    return 3;
  }
  if (hcp::Status s = engine->synchronize(); !s.ok()) {
    m->error = s.message();
    return 4;
  }
  auto& memory = EmulatedDeviceMemory::instance();
  std::lock_guard lock(memory.mu);
  for (const auto& [ptr, bytes] : buffers) {
    if (bytes == 0) continue;
    const EmulatedDeviceMemory::Block* block = memory.find(ptr, bytes);
    if (block == nullptr || block->device != engine->device_ordinal()) {
      m->error = "a buffer of " + std::to_string(bytes) + " bytes is not device memory of device " +
                 std::to_string(engine->device_ordinal());
      return 5;
    }
  }
  return 0;
}

int32_t report(DeviceMember* m, const hcp::Status& s) {
  if (s.ok()) return 0;
  m->error = s.message();
  return 1;
}

hcp_comm_callbacks device_callbacks(DeviceMember* m) {
  hcp_comm_callbacks cb = HCP_COMM_CALLBACKS_INIT;
  cb.user = m;
  cb.rank = m->comm->rank();
  cb.size = m->comm->size();
  cb.device = HCP_DEVICE_CUDA;
  cb.send_recv = [](void* u, const void* send, size_t send_bytes, int32_t dst, void* recv, size_t recv_bytes,
                    int32_t src, void*) -> int32_t {
    DeviceMember* me = member(u);
    if (int32_t rc = ready(me, {{send, send_bytes}, {recv, recv_bytes}})) return rc;
    if (int32_t rc = report(me, me->comm->post_send_recv(send, send_bytes, dst, recv, recv_bytes, src))) return rc;
    return report(me, me->comm->wait_send_recv());
  };
  cb.all_to_all = [](void* u, const void* send, void* recv, size_t chunk, void*) -> int32_t {
    DeviceMember* me = member(u);
    const size_t n = chunk * static_cast<size_t>(me->comm->size());
    if (int32_t rc = ready(me, {{send, n}, {recv, n}})) return rc;
    return report(me, me->comm->all_to_all(send, recv, chunk));
  };
  cb.all_gather = [](void* u, const void* send, void* recv, size_t chunk, void*) -> int32_t {
    DeviceMember* me = member(u);
    if (int32_t rc = ready(me, {{send, chunk}, {recv, chunk * static_cast<size_t>(me->comm->size())}})) return rc;
    return report(me, me->comm->all_gather(send, recv, chunk));
  };
  cb.reduce_scatter_sum_f32 = [](void* u, const float* send, float* recv, size_t count, void*) -> int32_t {
    DeviceMember* me = member(u);
    const size_t bytes = count * sizeof(float);
    if (int32_t rc = ready(me, {{send, bytes * static_cast<size_t>(me->comm->size())}, {recv, bytes}})) return rc;
    return report(me, me->comm->reduce_scatter_sum(send, recv, count));
  };
  cb.barrier = [](void* u, void*) -> int32_t { return report(member(u), member(u)->comm->barrier()); };
  cb.split = [](void* u, int32_t color, int32_t key, hcp_comm** out, void*) -> int32_t {
    DeviceMember* parent = member(u);
    auto child = std::make_unique<DeviceMember>();
    if (int32_t rc = report(parent, parent->comm->split(color, key, &child->owned)); rc != 0 || !child->owned)
      return rc;
    child->comm = child->owned.get();
    child->engine = parent->engine;
    const hcp_comm_callbacks group = device_callbacks(child.get());
    *out = hcp::capi::own(hcp::capi::make_callback_communicator(&group, "split"));
    child.release();  // the group's `user` from here, deleted by its release function
    return 0;
  };
  cb.abort = [](void* u, const char* reason) { member(u)->comm->abort(hcp::Errc::comm, reason); };
  cb.error_message = [](void* u) -> const char* { return member(u)->error.c_str(); };
  cb.release = [](void* u) {
    if (member(u)->owned) delete member(u);  // a split group's; the world members live in the test
  };
  return cb;
}

// B 1, S 2 cp x 20 tokens (not a multiple of the kernels' tiles), H 4, Hkv 2 (GQA), D 64: bf16 for the CUDA kernels.
// Packed: four documents of 13, 40, 7 and 21 tokens padded to multiples of 2 cp, with a window of 24 keys back.
constexpr int kCp = 4;
constexpr int64_t kHeads = 4, kKvHeads = 2, kDim = 64;

struct DeviceCase {
  hcp::CpComm comm;
  bool packed;
};

hcp::SimulateOptions options(const DeviceCase& c) {
  hcp::SimulateOptions o;
  o.comm = c.comm, o.cp = kCp;
  if (c.comm == hcp::CpComm::a2a_p2p) o.hcp_sizes = {2, 2};
  o.seq = 2 * kCp * 20, o.heads = kHeads, o.kv_heads = kKvHeads, o.head_dim = kDim;
  if (c.packed) {
    o.packed.cu_seqlens = {0, 13, 53, 60, 81};
    o.packed.cu_seqlens_padded = hcp::pad_for_cp(o.packed.cu_seqlens, kCp);
    o.seq = o.packed.total_padded();
    o.window_left = 24;
  }
  o.dtype = hcp::DType::bf16, o.causal = true, o.timeout_ms = 30000;
  return o;
}

std::vector<uint16_t> bf16_values(size_t n, uint32_t seed) {
  std::vector<uint16_t> bits(n);
  uint32_t x = seed;
  for (auto& b : bits) {
    x = x * 1664525u + 1013904223u;
    b = hcp::cpu::float_to_bf16(static_cast<float>(x >> 8) / 16777216.0f * 2.0f - 1.0f);
  }
  return bits;
}

struct Outputs {
  std::vector<uint16_t> out, dq, dk, dv;
  std::vector<float> lse;
};

// Every rank runs `rank_run` over its own world communicator; the full outputs as attention_simulate gives them.
template <typename RankFn>
Outputs run_all(const hcp::SimulateOptions& o, const RankFn& rank_run) {
  const auto nq = static_cast<size_t>(o.seq * kHeads * kDim), nk = static_cast<size_t>(o.seq * kKvHeads * kDim);
  const auto q = bf16_values(nq, 1), k = bf16_values(nk, 2), v = bf16_values(nk, 3), dout = bf16_values(nq, 4);
  Outputs r;
  r.out.resize(nq), r.dq.resize(nq), r.dk.resize(nk), r.dv.resize(nk);
  r.lse.resize(static_cast<size_t>(kHeads * o.seq));
  hcp::SimulateTensors t;
  t.q = q.data(), t.k = k.data(), t.v = v.data(), t.dout = dout.data();
  t.out = r.out.data(), t.lse = r.lse.data(), t.dq = r.dq.data(), t.dk = r.dk.data(), t.dv = r.dv.data();
  const hcp::Status s = rank_run(t);
  EXPECT_TRUE(s.ok()) << s.message();
  return r;
}

class CallbackDevice : public ::testing::TestWithParam<DeviceCase> {};

TEST_P(CallbackDevice, ForwardAndBackwardEqualHcpsOwnExchanges) {
  const hcp::SimulateOptions base = options(GetParam());
  const Outputs want = run_all(base, [&](const hcp::SimulateTensors& t) {
    hcp::SimulateOptions o = base;
    o.make_engine = [] { return std::make_unique<EmulatedGpuEngine>(0); };
    return hcp::attention_simulate(o, t);
  });
  const Outputs got = run_all(base, [&](const hcp::SimulateTensors& t) {
    hcp::InProcessWorld world(kCp, std::chrono::milliseconds(30000));
    return world.run([&](hcp::Communicator& c) -> hcp::Status {
      EmulatedGpuEngine* engine = nullptr;
      DeviceMember m;
      m.comm = &c, m.engine = &engine;
      const hcp_comm_callbacks cb = device_callbacks(&m);
      std::unique_ptr<hcp::Communicator> callbacks = hcp::capi::make_callback_communicator(&cb, "test");
      hcp::SimulateOptions o = base;
      o.make_engine = [&engine, rank = c.rank()] {
        auto made = std::make_unique<EmulatedGpuEngine>(rank);  // one device per rank, as NCCL ranks have
        engine = made.get();
        return made;
      };
      return hcp::attention_rank(*callbacks, o, t, nullptr);
    });
  });
  EXPECT_EQ(got.out, want.out);
  EXPECT_EQ(got.lse, want.lse);
  EXPECT_EQ(got.dq, want.dq);
  EXPECT_EQ(got.dk, want.dk);
  EXPECT_EQ(got.dv, want.dv);
}

std::string case_name(const ::testing::TestParamInfo<DeviceCase>& info) {
  const char* names[] = {"p2p", "a2a", "a2a_p2p", "all_gather"};
  return std::string(names[static_cast<int>(info.param.comm)]) + (info.param.packed ? "_packed_window" : "");
}

std::vector<DeviceCase> cases() {
  std::vector<DeviceCase> all;
  for (bool packed : {false, true})
    for (hcp::CpComm comm : {hcp::CpComm::p2p, hcp::CpComm::a2a, hcp::CpComm::a2a_p2p, hcp::CpComm::all_gather})
      all.push_back({comm, packed});
  return all;
}

INSTANTIATE_TEST_SUITE_P(Schemes, CallbackDevice, ::testing::ValuesIn(cases()), case_name);

TEST(CallbackDevice, AHostEngineOnADeviceMemoryCommunicatorFailsEveryRank) {
  hcp::InProcessWorld world(kCp, std::chrono::milliseconds(30000));
  std::vector<std::string> messages(kCp);
  const hcp::Status s = world.run([&](hcp::Communicator& c) -> hcp::Status {
    EmulatedGpuEngine* engine = nullptr;
    DeviceMember m;
    m.comm = &c, m.engine = &engine;
    const hcp_comm_callbacks cb = device_callbacks(&m);
    std::unique_ptr<hcp::Communicator> callbacks = hcp::capi::make_callback_communicator(&cb, "test");
    hcp::ParallelConfig config;
    config.world_size = kCp, config.cp = kCp;
    std::unique_ptr<hcp::CpContext> ctx;
    const hcp::Status made = hcp::CpContext::create(*callbacks, config, hcp::CpComm::p2p, &ctx);
    messages[static_cast<size_t>(c.rank())] = made.message();
    EXPECT_EQ(made.code(), hcp::Errc::invalid_config) << made.message();
    return made;
  });
  EXPECT_FALSE(s.ok());
  for (const std::string& message : messages)
    EXPECT_NE(message.find("moves device memory"), std::string::npos) << message;
}

}  // namespace
