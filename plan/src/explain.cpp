#include "explain.hpp"

#include <cmath>
#include <cstdio>
#include <vector>

// GCC 12 warns wrongly about overlapping copies in `"literal" + std::string` chains (GCC bug 105329).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wrestrict"
#endif

namespace hcp::plan {
namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

const char* link(bool in_node) { return in_node ? "NVLink" : "the network"; }

// The terms of a step's time, by name, per token a GPU trains (layouts differ in tokens per GPU and step).
struct Term {
  const char* what;
  double seconds;
};
std::vector<Term> terms(const Candidate& c, const PlanInput& in) {
  const Estimate& e = c.estimate;
  const double layers = static_cast<double>(in.model.layers) / static_cast<double>(c.layout.pp);
  const double tokens = e.tokens_per_s * e.step_s;  // a GPU's tokens per step
  const double per = static_cast<double>(e.microbatches) * layers / tokens;
  return {{"attention compute", e.attention_s * per},
          {"GEMM compute", e.gemm_s * per},
          {"tensor-parallel exchanges", e.tp_s * per},
          {"all-to-all", e.a2a_s * per},
          {"exposed ring transfer", e.ring_exposed_s * per},
          {"K/V all-gather", e.gather_s * per},
          {"pipeline bubble", static_cast<double>(c.layout.pp - 1) * layers * e.layer_s / tokens}};
}

std::string us(double seconds) { return fmt("%.1f us", seconds * 1e6); }

}  // namespace

std::string ms(double seconds) { return fmt(seconds < 0.01 ? "%.3f ms" : "%.1f ms", seconds * 1e3); }
std::string mib(double bytes) { return fmt("%.1f MiB", bytes / 1048576.0); }
std::string pct(double fraction) { return fmt("%.0f%%", 100.0 * fraction); }

std::string explain_candidate(const PlanInput& in, const Candidate& c) {
  const Estimate& e = c.estimate;
  const Layout& l = c.layout;
  std::string s;
  // Appended piece by piece: GCC 12 warns wrongly (-Wrestrict) on chains that start with a literal.
  if (l.cp == 1) {
    s += "no CP exchange";
  } else if (l.comm == CpComm::all_gather) {
    s += "K/V all-gather over ";
    s += link(e.ring_in_node);
    s += ", " + ms(e.gather_s) + " not overlapped";
  } else {
    if (l.a2a > 1) {
      s += "a2a ";
      s += std::to_string(l.a2a);
      s += " over ";
      s += link(e.a2a_in_node);
      s += ": " + ms(e.a2a_s) + " not overlapped";
      if (e.kv_replication > 1) {
        s += " (KV heads copied ";
        s += std::to_string(e.kv_replication);
        s += "x)";
      }
    }
    if (l.ring > 1) {
      if (!s.empty()) s += "; ";
      s += "ring of ";
      s += std::to_string(l.ring);
      s += " over ";
      s += link(e.ring_in_node);
      s += ": each step's " + mib(e.ring_step_bytes) + " K/V transfer takes " + ms(e.ring_step_transfer_s) +
           " against " + ms(e.ring_step_compute_s) + " of compute, " + pct(e.ring_hidden) +
           " of the ring's transfer hidden";
    }
  }
  s += "; attention " + pct(e.attention_s / e.layer_s) + " of the layer's " + ms(e.layer_s);
  if (!e.fits)
    s += "; does not fit: needs " + fmt("%.1f", e.memory_gib) + " GiB of " +
         fmt("%.1f", in.cluster.gpu.memory_gib * in.efficiency.memory) + " usable";
  return s;
}

std::string explain_verdict(const PlanResult& r) {
  if (r.ranked.empty()) return "no layout passes the rules: see the rejected list";
  const Candidate& best = r.ranked.front();
  if (!best.estimate.fits)
    return "no layout fits in memory; the closest, " + best.layout.describe() + ", needs " +
           fmt("%.1f", best.estimate.memory_gib) + " GiB a GPU" +
           (r.input.fixed.full_recompute ? "; more GPUs, or a shorter sequence, are needed"
                                         : "; try full activation recompute (--recompute full) or more GPUs");
  std::string s = best.layout.describe() + " wins: estimated MFU " + pct(best.estimate.mfu) + ", " +
                  fmt("%.0f", best.estimate.tokens_per_s) + " tokens/s a GPU (" + best.why + ")";
  if (r.ranked.size() > 1) {
    const Candidate& next = r.ranked[1];
    if (!next.estimate.fits) {
      s += ". Every other layout runs out of memory";
    } else {
      // The term that costs the runner-up most against the winner.
      const std::vector<Term> a = terms(best, r.input), b = terms(next, r.input);
      size_t worst = 0;
      for (size_t i = 1; i < a.size(); ++i)
        if (b[i].seconds - a[i].seconds > b[worst].seconds - a[worst].seconds) worst = i;
      const double slower = best.estimate.mfu / next.estimate.mfu - 1.0;
      s += ". Next: " + next.layout.describe() + ", " + fmt("%.1f%%", 100.0 * slower) + " slower";
      if (slower < 0.005)
        s += ": too close for the model to separate";
      else
        s += ", mostly " + std::string(a[worst].what) + " (" + us(b[worst].seconds) + " against " +
             us(a[worst].seconds) + " a token)";
    }
  }
  // The pure ring over the same CP size, when it is not the winner: the usual first try.
  if (best.layout.cp > 1 && best.layout.comm != CpComm::p2p)
    for (const Candidate& c : r.ranked)
      if (c.layout.comm == CpComm::p2p && c.layout.cp == best.layout.cp && c.layout.tp == best.layout.tp &&
          c.layout.pp == best.layout.pp) {
        s += ". Pure p2p over ";
        s += std::to_string(c.layout.cp);
        s += " ranks: " + c.why;
        break;
      }
  return s;
}

}  // namespace hcp::plan
