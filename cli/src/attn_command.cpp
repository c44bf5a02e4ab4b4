#include "attn_command.hpp"

#include <chrono>
#include <cstring>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "attn_mask.hpp"
#include "attn_mpi.hpp"
#include "attn_problem.hpp"
#include "cli_options.hpp"
#include "exit_codes.hpp"
#include "hcp/attention_cpu.hpp"
#include "hcp/attention_cuda.hpp"
#include "hcp/cp_attention.hpp"
#include "hcp/dtype_convert.hpp"
#include "hcp/json_writer.hpp"
#include "hcp/printable.hpp"
#include "int_list.hpp"

namespace hcp::cli {
namespace {

struct AttnOptions {
  int64_t cp = 2;
  std::optional<std::string> hcp_sizes;
  std::string comm = "p2p";
  int64_t batch = 1, seq = 1024, heads = 8, head_dim = 128;
  std::optional<int64_t> kv_heads, head_dim_v;
  std::optional<std::string> seqlens, window;
  bool causal = false, backward = false, check = false, bench = false, max_logit = false;
  std::string dtype = "fp32";
  std::string softmax = "vanilla";
  std::string bias = "none";
  std::string layout = "bshd";
  std::string device = "cpu";
  std::string backend = "inprocess";
  int64_t gpus_per_node = 0;
  std::optional<std::string> fault;
  std::string format = "text";
  int64_t seed = 1;
  int64_t timeout_ms = 600000;
};

// Keeps one run within what a host can hold: 2^31 elements per full tensor (8 GiB in fp32).
constexpr int64_t kMaxElements = int64_t{1} << 31;

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

int run_attn_with(const AttnOptions& o, std::optional<MpiRun>& mpi) {
  SimulateOptions s;
  s.comm = parse_cp_comm(o.comm);
  if (o.cp < 1 || o.cp > 4096) throw Error(Errc::invalid_config, "--cp must be in [1, 4096], got " + std::to_string(o.cp));
  s.cp = static_cast<int>(o.cp);
  if (o.hcp_sizes) s.hcp_sizes = parse_int_list(*o.hcp_sizes, "--hcp-sizes");
  if (s.comm == CpComm::a2a_p2p && !o.hcp_sizes)
    throw Error(Errc::invalid_config, "--comm a2a+p2p needs --hcp-sizes A,P (a2a size, p2p size)");
  s.dtype = o.dtype == "bf16" ? DType::bf16 : o.dtype == "fp16" ? DType::f16 : DType::f32;
  const bool cuda = o.device == "cuda";
  if (cuda) {
    // Checked here so the message names the options; the engine would refuse the same on every rank.
    if (s.dtype == DType::f32) throw Error(Errc::invalid_config, "--device cuda needs --dtype bf16 or fp16");
    for (auto [name, dim] : {std::pair{"--head-dim", o.head_dim}, {"--head-dim-v", o.head_dim_v.value_or(o.head_dim)}})
      if (!cuda_head_dim_supported(dim))
        throw Error(Errc::invalid_config, std::string("--device cuda needs ") + name + " " + kCudaHeadDims +
                                              ", got " + std::to_string(dim));
    const Status device = cuda_device_status();
    if (!device.ok()) throw Error(Errc::unsupported, "--device cuda: " + device.message());
    s.device.kind = CpDevice::Kind::cuda;
  }
  AttnMask mask = make_attn_mask(o.seqlens, o.window, s.cp, o.causal, o.seq);
  if (o.seqlens && o.batch != 1)
    throw Error(Errc::invalid_config, "--seqlens packs the documents into one row: --batch must be 1");
  s.batch = o.batch, s.seq = mask.seq, s.heads = o.heads, s.kv_heads = o.kv_heads.value_or(o.heads);
  s.head_dim = o.head_dim, s.head_dim_v = o.head_dim_v.value_or(o.head_dim), s.causal = o.causal;
  const int64_t dv = s.head_dim_v;  // v's, out's, dout's and dv's head dim (MLA)
  s.packed = mask.packed, s.window_left = mask.window_left, s.window_right = mask.window_right;
  s.layout = o.layout == "sbhd" ? SeqLayout::sbhd : SeqLayout::bshd;
  if (o.timeout_ms < 1 || o.timeout_ms > INT32_MAX)
    throw Error(Errc::invalid_config, "--timeout-ms must be in [1, " + std::to_string(INT32_MAX) + "], got " +
                                          std::to_string(o.timeout_ms));
  s.timeout_ms = static_cast<int>(o.timeout_ms);
  // The faults are those of a process (killed, hung, aborted): in-process ranks are threads of this one.
  if (o.fault && o.backend != "mpi") throw Error(Errc::invalid_config, "--inject-fault needs --backend mpi");
  for (auto [name, v] : {std::pair{"--batch", s.batch}, {"--seq", s.seq}, {"--heads", s.heads},
                         {"--kv-heads", s.kv_heads}, {"--head-dim", s.head_dim}, {"--head-dim-v", dv}})
    if (v < 1) throw Error(Errc::invalid_config, std::string(name) + " must be positive, got " + std::to_string(v));
  // Elements of q (and dq), k (dk), out (dout) and v (dv).
  int64_t tokens = 0, q_elems = 0, kv_elems = 0, o_elems = 0, v_elems = 0;
  if (__builtin_mul_overflow(s.batch, s.seq, &tokens) || __builtin_mul_overflow(tokens, s.heads, &q_elems) ||
      __builtin_mul_overflow(q_elems, std::max(s.head_dim, dv), &o_elems) || o_elems > kMaxElements)
    throw Error(Errc::invalid_config, "batch * seq * heads * head_dim exceeds 2^31 elements");
  q_elems = tokens * s.heads * s.head_dim, o_elems = tokens * s.heads * dv;
  kv_elems = tokens * s.kv_heads * s.head_dim, v_elems = tokens * s.kv_heads * dv;

  // One rank per process: MPI first, so that a launch with the wrong process count fails before any work.
  if (o.backend == "mpi") {
    mpi.emplace(std::chrono::milliseconds(s.timeout_ms), o.fault ? parse_fault(*o.fault) : FaultPlan{});
    if (mpi->size() != s.cp)
      throw Error(Errc::invalid_config, "--cp is " + std::to_string(s.cp) + " but the job has " +
                                            std::to_string(mpi->size()) + " processes (one rank per process)");
    s.log_level = LogLevel::info;  // each process logs its own groups, as a training job would
  }
  if (o.gpus_per_node < 0) throw Error(Errc::invalid_config, "--gpus-per-node must be positive");
  s.gpus_per_node = o.gpus_per_node;

  std::mt19937 gen(static_cast<uint32_t>(o.seed));
  const HostTensor q = random_tensor(static_cast<size_t>(q_elems), s.dtype, gen);
  const HostTensor k = random_tensor(static_cast<size_t>(kv_elems), s.dtype, gen);
  const HostTensor v = random_tensor(static_cast<size_t>(v_elems), s.dtype, gen);
  const HostTensor dout = o.backward ? random_tensor(static_cast<size_t>(o_elems), s.dtype, gen) : HostTensor{};
  // Attention sinks: off-by-one's logit is 0; learnable ones are drawn per head, after the tensors (so that the
  // tensors of a seed stay what they were), on the logits' own scale.
  s.softmax = o.softmax == "learnable" ? SoftmaxType::learnable
            : o.softmax == "off-by-one" ? SoftmaxType::off_by_one : SoftmaxType::vanilla;
  std::vector<float> sinks(static_cast<size_t>(s.heads), 0.0f), d_sink(sinks.size(), 0.0f);
  if (s.softmax == SoftmaxType::learnable) {
    std::uniform_real_distribution<float> logit(-1.0f, 2.0f);
    for (float& x : sinks) x = logit(gen);
    s.sink = sinks.data();
  }
  // Attention bias in Transformer Engine's shape (--bias bhss, ...: [B|1, H|1, S|1, S]), drawn after the sinks.
  std::vector<float> bias, d_bias;
  if (o.bias != "none") {
    s.bias_batch = o.bias[0] == 'b' ? s.batch : 1, s.bias_heads = o.bias[1] == 'h' ? s.heads : 1;
    s.bias_rows = o.bias[2] == 's' ? s.seq : 1;
    int64_t elems = 0;
    if (__builtin_mul_overflow(s.bias_batch * s.bias_heads * s.bias_rows, s.seq, &elems) || elems > kMaxElements ||
        (o.backward && (__builtin_mul_overflow(s.batch * s.heads * s.seq, s.seq, &elems) || elems > kMaxElements)))
      throw Error(Errc::invalid_config, "--bias: the bias (and its gradient per pair) of S x S exceeds 2^31 elements");
    std::uniform_real_distribution<float> logit(-2.0f, 2.0f);
    bias.resize(static_cast<size_t>(s.bias_batch * s.bias_heads * s.bias_rows * s.seq));
    for (float& x : bias) x = logit(gen);
    d_bias.assign(bias.size(), 0.0f);
    s.bias = bias.data();
  }
  const size_t e = dtype_size(s.dtype);
  std::vector<unsigned char> out(o_elems * e), dq(o.backward ? q_elems * e : 0), dk(o.backward ? kv_elems * e : 0),
      dv_out(o.backward ? v_elems * e : 0);
  std::vector<float> lse(static_cast<size_t>(s.batch * s.heads * s.seq));
  SimulateTensors t;
  t.q = q.raw.data(), t.k = k.raw.data(), t.v = v.raw.data(), t.out = out.data(), t.lse = lse.data();
  if (o.backward) t.dout = dout.raw.data(), t.dq = dq.data(), t.dk = dk.data(), t.dv = dv_out.data();
  if (o.backward && s.softmax == SoftmaxType::learnable) t.d_sink = d_sink.data();
  if (o.backward && s.bias) t.d_bias = d_bias.data();
  std::vector<float> max_logit(static_cast<size_t>(s.heads), 0.0f);
  if (o.max_logit) t.max_logit = max_logit.data();
  SimulateTimes times;
  const auto start = std::chrono::steady_clock::now();
  Status status;
  int cp_rank = -1;  // under MPI: the rank whose rows this process holds and checks
  if (mpi) {
    RankRun run;
    status = attention_rank(mpi->world(), s, t, &run);
    times = run.times, cp_rank = run.cp_rank;
  } else {
    status = attention_simulate(s, t, &times);
  }
  const double wall = seconds_since(start);
  if (!status.ok())
    throw Error(status.code(), (mpi ? "rank " + std::to_string(mpi->rank()) + ": " : std::string()) + status.message());
  // This process's rows of a full [B, S, X] result against the reference (all rows in process).
  auto check_rows = [&](const std::string& name, const std::vector<unsigned char>& got, DType dtype,
                        const std::vector<float>& want, int64_t batch, int64_t row, SeqLayout as) {
    if (cp_rank < 0) return compare(name, got, dtype, want);
    const std::vector<unsigned char> mine =
        rank_rows(got.data(), s.packed, batch, s.seq, row, dtype_size(dtype), s.cp, cp_rank, as);
    const std::vector<unsigned char> ref =
        rank_rows(want.data(), s.packed, batch, s.seq, row, sizeof(float), s.cp, cp_rank, as);
    std::vector<float> ref_f32(ref.size() / sizeof(float));
    std::memcpy(ref_f32.data(), ref.data(), ref.size());
    return compare(name, mine, dtype, ref_f32);
  };

  std::vector<ErrorStat> errors;
  // 16-bit outputs carry their own rounding; the CUDA kernels also round P and dS to the input type.
  double tolerance = s.dtype == DType::f32 ? 1e-5 : (s.kv_heads != s.heads ? 3.5e-2 : 2.5e-2);
  if (cuda) tolerance = 5e-2;
  double single_s = 0;
  bool within = true;
  if (o.check) {
    // Single-rank attention over the full sequence, fp32, from the same (rounded) inputs.
    std::vector<float> want_out(static_cast<size_t>(o_elems)), want_lse(lse.size()), delta(lse.size());
    std::vector<float> want_rows_max(o.max_logit ? lse.size() : 0);
    std::vector<float> want_dq(o.backward ? q_elems : 0, 0.0f), want_dk(o.backward ? kv_elems : 0, 0.0f),
        want_dv(o.backward ? v_elems : 0, 0.0f);
    AttnParams p;
    p.batch = s.batch, p.sq = p.sk = s.seq, p.heads = s.heads, p.kv_heads = s.kv_heads, p.head_dim = s.head_dim;
    p.head_dim_v = dv;
    p.scale = 1.0f / std::sqrt(static_cast<float>(s.head_dim)), p.causal = s.causal;
    mask.apply(&p);
    p.num_threads = mpi ? 1 : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    // The tensors as they are stored: [B, S, H, D], or [S, B, H, D] (sbhd: batch stride a row, token stride B rows).
    const bool sbhd = s.layout == SeqLayout::sbhd;
    auto view = [&](const std::vector<float>& x, int64_t heads, int64_t dim) {
      const int64_t row = heads * dim;
      return AttnTensor{const_cast<float*>(x.data()), sbhd ? row : s.seq * row, sbhd ? s.batch * row : row, dim};
    };
    auto qt = [&](const std::vector<float>& x) { return view(x, s.heads, s.head_dim); };
    auto kt = [&](const std::vector<float>& x) { return view(x, s.kv_heads, s.head_dim); };
    auto ot = [&](const std::vector<float>& x) { return view(x, s.heads, dv); };
    auto vt = [&](const std::vector<float>& x) { return view(x, s.kv_heads, dv); };
    p.q = qt(q.f32), p.k = kt(k.f32), p.v = vt(v.f32), p.out = ot(want_out);
    p.lse = {want_lse.data(), s.heads * s.seq, s.seq};
    // The bias by its broadcast strides; its gradient per pair ([B, H, S, S]), summed to its shape after.
    std::vector<float> want_dbias_pairs(s.bias && o.backward ? static_cast<size_t>(s.batch * s.heads * s.seq * s.seq) : 0);
    if (s.bias) {
      const int64_t rows = s.bias_rows, plane = rows * s.seq;
      p.bias = {bias.data(), s.bias_batch > 1 ? s.bias_heads * plane : 0, s.bias_heads > 1 ? plane : 0,
                rows > 1 ? s.seq : 0, 1};
    }
    if (o.max_logit) p.max_logit = {want_rows_max.data(), s.heads * s.seq, s.seq};
    const auto single_start = std::chrono::steady_clock::now();
    Status st = attention_forward_cpu(p);
    single_s = seconds_since(single_start);
    if (!st.ok()) throw Error(st.code(), st.message());
    if (s.softmax != SoftmaxType::vanilla) {
      SinkParams sp;
      sp.batch = s.batch, sp.heads = s.heads, sp.rows = s.seq, sp.head_dim = dv;
      const AttnTensor o_view = ot(want_out);
      sp.out = want_out.data(), sp.out_h = dv, sp.out_r = o_view.stride_s, sp.out_b = o_view.stride_b;
      sp.lse = want_lse.data(), sp.sink = sinks.data();
      apply_sink_cpu(sp);
    }
    std::vector<unsigned char> lse_raw(lse.size() * 4);
    std::memcpy(lse_raw.data(), lse.data(), lse_raw.size());
    errors.push_back(check_rows("out", out, s.dtype, want_out, s.batch, s.heads * dv, s.layout));
    errors.push_back(check_rows("lse", lse_raw, DType::f32, want_lse, s.batch * s.heads, 1, SeqLayout::bshd));
    if (o.max_logit) {  // every rank has every head's maximum
      std::vector<float> want(static_cast<size_t>(s.heads), -INFINITY);
      for (int64_t b = 0; b < s.batch; ++b)
        for (int64_t h = 0; h < s.heads; ++h)
          for (int64_t i = 0; i < s.seq; ++i)
            want[static_cast<size_t>(h)] =
                std::max(want[static_cast<size_t>(h)], want_rows_max[static_cast<size_t>((b * s.heads + h) * s.seq + i)]);
      std::vector<unsigned char> got(max_logit.size() * 4);
      std::memcpy(got.data(), max_logit.data(), got.size());
      errors.push_back(compare("maxlogit", got, DType::f32, want));
    }
    if (o.backward) {
      p.dout = ot(dout.f32), p.dq = qt(want_dq), p.dk = kt(want_dk), p.dv = vt(want_dv);
      p.delta = {delta.data(), s.heads * s.seq, s.seq};
      if (s.bias) p.dbias = {want_dbias_pairs.data(), s.heads * s.seq * s.seq, s.seq * s.seq, s.seq, 1};
      attention_delta_cpu(DType::f32, s.batch, s.seq, s.heads, dv, p.dout, p.out, p.delta);
      st = attention_backward_cpu(p);
      if (!st.ok()) throw Error(st.code(), st.message());
      errors.push_back(check_rows("dq", dq, s.dtype, want_dq, s.batch, s.heads * s.head_dim, s.layout));
      errors.push_back(check_rows("dk", dk, s.dtype, want_dk, s.batch, s.kv_heads * s.head_dim, s.layout));
      errors.push_back(check_rows("dv", dv_out, s.dtype, want_dv, s.batch, s.kv_heads * dv, s.layout));
      if (s.bias) {
        std::vector<float> want(bias.size(), 0.0f);
        for (int64_t b = 0; b < s.batch; ++b)
          for (int64_t h = 0; h < s.heads; ++h)
            for (int64_t i = 0; i < s.seq; ++i) {
              const float* src = want_dbias_pairs.data() + ((b * s.heads + h) * s.seq + i) * s.seq;
              float* dst = want.data() + (((s.bias_batch > 1 ? b : 0) * s.bias_heads + (s.bias_heads > 1 ? h : 0)) *
                                              s.bias_rows + (s.bias_rows > 1 ? i : 0)) * s.seq;
              for (int64_t j = 0; j < s.seq; ++j) dst[j] += src[j];
            }
        std::vector<unsigned char> got(d_bias.size() * 4);
        std::memcpy(got.data(), d_bias.data(), got.size());
        // Rows of queries: this process's rows under MPI; a [1, 1, 1, S] bias's gradient is every rank's.
        errors.push_back(s.bias_rows > 1 ? check_rows("dbias", got, DType::f32, want, s.bias_batch * s.bias_heads, s.seq,
                                                      SeqLayout::bshd)
                                         : compare("dbias", got, DType::f32, want));
      }
      if (s.softmax == SoftmaxType::learnable) {  // every rank has the whole gradient
        std::vector<double> grad(sinks.size(), 0.0);
        sink_gradient_cpu(s.batch, s.heads, s.seq, want_lse.data(), delta.data(), sinks.data(), grad.data());
        std::vector<unsigned char> got(d_sink.size() * 4);
        std::memcpy(got.data(), d_sink.data(), got.size());
        errors.push_back(compare("dsink", got, DType::f32, std::vector<float>(grad.begin(), grad.end())));
      }
    }
    for (const ErrorStat& err : errors) within = within && err.max_rel <= tolerance;
  }
  if (mpi) {
    // Rank 0 reports for the job: every rank's largest errors; the exit status is every rank's own.
    const bool mine = within;
    if (o.check) mpi->combine(&errors, &within);
    if (mpi->rank() != 0) return mine ? kExitOk : kExitFindings;
  }

  // Useful work: the visible pairs under packing and windows, half the square under a plain causal mask.
  const double pairs = mask.labelled() ? mask.visible_pairs()
                                       : static_cast<double>(s.seq) * static_cast<double>(s.seq) * (s.causal ? 0.5 : 1.0);
  // q k^T and P v: 2 D and 2 Dv per visible pair and head.
  const double flop = 2.0 * static_cast<double>(s.batch * s.heads) * pairs * static_cast<double>(s.head_dim + dv);
  std::string sizes_text;
  for (size_t i = 0; i < s.hcp_sizes.size(); ++i) sizes_text += (i ? "," : "") + std::to_string(s.hcp_sizes[i]);
  if (o.format == "json") {
    std::string text;
    JsonWriter w(text);
    w.begin_object();
    w.key("comm"); w.value(std::string(cp_comm_name(s.comm)));
    w.key("cp"); w.value(static_cast<int64_t>(s.cp));
    w.key("hcp_sizes"); w.begin_array();
    for (int64_t x : s.hcp_sizes) w.value(x);
    w.end_array();
    w.key("batch"); w.value(s.batch);
    w.key("seq"); w.value(s.seq);
    w.key("heads"); w.value(s.heads);
    w.key("kv_heads"); w.value(s.kv_heads);
    w.key("head_dim"); w.value(s.head_dim);
    w.key("head_dim_v"); w.value(dv);
    w.key("causal"); w.value(s.causal);
    w.key("softmax"); w.value(o.softmax);
    w.key("bias"); w.value(o.bias);
    w.key("layout"); w.value(s.packed.empty() ? o.layout : std::string("thd"));
    if (o.max_logit) {
      w.key("max_logit"); w.begin_array();
      for (float x : max_logit) w.value(static_cast<double>(x));
      w.end_array();
    }
    if (!s.packed.empty()) {
      w.key("cu_seqlens"); w.begin_array();
      for (int64_t x : s.packed.cu_seqlens) w.value(x);
      w.end_array();
      w.key("cu_seqlens_padded"); w.begin_array();
      for (int64_t x : s.packed.cu_seqlens_padded) w.value(x);
      w.end_array();
    }
    if (mask.window_left >= 0 || mask.window_right >= 0) {
      w.key("window"); w.begin_array();
      w.value(mask.window_left);
      w.value(mask.window_right);
      w.end_array();
    }
    w.key("dtype"); w.value(o.dtype);
    w.key("device"); w.value(o.device);
    w.key("backward"); w.value(o.backward);
    if (o.check) {
      w.key("check"); w.begin_object();
      w.key("tolerance"); w.value(tolerance);
      w.key("ok"); w.value(within);
      w.key("errors"); w.begin_object();
      for (const ErrorStat& err : errors) {
        w.key(err.name); w.begin_object();
        w.key("max_abs"); w.value(err.max_abs);
        w.key("max_rel"); w.value(err.max_rel);
        w.end_object();
      }
      w.end_object();
      w.end_object();
    }
    if (o.bench) {
      w.key("bench"); w.begin_object();
      w.key("wall_s"); w.value(wall);
      w.key("rank_cpu_forward_s"); w.value(times.forward_cpu_s);
      w.key("rank_cpu_backward_s"); w.value(times.backward_cpu_s);
      w.key("forward_gflop"); w.value(flop / 1e9);
      w.key("forward_gflops_per_cpu_s"); w.value(times.forward_cpu_s > 0 ? flop / 1e9 / times.forward_cpu_s : 0.0);
      w.key("forward_wall_s"); w.value(times.forward_wall_s);
      w.key("backward_wall_s"); w.value(times.backward_wall_s);
      w.key("forward_tflops"); w.value(times.forward_wall_s > 0 ? flop / 1e12 / times.forward_wall_s : 0.0);
      w.key("backward_tflops"); w.value(times.backward_wall_s > 0 ? 2.5 * flop / 1e12 / times.backward_wall_s : 0.0);
      w.end_object();
    }
    w.end_object();
    std::cout << text << "\n";
  } else {
    char line[512];
    std::string text;
    std::snprintf(line, sizeof line, "hcp attn: %s, cp %d%s%s%s, B %lld S %lld H %lld Hkv %lld D %lld, %s, %s%s%s\n",
                  std::string(cp_comm_name(s.comm)).c_str(), s.cp, sizes_text.empty() ? "" : " sizes [",
                  sizes_text.c_str(), sizes_text.empty() ? "" : "]", static_cast<long long>(s.batch),
                  static_cast<long long>(s.seq), static_cast<long long>(s.heads), static_cast<long long>(s.kv_heads),
                  static_cast<long long>(s.head_dim), s.causal ? "causal" : "no mask", o.dtype.c_str(),
                  o.backward ? ", forward + backward" : ", forward",
                  cuda ? ", on the CUDA device" : mpi ? ", one MPI process per rank" : "");
    text += line;
    if (!s.packed.empty()) {
      std::snprintf(line, sizeof line, "  packed: %lld documents, %lld tokens padded to %lld (multiples of 2 x cp)\n",
                    static_cast<long long>(s.packed.documents()), static_cast<long long>(s.packed.cu_seqlens.back()),
                    static_cast<long long>(s.packed.total_padded()));
      text += line;
    }
    if (dv != s.head_dim) {
      std::snprintf(line, sizeof line, "  MLA head dims: D %lld (q, k), Dv %lld (v, out)\n",
                    static_cast<long long>(s.head_dim), static_cast<long long>(dv));
      text += line;
    }
    if (s.layout == SeqLayout::sbhd && s.packed.empty()) text += "  layout: sbhd (full tensors [S, B, H, D])\n";
    if (s.softmax != SoftmaxType::vanilla) {
      std::snprintf(line, sizeof line, "  softmax: %s (attention sinks%s)\n", o.softmax.c_str(),
                    s.softmax == SoftmaxType::learnable ? ", one drawn per head" : ", a logit 0");
      text += line;
    }
    if (s.bias) {
      std::snprintf(line, sizeof line, "  bias: %s ([%lld, %lld, %lld, %lld], drawn; post-scale, as Transformer Engine's)\n",
                    o.bias.c_str(), static_cast<long long>(s.bias_batch), static_cast<long long>(s.bias_heads),
                    static_cast<long long>(s.bias_rows), static_cast<long long>(s.seq));
      text += line;
    }
    if (mask.window_left >= 0 || mask.window_right >= 0) {
      std::snprintf(line, sizeof line, "  window: (%lld, %lld)\n", static_cast<long long>(mask.window_left),
                    static_cast<long long>(mask.window_right));
      text += line;
    }
    if (o.max_logit) {
      text += "  max logit per head:";
      for (float x : max_logit) {
        std::snprintf(line, sizeof line, " %.4g", static_cast<double>(x));
        text += line;
      }
      text += "\n";
    }
    for (const ErrorStat& err : errors) {
      std::snprintf(line, sizeof line, "  %-4s max abs error %.3e  max rel error %.3e\n", err.name.c_str(),
                    err.max_abs, err.max_rel);
      text += line;
    }
    if (o.check) {
      std::snprintf(line, sizeof line, "check against single-rank attention: %s (tolerance %.1e)\n",
                    within ? "ok" : "FAILED", tolerance);
      text += line;
    }
    if (o.bench && cuda) {
      // One GPU shared by the ranks, exchanging device to device: the slowest rank's pass, wall time.
      std::snprintf(line, sizeof line, "bench: forward %.3f s wall (slowest rank), %.1f TFLOP/s on one GPU\n",
                    times.forward_wall_s, times.forward_wall_s > 0 ? flop / 1e12 / times.forward_wall_s : 0.0);
      text += line;
      if (o.backward) {
        std::snprintf(line, sizeof line, "       backward %.3f s wall, %.1f TFLOP/s\n", times.backward_wall_s,
                      times.backward_wall_s > 0 ? 2.5 * flop / 1e12 / times.backward_wall_s : 0.0);
        text += line;
      }
    } else if (o.bench) {
      std::snprintf(line, sizeof line,
                    "bench: %.3f s wall for %d ranks; rank CPU time forward %.3f s (%.1f GFLOP/s per CPU second)%s\n",
                    wall, s.cp, times.forward_cpu_s, times.forward_cpu_s > 0 ? flop / 1e9 / times.forward_cpu_s : 0.0,
                    o.backward ? "" : "");
      text += line;
      if (o.backward) {
        std::snprintf(line, sizeof line, "       backward %.3f s rank CPU time\n", times.backward_cpu_s);
        text += line;
      }
      if (o.check && single_s > 0) {
        std::snprintf(line, sizeof line, "       single-rank forward (all cores) %.3f s wall\n", single_s);
        text += line;
      }
    }
    std::cout << text << std::flush;
  }
  return within ? kExitOk : kExitFindings;
}

int run_attn(const AttnOptions& o) {
  std::optional<MpiRun> mpi;
  try {
    return run_attn_with(o, mpi);
  } catch (const Error& e) {
    if (!mpi) throw;
    // Printed here, before the ranks failing together leave together (MpiRun::failing): the first process to
    // exit makes the launcher stop the others, who must have said what happened to them by then.
    const std::string line = "hcp attn: error: " + printable(e.what()) + "\n";
    std::fwrite(line.data(), 1, line.size(), stderr);  // one write: the ranks share the launcher's stderr
    std::fflush(stderr);
    mpi->failing(e.what());
    return e.code() == Errc::internal ? kExitInternal : kExitInput;
  }
}

}  // namespace

std::function<int()> add_attn_command(CLI::App& app) {
  auto opts = std::make_shared<AttnOptions>();
  CLI::App* cmd = app.add_subcommand("attn", "Run context-parallel attention on in-process ranks (random inputs)");
  add_int_option(cmd, "--cp", opts->cp, "Context-parallel size: number of in-process ranks (default 2)");
  cmd->add_option("--hcp-sizes", opts->hcp_sizes, "Hierarchical sizes for a2a+p2p: a2a,p2p");
  cmd->add_option("--comm", opts->comm, "CP scheme: p2p, a2a, a2a+p2p or all_gather")
      ->check(CLI::IsMember({"p2p", "a2a", "a2a+p2p", "all_gather"}))
      ->capture_default_str();
  add_int_option(cmd, "--batch", opts->batch, "Batch size (default 1)");
  add_int_option(cmd, "--seq", opts->seq, "Full sequence length, divisible by 2 x cp (default 1024)");
  cmd->add_option("--seqlens", opts->seqlens,
                  "Packed documents (thd): their lengths, e.g. 512,3000,700; each padded to a multiple of 2 x cp "
                  "(replaces --seq; --batch 1)");
  cmd->add_option("--window", opts->window,
                  "Sliding window LEFT,RIGHT: a query at i sees keys i-LEFT .. i+RIGHT of its document (-1: "
                  "unbounded side)");
  add_int_option(cmd, "--heads", opts->heads, "Query heads (default 8)");
  add_int_option(cmd, "--kv-heads", opts->kv_heads, "Key/value heads (GQA; default: --heads)");
  add_int_option(cmd, "--head-dim", opts->head_dim, "Head dimension (default 128)");
  add_int_option(cmd, "--head-dim-v", opts->head_dim_v,
                 "V's head dimension where it differs from q's and k's (MLA, e.g. --head-dim 192 --head-dim-v 128); "
                 "out, dout and dv have it (default: --head-dim)");
  cmd->add_flag("--causal", opts->causal, "Causal mask");
  cmd->add_option("--dtype", opts->dtype, "Input dtype: fp32, bf16 or fp16")
      ->check(CLI::IsMember({"fp32", "bf16", "fp16"}))
      ->capture_default_str();
  cmd->add_option("--layout", opts->layout,
                  "How the full tensors are stored: bshd ([B, S, H, D]) or sbhd ([S, B, H, D], Transformer Engine's "
                  "and Megatron's default); each rank's own tensors are bshd (thd: --seqlens)")
      ->check(CLI::IsMember({"bshd", "sbhd"}))
      ->capture_default_str();
  cmd->add_option("--softmax", opts->softmax,
                  "Attention sinks (Transformer Engine's softmax_type): vanilla, off-by-one (a logit 0 in every "
                  "softmax) or learnable (one logit per head, drawn; --backward also gives its gradient)")
      ->check(CLI::IsMember({"vanilla", "off-by-one", "learnable"}))
      ->capture_default_str();
  cmd->add_option("--bias", opts->bias,
                  "Attention bias (Transformer Engine's post_scale_bias) in its shape: bhss, b1ss, 1hss, 11ss "
                  "([B|1, H|1, S, S]) or 111s ([1, 1, 1, S]), drawn; --backward also gives its gradient and --check "
                  "compares it (dbias). Not with --seqlens (as Transformer Engine)")
      ->check(CLI::IsMember({"none", "bhss", "b1ss", "1hss", "11ss", "111s"}))
      ->capture_default_str();
  cmd->add_option("--device", opts->device,
                  "Where the ranks compute: cpu, or cuda (all ranks on the current GPU; bf16/fp16, head dims multiples "
                  "of 8 up to 256)")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->capture_default_str();
  cmd->add_option("--backend", opts->backend,
                  "How the ranks run: inprocess (threads of this process) or mpi (one process per rank, started "
                  "by mpirun or srun with --cp processes)")
      ->check(CLI::IsMember({"inprocess", "mpi"}))
      ->capture_default_str();
  add_int_option(cmd, "--gpus-per-node", opts->gpus_per_node,
                 "Ranks per node for the layout's locality (default 8); shown in the group lines");
  cmd->add_option("--inject-fault", opts->fault,
                  "Testing (--backend mpi): RANK:STEP:KIND makes that rank fail at its STEP-th ring exchange - "
                  "kill (SIGKILL), hang (stop answering) or abort")
      ->group("Testing");
  cmd->add_flag("--backward", opts->backward, "Also run the backward pass");
  cmd->add_flag("--max-logit", opts->max_logit,
                "Also compute each head's largest logit over the batch (Transformer Engine's return_max_logit, what "
                "QK-clip reads); --check compares it");
  cmd->add_flag("--check", opts->check, "Compare with single-rank attention; exit 1 above tolerance");
  cmd->add_flag("--bench", opts->bench, "Report time and GFLOP/s");
  cmd->add_option("--format", opts->format, "Output format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  add_int_option(cmd, "--seed", opts->seed, "Random seed (default 1)");
  add_int_option(cmd, "--timeout-ms", opts->timeout_ms, "Communicator timeout (default 600000)");
  return [opts] { return run_attn(*opts); };
}

}  // namespace hcp::cli
