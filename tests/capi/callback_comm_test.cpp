// hcp_comm_create_callbacks: CP contexts on a communicator made of the caller's functions, here built on the
// in-process backend (each member's functions call an hcp::InProcessWorld communicator, as a framework's would call
// its own collectives). Every scheme, forward and backward, against hcp_attn_simulate; a function that fails on one
// rank fails every rank's call; misuse of the struct.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "hcp/hcp.h"
#include "host_tensor.hpp"
#include "hcp/inprocess_world.hpp"

namespace {

using hcp::test::tensor;

// What a member's functions get as `user`: its communicator (borrowed from the world, or a group split from it) and
// the message of its last failure. `fail_at`: the call (counted over every function of this member) that fails.
struct Member {
  hcp::Communicator* comm = nullptr;
  std::unique_ptr<hcp::Communicator> owned;  // a split group
  std::string error;
  int calls = 0, fail_at = -1;
  int child_fail_at = -1;  // fail_at of the groups split from this member
  bool on_heap = false;    // made by the split function: its release deletes it
  std::atomic<int>* released = nullptr;
};

int32_t report(Member* m, const hcp::Status& s) {
  if (++m->calls == m->fail_at) {
    m->error = "injected failure on call " + std::to_string(m->calls);
    return 7;
  }
  if (s.ok()) return 0;
  m->error = s.message();
  return 1;
}

Member* member(void* user) { return static_cast<Member*>(user); }

hcp_comm_callbacks callbacks_of(Member* m) {
  hcp_comm_callbacks cb = HCP_COMM_CALLBACKS_INIT;
  cb.user = m;
  cb.rank = m->comm->rank();
  cb.size = m->comm->size();
  cb.send_recv = [](void* u, const void* send, size_t send_bytes, int32_t dst, void* recv, size_t recv_bytes,
                    int32_t src, void*) -> int32_t {
    return report(member(u), member(u)->comm->post_send_recv(send, send_bytes, dst, recv, recv_bytes, src));
  };
  cb.send_recv_wait = [](void* u, void*) -> int32_t { return report(member(u), member(u)->comm->wait_send_recv()); };
  cb.all_to_all = [](void* u, const void* send, void* recv, size_t chunk, void*) -> int32_t {
    return report(member(u), member(u)->comm->all_to_all(send, recv, chunk));
  };
  cb.all_gather = [](void* u, const void* send, void* recv, size_t chunk, void*) -> int32_t {
    return report(member(u), member(u)->comm->all_gather(send, recv, chunk));
  };
  cb.reduce_scatter_sum_f32 = [](void* u, const float* send, float* recv, size_t count, void*) -> int32_t {
    return report(member(u), member(u)->comm->reduce_scatter_sum(send, recv, count));
  };
  cb.barrier = [](void* u, void*) -> int32_t { return report(member(u), member(u)->comm->barrier()); };
  cb.split = [](void* u, int32_t color, int32_t key, hcp_comm** out, void*) -> int32_t {
    Member* parent = member(u);
    auto child = std::make_unique<Member>();
    const int32_t rc = report(parent, parent->comm->split(color, key, &child->owned));
    if (rc != 0 || !child->owned) return rc;
    child->comm = child->owned.get();
    child->released = parent->released;
    child->fail_at = parent->child_fail_at;
    child->on_heap = true;
    const hcp_comm_callbacks group = callbacks_of(child.get());
    if (hcp_comm_create_callbacks(out, &group) != HCP_OK) {
      parent->error = hcp_last_error();
      return 2;
    }
    child.release();  // now the group's `user`, deleted by its release function
    return 0;
  };
  cb.abort = [](void* u, const char* reason) { member(u)->comm->abort(reason); };
  cb.error_message = [](void* u) -> const char* { return member(u)->error.c_str(); };
  cb.release = [](void* u) {
    if (member(u)->released) ++*member(u)->released;
    if (member(u)->on_heap) delete member(u);  // the others live in the test
  };
  return cb;
}

// B 1, S 40 (chunks of 5 tokens for cp 4: not a multiple of any tile), H 4, Hkv 2 (GQA), D 8.
constexpr int64_t S = 40, H = 4, Hkv = 2, D = 8, CP = 4;

struct Full {
  std::vector<float> q, k, v, out, lse, dout, dq, dk, dv;
  Full() : q(S * H * D), k(S * Hkv * D), v(k), out(q), lse(H * S), dout(q), dq(q), dk(k), dv(k) {
    for (size_t i = 0; i < q.size(); ++i) {
      q[i] = static_cast<float>((i * 7) % 23) / 23.0f - 0.5f;
      dout[i] = static_cast<float>((i * 3) % 19) / 19.0f - 0.5f;
    }
    for (size_t i = 0; i < k.size(); ++i) {
      k[i] = static_cast<float>((i * 5) % 13) / 13.0f - 0.5f;
      v[i] = static_cast<float>(i % 17) / 17.0f;
    }
  }
};

// This rank's rows of a [S, heads * D] tensor: chunks r and 2cp-1-r of S / 2cp tokens.
std::vector<float> local_rows(const std::vector<float>& full, int64_t heads, int r) {
  const int64_t chunk = S / (2 * CP), row = heads * D;
  std::vector<float> out(static_cast<size_t>(2 * chunk * row));
  const int64_t chunks[2] = {r, 2 * CP - 1 - r};
  for (int h = 0; h < 2; ++h)
    std::memcpy(out.data() + h * chunk * row, full.data() + chunks[h] * chunk * row, chunk * row * sizeof(float));
  return out;
}

void set_scheme(hcp_parallel_config& config, hcp_cp_comm scheme, const int64_t* sizes) {
  config.world_size = CP, config.cp = CP;
  if (scheme == HCP_CP_COMM_A2A_P2P) config.num_hcp_levels = 2, config.hcp_sizes = sizes;
}

// What a rank made besides its context: communicators to destroy after it, then members of groups it split (which
// must go before the world they came from).
struct Made {
  std::vector<hcp_comm*> comms;
  std::vector<std::unique_ptr<Member>> members;
};
// How a rank makes its context from its world member.
using MakeContext = std::function<hcp_status(Member& world_member, hcp_cp_comm scheme, hcp_cp_context** ctx,
                                             Made* made)>;

// Every rank on its thread: a context made by `make`, forward and backward of its dual chunks; each rank's results
// against hcp_attn_simulate's rows of the same scheme. Returns the releases counted.
int run_against_simulate(hcp_cp_comm scheme, const MakeContext& make) {
  const int64_t sizes[2] = {2, 2};
  Full full;
  hcp_tensor q = tensor(full.q.data(), {1, S, H, D}), k = tensor(full.k.data(), {1, S, Hkv, D});
  hcp_tensor v = tensor(full.v.data(), {1, S, Hkv, D}), out = tensor(full.out.data(), {1, S, H, D});
  hcp_tensor lse = tensor(full.lse.data(), {1, H, S}), dout = tensor(full.dout.data(), {1, S, H, D});
  hcp_tensor dq = tensor(full.dq.data(), {1, S, H, D}), dk = tensor(full.dk.data(), {1, S, Hkv, D});
  hcp_tensor dv = tensor(full.dv.data(), {1, S, Hkv, D});
  hcp_attn_simulate_options so = HCP_ATTN_SIMULATE_OPTIONS_INIT;
  so.cp = CP, so.cp_comm = scheme;
  if (scheme == HCP_CP_COMM_A2A_P2P) so.num_hcp_levels = 2, so.hcp_sizes = sizes;
  EXPECT_EQ(hcp_attn_simulate(&so, &q, &k, &v, &out, &lse, &dout, &dq, &dk, &dv), HCP_OK) << hcp_last_error();

  hcp::InProcessWorld world(CP, std::chrono::seconds(20));
  std::atomic<int> released{0};
  std::vector<Member> members(CP);
  std::vector<hcp_status> status(CP, HCP_ERR_INTERNAL);
  std::vector<std::string> errors(CP);
  std::vector<std::vector<float>> r_out(CP), r_dq(CP), r_dk(CP), r_dv(CP);
  std::vector<std::thread> threads;
  for (int r = 0; r < CP; ++r) {
    threads.emplace_back([&, r] {
      members[r].comm = &world.comm(r);
      members[r].released = &released;
      Made made;
      hcp_cp_context* ctx = nullptr;
      auto lq = local_rows(full.q, H, r), lk = local_rows(full.k, Hkv, r), lv = local_rows(full.v, Hkv, r);
      auto ldout = local_rows(full.dout, H, r);
      const int64_t s = 2 * (S / (2 * CP));
      r_out[r].resize(lq.size()), r_dq[r].resize(lq.size()), r_dk[r].resize(lk.size()), r_dv[r].resize(lk.size());
      std::vector<float> llse(static_cast<size_t>(H * s));
      hcp_tensor tq = tensor(lq.data(), {1, s, H, D}), tk = tensor(lk.data(), {1, s, Hkv, D});
      hcp_tensor tv = tensor(lv.data(), {1, s, Hkv, D}), to = tensor(r_out[r].data(), {1, s, H, D});
      hcp_tensor tl = tensor(llse.data(), {1, H, s}), tdo = tensor(ldout.data(), {1, s, H, D});
      hcp_tensor tdq = tensor(r_dq[r].data(), {1, s, H, D}), tdk = tensor(r_dk[r].data(), {1, s, Hkv, D});
      hcp_tensor tdv = tensor(r_dv[r].data(), {1, s, Hkv, D});
      hcp_attn_options opts = HCP_ATTN_OPTIONS_INIT;
      if ((status[r] = make(members[r], scheme, &ctx, &made)) == HCP_OK &&
          (status[r] = hcp_attn_forward(ctx, &opts, &tq, &tk, &tv, &to, &tl)) == HCP_OK) {
        status[r] = hcp_attn_backward(ctx, &opts, &tq, &tk, &tv, &to, &tl, &tdo, &tdq, &tdk, &tdv);
      }
      if (status[r] != HCP_OK) errors[r] = hcp_last_error();
      hcp_cp_context_destroy(ctx);
      for (hcp_comm* c : made.comms) hcp_comm_destroy(c);
    });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < CP; ++r) {
    EXPECT_EQ(status[r], HCP_OK) << "rank " << r << ": " << errors[r];
    if (status[r] != HCP_OK) continue;
    auto expect_rows = [&](const std::vector<float>& got, const std::vector<float>& want, int64_t heads,
                           const char* name) {
      const auto rows = local_rows(want, heads, r);
      ASSERT_EQ(got.size(), rows.size());
      for (size_t i = 0; i < rows.size(); ++i) ASSERT_NEAR(got[i], rows[i], 1e-5f) << name << " rank " << r << " " << i;
    };
    expect_rows(r_out[r], full.out, H, "out");
    expect_rows(r_dq[r], full.dq, H, "dq");
    expect_rows(r_dk[r], full.dk, Hkv, "dk");
    expect_rows(r_dv[r], full.dv, Hkv, "dv");
  }
  return released.load();
}

// A callback communicator over `m`, kept for destruction in `comms`.
hcp_status wrap(Member& m, std::vector<hcp_comm*>* comms, hcp_comm** out) {
  const hcp_comm_callbacks cb = callbacks_of(&m);
  const hcp_status status = hcp_comm_create_callbacks(out, &cb);
  if (status == HCP_OK) comms->push_back(*out);
  return status;
}

TEST(CallbackComm, EverySchemeForwardAndBackwardEqualSimulate) {
  const int64_t sizes[2] = {2, 2};
  for (hcp_cp_comm scheme : {HCP_CP_COMM_P2P, HCP_CP_COMM_A2A, HCP_CP_COMM_A2A_P2P, HCP_CP_COMM_ALL_GATHER}) {
    SCOPED_TRACE("scheme " + std::to_string(scheme));
    const int released = run_against_simulate(scheme, [&](Member& m, hcp_cp_comm s, hcp_cp_context** ctx,
                                                          Made* made) -> hcp_status {
      hcp_comm* comm = nullptr;
      hcp_parallel_config config = HCP_PARALLEL_CONFIG_INIT;
      set_scheme(config, s, sizes);
      hcp_status st = wrap(m, &made->comms, &comm);
      return st != HCP_OK ? st : hcp_cp_context_create(ctx, &config, comm, s);
    });
    // Every member's release ran once: the world communicators' (hcp_comm_destroy) and each split group's (with
    // its context): the CP group, and two levels under a2a+p2p.
    const int groups = scheme == HCP_CP_COMM_A2A_P2P ? 3 : 1;
    EXPECT_EQ(released, CP * (1 + groups));
  }
}

// The caller's own groups, nothing split by hcp: the world as the CP group and, for a2a+p2p, the level groups the
// test splits itself in Megatron's layout (a2a: consecutive ranks, p2p: strided).
TEST(CallbackComm, ContextsOnTheCallersGroupsEqualSimulate) {
  for (hcp_cp_comm scheme : {HCP_CP_COMM_P2P, HCP_CP_COMM_A2A_P2P}) {
    SCOPED_TRACE("scheme " + std::to_string(scheme));
    run_against_simulate(scheme, [&](Member& m, hcp_cp_comm s, hcp_cp_context** ctx, Made* made) -> hcp_status {
      hcp_comm* cp = nullptr;
      hcp_status st = wrap(m, &made->comms, &cp);
      std::vector<hcp_comm*> levels;
      const int r = m.comm->rank();
      for (int level = 0; st == HCP_OK && s == HCP_CP_COMM_A2A_P2P && level < 2; ++level) {
        Member& member = *made->members.emplace_back(std::make_unique<Member>());
        const int color = level == 0 ? r / 2 : r % 2, key = level == 0 ? r % 2 : r / 2;
        if (!m.comm->split(color, key, &member.owned).ok()) return static_cast<hcp_status>(HCP_ERR_COMM);
        member.comm = member.owned.get();
        hcp_comm* level_comm = nullptr;
        st = wrap(member, &made->comms, &level_comm);
        levels.push_back(level_comm);
      }
      return st != HCP_OK ? st
                          : hcp_cp_context_create_on_groups(ctx, cp, levels.data(),
                                                            static_cast<uint32_t>(levels.size()), s, nullptr);
    });
  }
}

// Level groups that do not fit Megatron's layout (the p2p group given as the a2a one) fail every rank alike.
TEST(CallbackComm, GivenLevelGroupsOutOfOrderFailEveryRank) {
  hcp::InProcessWorld world(CP, std::chrono::seconds(20));
  std::vector<Member> members(CP);
  std::vector<std::unique_ptr<Member>> kept(2 * CP);
  std::vector<hcp_status> status(CP, HCP_OK);
  std::vector<std::string> errors(CP);
  std::vector<std::thread> threads;
  for (int r = 0; r < CP; ++r) {
    threads.emplace_back([&, r] {
      members[r].comm = &world.comm(r);
      std::vector<hcp_comm*> comms;
      hcp_comm* cp = nullptr;
      status[r] = wrap(members[r], &comms, &cp);
      std::vector<hcp_comm*> levels;
      for (int level = 0; level < 2 && status[r] == HCP_OK; ++level) {
        auto& member = kept[2 * r + level] = std::make_unique<Member>();
        const int color = level == 1 ? r / 2 : r % 2, key = level == 1 ? r % 2 : r / 2;  // swapped
        if (!members[r].comm->split(color, key, &member->owned).ok()) status[r] = HCP_ERR_COMM;
        member->comm = member->owned.get();
        hcp_comm* level_comm = nullptr;
        if (status[r] == HCP_OK) status[r] = wrap(*member, &comms, &level_comm);
        levels.push_back(level_comm);
      }
      hcp_cp_context* ctx = nullptr;
      if (status[r] == HCP_OK)
        status[r] = hcp_cp_context_create_on_groups(&ctx, cp, levels.data(), 2, HCP_CP_COMM_A2A_P2P, nullptr);
      errors[r] = hcp_last_error();
      hcp_cp_context_destroy(ctx);
      for (hcp_comm* c : comms) hcp_comm_destroy(c);
    });
  }
  for (auto& t : threads) t.join();
  for (int r = 0; r < CP; ++r) {
    EXPECT_EQ(status[r], HCP_ERR_INVALID_CONFIG) << "rank " << r << ": " << errors[r];
    EXPECT_NE(errors[r].find("needs CP rank = a2a rank + 2 x p2p rank"), std::string::npos) << errors[r];
  }
}

TEST(CallbackComm, AFunctionFailingOnOneRankFailsEveryRank) {
  // Rank 2's CP group fails its fourth call (the split's check is its first, the forward's exchanges follow):
  // rank 2 reports its function's failure, and the others, waiting for rank 2 in the ring, fail too - through the
  // abort hcp sends with the caller's abort function - long before the world's 20 s timeout.
  hcp::InProcessWorld world(CP, std::chrono::seconds(20));
  std::vector<Member> members(CP);
  members[2].child_fail_at = 4;
  std::vector<hcp_status> created(CP, HCP_ERR_INTERNAL), status(CP, HCP_OK);
  std::vector<std::string> errors(CP);
  std::vector<std::thread> threads;
  const auto start = std::chrono::steady_clock::now();
  for (int r = 0; r < CP; ++r) {
    threads.emplace_back([&, r] {
      members[r].comm = &world.comm(r);
      const hcp_comm_callbacks cb = callbacks_of(&members[r]);
      hcp_comm* comm = nullptr;
      hcp_cp_context* ctx = nullptr;
      hcp_parallel_config config = HCP_PARALLEL_CONFIG_INIT;
      config.world_size = CP, config.cp = CP;
      std::vector<float> q(10 * H * D, 0.5f), kv(10 * Hkv * D, 0.25f), out(q.size()), lse(H * 10);
      hcp_tensor tq = tensor(q.data(), {1, 10, H, D}), tk = tensor(kv.data(), {1, 10, Hkv, D});
      hcp_tensor to = tensor(out.data(), {1, 10, H, D}), tl = tensor(lse.data(), {1, H, 10});
      hcp_attn_options opts = HCP_ATTN_OPTIONS_INIT;
      if ((status[r] = hcp_comm_create_callbacks(&comm, &cb)) == HCP_OK &&
          (created[r] = status[r] = hcp_cp_context_create(&ctx, &config, comm, HCP_CP_COMM_P2P)) == HCP_OK) {
        status[r] = hcp_attn_forward(ctx, &opts, &tq, &tk, &tk, &to, &tl);
      }
      if (status[r] != HCP_OK) errors[r] = hcp_last_error();
      hcp_cp_context_destroy(ctx);
      hcp_comm_destroy(comm);
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  for (int r = 0; r < CP; ++r) {
    EXPECT_EQ(created[r], HCP_OK) << "rank " << r;
    EXPECT_EQ(status[r], HCP_ERR_COMM) << "rank " << r << ": " << errors[r];
  }
  EXPECT_NE(errors[2].find("rank 2: the caller's"), std::string::npos) << errors[2];
  EXPECT_NE(errors[2].find("injected failure on call 4"), std::string::npos) << errors[2];
}

TEST(CallbackComm, RejectsMisuseAndReleasesOnce) {
  hcp_comm_callbacks cb;
  ASSERT_EQ(hcp_comm_callbacks_init(&cb, sizeof cb), HCP_OK);
  EXPECT_EQ(cb.size, 1);
  EXPECT_EQ(cb.send_recv, nullptr);
  EXPECT_EQ(hcp_comm_callbacks_init(&cb, 8), HCP_ERR_INVALID_ARGUMENT);

  hcp::InProcessWorld world(1, std::chrono::seconds(5));
  std::atomic<int> released{0};
  Member m;
  m.comm = &world.comm(0);
  m.released = &released;
  hcp_comm* comm = nullptr;
  hcp_comm_callbacks good = callbacks_of(&m);
  const std::pair<void (*)(hcp_comm_callbacks&), const char*> misuse[] = {
      {[](hcp_comm_callbacks& c) { c.all_to_all = nullptr; }, "all_to_all is NULL"},
      {[](hcp_comm_callbacks& c) { c.abort = nullptr; }, "abort is NULL"},
      {[](hcp_comm_callbacks& c) { c.rank = 1; }, "need 0 <= rank < size"},
      {[](hcp_comm_callbacks& c) { c.size = 0; }, "need 0 <= rank < size"},
      {[](hcp_comm_callbacks& c) { c.reserved0 = 1; }, "reserved"},
      {[](hcp_comm_callbacks& c) { c.device = 9; }, "device (9)"},
      {[](hcp_comm_callbacks& c) { c.struct_size = 12; }, "struct_size (12)"},
  };
  for (const auto& [spoil, message] : misuse) {
    hcp_comm_callbacks bad = good;
    spoil(bad);
    EXPECT_EQ(hcp_comm_create_callbacks(&comm, &bad), HCP_ERR_INVALID_ARGUMENT) << message;
    EXPECT_NE(std::string(hcp_last_error()).find(message), std::string::npos) << hcp_last_error();
    EXPECT_EQ(comm, nullptr);
  }
  EXPECT_EQ(hcp_comm_create_callbacks(&comm, nullptr), HCP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hcp_comm_create_callbacks(nullptr, &good), HCP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(released.load(), 0);  // nothing was created, nothing released

  // Without split no CP context can be made; the error says why.
  hcp_comm_callbacks bad = good;
  bad.split = nullptr;
  ASSERT_EQ(hcp_comm_create_callbacks(&comm, &bad), HCP_OK);
  int32_t rank = -1, size = -1;
  ASSERT_EQ(hcp_comm_rank(&rank, &size, comm), HCP_OK);
  EXPECT_EQ(rank, 0);
  EXPECT_EQ(size, 1);
  hcp_parallel_config config = HCP_PARALLEL_CONFIG_INIT;
  config.world_size = 1, config.cp = 1;
  hcp_cp_context* ctx = nullptr;
  EXPECT_EQ(hcp_cp_context_create(&ctx, &config, comm, HCP_CP_COMM_P2P), HCP_ERR_UNSUPPORTED);
  EXPECT_NE(std::string(hcp_last_error()).find("no split function"), std::string::npos) << hcp_last_error();
  hcp_comm_destroy(comm);
  EXPECT_EQ(released.load(), 1);
}

}  // namespace
