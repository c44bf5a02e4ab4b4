// The C ABI's rules since 0.5: init functions equal to the _INIT macros, struct sizes only at field boundaries,
// reserved fields that must be zero, zero meaning the default, fixed-width enums, errors left on handles and read
// from another thread, and a log callback that may call back into hcp.
#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "hcp/hcp.h"

namespace {

static_assert(sizeof(hcp_status) == 4 && sizeof(hcp_group_kind) == 4 && sizeof(hcp_dtype) == 4);
static_assert(sizeof(hcp_cp_comm) == 4 && sizeof(hcp_order) == 4 && sizeof(hcp_device) == 4);
static_assert(sizeof(hcp_severity) == 4 && sizeof(hcp_logscan_event_kind) == 4);

std::string take(char* text) {
  std::string s = text ? text : "<null>";
  hcp_free(text);
  return s;
}

// The init function gives the macro's bytes, for the whole struct; garbage before the call does not survive.
template <typename T, typename Init>
void expect_init_matches_macro(const T& macro, Init init) {
  T filled;
  std::memset(&filled, 0xAB, sizeof filled);
  ASSERT_EQ(init(&filled, sizeof(T)), HCP_OK) << hcp_last_error();
  T expected;
  std::memset(&expected, 0, sizeof expected);  // padding-free structs: every byte is a field
  std::memcpy(&expected, &macro, sizeof expected);
  EXPECT_EQ(std::memcmp(&filled, &expected, sizeof(T)), 0);
  EXPECT_EQ(init(&filled, sizeof(T) - 4), HCP_ERR_INVALID_ARGUMENT);  // inside the last field
  EXPECT_EQ(init(&filled, sizeof(T) + 8), HCP_ERR_INVALID_ARGUMENT);  // the library cannot fill a newer struct
  EXPECT_EQ(init(nullptr, sizeof(T)), HCP_ERR_INVALID_ARGUMENT);
}

TEST(AbiRules, InitFunctionsEqualTheMacros) {
  expect_init_matches_macro(hcp_parallel_config HCP_PARALLEL_CONFIG_INIT, hcp_parallel_config_init);
  expect_init_matches_macro(hcp_rank_coords HCP_RANK_COORDS_INIT, hcp_rank_coords_init);
  expect_init_matches_macro(hcp_locality HCP_LOCALITY_INIT, hcp_locality_init);
  expect_init_matches_macro(hcp_lint_options HCP_LINT_OPTIONS_INIT, hcp_lint_options_init);
  expect_init_matches_macro(hcp_lint_diagnostic HCP_LINT_DIAGNOSTIC_INIT, hcp_lint_diagnostic_init);
  expect_init_matches_macro(hcp_logscan_options HCP_LOGSCAN_OPTIONS_INIT, hcp_logscan_options_init);
  expect_init_matches_macro(hcp_logscan_event HCP_LOGSCAN_EVENT_INIT, hcp_logscan_event_init);
  expect_init_matches_macro(hcp_plan_options HCP_PLAN_OPTIONS_INIT, hcp_plan_options_init);
  expect_init_matches_macro(hcp_tensor HCP_TENSOR_INIT, hcp_tensor_init);
  expect_init_matches_macro(hcp_attn_options HCP_ATTN_OPTIONS_INIT, hcp_attn_options_init);
  expect_init_matches_macro(hcp_cp_context_options HCP_CP_CONTEXT_OPTIONS_INIT, hcp_cp_context_options_init);
  expect_init_matches_macro(hcp_attn_simulate_options HCP_ATTN_SIMULATE_OPTIONS_INIT,
                            hcp_attn_simulate_options_init);
}

TEST(AbiRules, OlderVersionsInitialiseOnlyTheirFields) {
  hcp_attn_simulate_options o;
  std::memset(&o, 0x5A, sizeof o);
  ASSERT_EQ(hcp_attn_simulate_options_init(&o, offsetof(hcp_attn_simulate_options, device)), HCP_OK);
  EXPECT_EQ(o.struct_size, offsetof(hcp_attn_simulate_options, device));
  EXPECT_EQ(o.timeout_ms, 60000);
  int32_t device_bytes = 0;
  std::memcpy(&device_bytes, &o.device, sizeof device_bytes);
  EXPECT_EQ(device_bytes, 0x5A5A5A5A);  // beyond the 0.2 struct: the caller's memory, untouched
  hcp_parallel_config c;
  ASSERT_EQ(hcp_parallel_config_init(&c, offsetof(hcp_parallel_config, ep)), HCP_OK);
  EXPECT_EQ(hcp_parallel_config_init(&c, offsetof(hcp_parallel_config, ep) - 8), HCP_ERR_INVALID_ARGUMENT);
}

TEST(AbiRules, StructSizeMustBeAVersion) {
  hcp_parallel_config c = HCP_PARALLEL_CONFIG_INIT;
  c.world_size = 8, c.cp = 8;
  hcp_topology* t = nullptr;
  const size_t whole = sizeof c;
  for (size_t size : {offsetof(hcp_parallel_config, ep), offsetof(hcp_parallel_config, order),
                      offsetof(hcp_parallel_config, hcp_sizes), whole}) {
    c.struct_size = size;
    ASSERT_EQ(hcp_topology_create(&t, &c), HCP_OK) << size << ": " << hcp_last_error();
    hcp_topology_destroy(t);
  }
  // Half of gpus_per_node, half of hcp_sizes, one byte past cp: refused, not half read.
  for (size_t size : {whole - 4, offsetof(hcp_parallel_config, hcp_sizes) + 4, offsetof(hcp_parallel_config, ep) + 1,
                      whole + 4}) {
    c.struct_size = size;
    EXPECT_EQ(hcp_topology_create(&t, &c), HCP_ERR_INVALID_ARGUMENT) << size;
    EXPECT_NE(std::string(hcp_last_error()).find("is not a version of this struct"), std::string::npos);
  }
  // A newer caller's larger struct: accepted when its unknown tail is zero.
  struct Newer {
    hcp_parallel_config known;
    int64_t added;
  } newer{};
  newer.known = c;
  newer.known.struct_size = sizeof newer;
  EXPECT_EQ(hcp_topology_create(&t, &newer.known), HCP_OK) << hcp_last_error();
  hcp_topology_destroy(t);
  newer.added = 1;
  EXPECT_EQ(hcp_topology_create(&t, &newer.known), HCP_ERR_UNSUPPORTED);
}

TEST(AbiRules, ReservedFieldsMustBeZero) {
  float data[64] = {};
  hcp_tensor q = HCP_TENSOR_INIT;
  q.data = data, q.ndim = 4, q.shape[0] = 1, q.shape[1] = 4, q.shape[2] = 2, q.shape[3] = 8;  // strides 0: contiguous
  float lse_data[8] = {}, out_data[64] = {};
  hcp_tensor out = q, lse = HCP_TENSOR_INIT;
  out.data = out_data;
  lse.data = lse_data, lse.ndim = 3, lse.shape[0] = 1, lse.shape[1] = 2, lse.shape[2] = 4;
  hcp_attn_simulate_options o = HCP_ATTN_SIMULATE_OPTIONS_INIT;
  ASSERT_EQ(hcp_attn_simulate(&o, &q, &q, &q, &out, &lse, nullptr, nullptr, nullptr, nullptr), HCP_OK)
      << hcp_last_error();
  hcp_tensor dirty = q;
  dirty.reserved0 = 1;
  EXPECT_EQ(hcp_attn_simulate(&o, &dirty, &q, &q, &out, &lse, nullptr, nullptr, nullptr, nullptr),
            HCP_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(hcp_last_error()).find("reserved"), std::string::npos) << hcp_last_error();
  hcp_attn_simulate_options dirty_options = o;
  dirty_options.reserved1 = 7;
  EXPECT_EQ(hcp_attn_simulate(&dirty_options, &q, &q, &q, &out, &lse, nullptr, nullptr, nullptr, nullptr),
            HCP_ERR_INVALID_ARGUMENT);
}

TEST(AbiRules, ZeroMeansTheDefault) {
  // A struct zeroed by hand, with struct_size and the required fields set, as a binding without macros would do.
  hcp_parallel_config c;
  std::memset(&c, 0, sizeof c);
  c.struct_size = sizeof c;
  c.world_size = 16, c.tp = 1, c.pp = 1, c.cp = 16;
  hcp_topology* t = nullptr;
  ASSERT_EQ(hcp_topology_create(&t, &c), HCP_OK) << hcp_last_error();  // ep 0 -> 1, gpus_per_node 0 -> 8
  hcp_locality l = HCP_LOCALITY_INIT;
  ASSERT_EQ(hcp_topology_locality(&l, t, HCP_GROUP_CP, 0), HCP_OK);
  EXPECT_EQ(l.groups_crossing_nodes, 1);  // 16 ranks over nodes of 8
  hcp_topology_destroy(t);

  hcp_attn_simulate_options o;
  std::memset(&o, 0, sizeof o);
  o.struct_size = sizeof o;
  o.cp = 2;  // timeout 0 -> 60 s, scale 0 -> 1/sqrt(D), CPU
  float q[64] = {}, out[64] = {}, lse[8] = {};
  hcp_tensor tq;
  std::memset(&tq, 0, sizeof tq);
  tq.struct_size = sizeof tq, tq.data = q, tq.ndim = 4;
  tq.shape[0] = 1, tq.shape[1] = 4, tq.shape[2] = 2, tq.shape[3] = 8;
  hcp_tensor tout = tq, tlse = tq;
  tout.data = out;
  tlse.data = lse, tlse.ndim = 3, tlse.shape[1] = 2, tlse.shape[2] = 4, tlse.shape[3] = 0;
  EXPECT_EQ(hcp_attn_simulate(&o, &tq, &tq, &tq, &tout, &tlse, nullptr, nullptr, nullptr, nullptr), HCP_OK)
      << hcp_last_error();
  // cp is required: 0 is a configuration error like every other, and its message names the function once.
  o.cp = 0;
  EXPECT_EQ(hcp_attn_simulate(&o, &tq, &tq, &tq, &tout, &tlse, nullptr, nullptr, nullptr, nullptr),
            HCP_ERR_INVALID_CONFIG);
  EXPECT_EQ(std::string(hcp_last_error()), "hcp_attn_simulate: cp must be in [1, 4096], got 0");
}

TEST(AbiRules, HandleErrorsSurviveThreadHops) {
  hcp_parallel_config c = HCP_PARALLEL_CONFIG_INIT;
  c.world_size = 8, c.cp = 8;
  hcp_topology* t = nullptr;
  ASSERT_EQ(hcp_topology_create(&t, &c), HCP_OK);
  EXPECT_EQ(take([&] { char* m = nullptr; hcp_topology_last_error(&m, t); return m; }()), "");
  // The call fails on a worker thread; the message is read on this one, whose own last error is untouched.
  std::thread worker([&] {
    hcp_rank_coords rc = HCP_RANK_COORDS_INIT;
    EXPECT_EQ(hcp_topology_coords(&rc, t, 99), HCP_ERR_INVALID_ARGUMENT);
  });
  worker.join();
  char* message = nullptr;
  ASSERT_EQ(hcp_topology_last_error(&message, t), HCP_OK);
  const std::string m = take(message);
  EXPECT_NE(m.find("hcp_topology_coords"), std::string::npos) << m;
  EXPECT_NE(m.find("99"), std::string::npos) << m;
  EXPECT_EQ(hcp_topology_last_error(nullptr, t), HCP_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(hcp_topology_last_error(&message, nullptr), HCP_ERR_INVALID_ARGUMENT);

  // Two threads failing on two handles at once: each handle keeps its own call's message.
  hcp_lint_report* report = nullptr;
  ASSERT_EQ(hcp_lint_text(&report, "cp_comm_type: p2p\n", 18, "x.yaml", nullptr), HCP_OK) << hcp_last_error();
  std::thread a([&] {
    for (int i = 0; i < 200; ++i) (void)hcp_topology_group_size(nullptr, nullptr, t, HCP_GROUP_CP, 0);
  });
  std::thread b([&] {
    hcp_lint_diagnostic d = HCP_LINT_DIAGNOSTIC_INIT;
    for (int i = 0; i < 200; ++i) (void)hcp_lint_report_get(&d, report, 1000);
  });
  a.join();
  b.join();
  ASSERT_EQ(hcp_topology_last_error(&message, t), HCP_OK);
  EXPECT_NE(take(message).find("hcp_topology_group_size"), std::string::npos);
  ASSERT_EQ(hcp_lint_report_last_error(&message, report), HCP_OK);
  EXPECT_NE(take(message).find("index 1000 out of range"), std::string::npos);
  hcp_lint_report_destroy(report);
  hcp_topology_destroy(t);

  // A world and a communicator: a bad rank on the world, a context refused on the communicator.
  hcp_world* world = nullptr;
  ASSERT_EQ(hcp_world_create(&world, 1, 0), HCP_OK);
  hcp_comm* comm = nullptr;
  std::thread([&] { EXPECT_EQ(hcp_world_comm(&comm, world, 5), HCP_ERR_INVALID_ARGUMENT); }).join();
  ASSERT_EQ(hcp_world_last_error(&message, world), HCP_OK);
  EXPECT_NE(take(message).find("hcp_world_comm"), std::string::npos);
  ASSERT_EQ(hcp_world_comm(&comm, world, 0), HCP_OK);
  hcp_parallel_config two = HCP_PARALLEL_CONFIG_INIT;
  two.world_size = 2, two.cp = 2;  // the world has one rank
  hcp_cp_context* ctx = nullptr;
  std::thread([&] { EXPECT_NE(hcp_cp_context_create(&ctx, &two, comm, HCP_CP_COMM_P2P), HCP_OK); }).join();
  ASSERT_EQ(hcp_comm_last_error(&message, comm), HCP_OK);
  EXPECT_NE(take(message).find("hcp_cp_context_create"), std::string::npos);
  hcp_world_destroy(world);
}

TEST(AbiRules, HandleErrorsOfScannersAndContexts) {
  hcp_logscanner* s = nullptr;
  ASSERT_EQ(hcp_logscan_create(&s, nullptr), HCP_OK);
  hcp_logscan_report* r = nullptr;
  ASSERT_EQ(hcp_logscan_finish(&r, s), HCP_OK);
  std::thread([&] { EXPECT_EQ(hcp_logscan_feed(s, "x", 1), HCP_ERR_INVALID_ARGUMENT); }).join();
  char* message = nullptr;
  ASSERT_EQ(hcp_logscan_last_error(&message, s), HCP_OK);
  EXPECT_NE(take(message).find("already finished"), std::string::npos);
  std::thread([&] { EXPECT_EQ(hcp_logscan_report_render(&message, r, "yaml"), HCP_ERR_INVALID_ARGUMENT); }).join();
  ASSERT_EQ(hcp_logscan_report_last_error(&message, r), HCP_OK);
  EXPECT_NE(take(message).find("hcp_logscan_report_render"), std::string::npos);
  hcp_logscan_report_destroy(r);
  hcp_logscan_destroy(s);

  hcp_world* world = nullptr;
  ASSERT_EQ(hcp_world_create(&world, 1, 0), HCP_OK);
  hcp_comm* comm = nullptr;
  ASSERT_EQ(hcp_world_comm(&comm, world, 0), HCP_OK);
  hcp_parallel_config c = HCP_PARALLEL_CONFIG_INIT;
  hcp_cp_context* ctx = nullptr;
  ASSERT_EQ(hcp_cp_context_create(&ctx, &c, comm, HCP_CP_COMM_P2P), HCP_OK) << hcp_last_error();
  std::thread([&] { EXPECT_EQ(hcp_attn_forward(ctx, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr),
                              HCP_ERR_INVALID_ARGUMENT); }).join();
  ASSERT_EQ(hcp_cp_context_last_error(&message, ctx), HCP_OK);
  EXPECT_NE(take(message).find("hcp_attn_forward"), std::string::npos);
  hcp_cp_context_destroy(ctx);
  hcp_world_destroy(world);
}

// A log callback that calls back into hcp - replacing itself, as the deadlock did - while the ranks of a
// world create their contexts on two threads.
std::atomic<int> g_lines{0};
void reentrant_callback(int32_t, const char*, void* user) {
  g_lines.fetch_add(1);
  EXPECT_EQ(hcp_set_log_callback(reentrant_callback, user), HCP_OK);
  hcp_topology* t = nullptr;
  hcp_parallel_config c = HCP_PARALLEL_CONFIG_INIT;
  EXPECT_EQ(hcp_topology_create(&t, &c), HCP_OK);
  hcp_topology_destroy(t);
}

TEST(AbiRules, LogCallbackMayCallHcp) {
  g_lines = 0;
  ASSERT_EQ(hcp_set_log_callback(reentrant_callback, nullptr), HCP_OK);
  hcp_world* world = nullptr;
  ASSERT_EQ(hcp_world_create(&world, 2, 20000), HCP_OK);
  hcp_parallel_config c = HCP_PARALLEL_CONFIG_INIT;
  c.world_size = 2, c.cp = 2;
  std::vector<std::thread> threads;
  std::vector<hcp_status> status(2, HCP_ERR_INTERNAL);
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      hcp_comm* comm = nullptr;
      hcp_world_comm(&comm, world, r);
      hcp_cp_context* ctx = nullptr;
      status[static_cast<size_t>(r)] = hcp_cp_context_create(&ctx, &c, comm, HCP_CP_COMM_P2P);
      hcp_cp_context_destroy(ctx);
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(hcp_set_log_callback(nullptr, nullptr), HCP_OK);
  hcp_world_destroy(world);
  EXPECT_EQ(status[0], HCP_OK);
  EXPECT_EQ(status[1], HCP_OK);
  EXPECT_EQ(g_lines.load(), 2);  // one CONTEXT_PARALLEL_GROUP line per rank
}

}  // namespace

namespace {

// Runs in capi.suite_without_gpu_module (HCP_CUDA_MODULE names a file that is not there): every GPU entry point
// says HCP_ERR_UNSUPPORTED and names the module it could not load; the CPU path is unaffected.
TEST(GpuModule, AbsentModuleGivesUnsupportedNamingIt) {
  const char* module = std::getenv("HCP_CUDA_MODULE");
  if (module == nullptr || std::string(module).find("absent") == std::string::npos)
    GTEST_SKIP() << "runs with HCP_CUDA_MODULE set to an absent file (ctest capi.suite_without_gpu_module)";
  uint8_t id[HCP_NCCL_UNIQUE_ID_BYTES];
  EXPECT_EQ(hcp_nccl_unique_id(id), HCP_ERR_UNSUPPORTED);
  const std::string message = hcp_last_error();
  EXPECT_NE(message.find("libhcp_cuda.so"), std::string::npos) << message;
  EXPECT_NE(message.find(module), std::string::npos) << message;
  hcp_world* world = nullptr;
  ASSERT_EQ(hcp_world_create(&world, 1, 0), HCP_OK);
  hcp_comm* comm = nullptr;
  ASSERT_EQ(hcp_world_comm(&comm, world, 0), HCP_OK);
  hcp_parallel_config c = HCP_PARALLEL_CONFIG_INIT;
  hcp_cp_context_options o = HCP_CP_CONTEXT_OPTIONS_INIT;
  o.device = HCP_DEVICE_CUDA;
  hcp_cp_context* ctx = nullptr;
  EXPECT_EQ(hcp_cp_context_create_with(&ctx, &c, comm, HCP_CP_COMM_P2P, &o), HCP_ERR_UNSUPPORTED);
  EXPECT_NE(std::string(hcp_last_error()).find("libhcp_cuda.so"), std::string::npos) << hcp_last_error();
  o.device = HCP_DEVICE_CPU;
  EXPECT_EQ(hcp_cp_context_create_with(&ctx, &c, comm, HCP_CP_COMM_P2P, &o), HCP_OK);
  hcp_cp_context_destroy(ctx);
  hcp_world_destroy(world);
}

}  // namespace
