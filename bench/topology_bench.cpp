// Topology speed for the large layout of the issue: world 131072, tp 8, pp 8, cp 16, sizes [2, 8].
// Targets: CP + hierarchical groups <= 3 ms, every group kind <= 50 ms, a per-rank query <= 1 us.
// bench/compare_topology.py runs this next to a Python transcription of Megatron's generator and prints ratios.
#include <benchmark/benchmark.h>

#include "hcp/topology.hpp"

namespace {

hcp::Topology large_layout() {
  hcp::ParallelConfig c;
  c.world_size = 131072;
  c.tp = 8;
  c.pp = 8;
  c.cp = 16;
  c.hcp_sizes = std::vector<int64_t>{2, 8};
  return hcp::Topology(c);
}

void BM_CpAndHierarchicalGroups(benchmark::State& state) {
  const hcp::Topology t = large_layout();
  for (auto _ : state) {
    hcp::GroupList cp = t.groups(hcp::GroupKind::cp);
    hcp::GroupList l0 = t.groups(hcp::GroupKind::hcp, 0);
    hcp::GroupList l1 = t.groups(hcp::GroupKind::hcp, 1);
    benchmark::DoNotOptimize(cp.ranks.data());
    benchmark::DoNotOptimize(l0.ranks.data());
    benchmark::DoNotOptimize(l1.ranks.data());
  }
  state.counters["groups"] = static_cast<double>(t.group_count(hcp::GroupKind::cp) +
                                                 t.group_count(hcp::GroupKind::hcp, 0) +
                                                 t.group_count(hcp::GroupKind::hcp, 1));
}
BENCHMARK(BM_CpAndHierarchicalGroups)->Unit(benchmark::kMillisecond);

void BM_AllGroupKinds(benchmark::State& state) {
  const hcp::Topology t = large_layout();
  int64_t groups = 0;
  for (auto _ : state) {
    groups = 0;
    for (hcp::GroupKind kind : hcp::kFlatKindsListed) {
      hcp::GroupList list = t.groups(kind);
      benchmark::DoNotOptimize(list.ranks.data());
      groups += static_cast<int64_t>(list.count());
    }
    for (int k = 0; k < t.num_levels(); ++k) {
      hcp::GroupList list = t.groups(hcp::GroupKind::hcp, k);
      benchmark::DoNotOptimize(list.ranks.data());
      groups += static_cast<int64_t>(list.count());
    }
  }
  state.counters["groups"] = static_cast<double>(groups);
}
BENCHMARK(BM_AllGroupKinds)->Unit(benchmark::kMillisecond);

// One rank's p2p (level 1) group: its index, its position and its 8 members, from coordinates.
void BM_PerRankQuery(benchmark::State& state) {
  const hcp::Topology t = large_layout();
  int64_t members[8];
  int64_t rank = 0;
  for (auto _ : state) {
    const hcp::Membership m = t.membership(rank, hcp::GroupKind::hcp, 1);
    t.group_of(rank, hcp::GroupKind::hcp, 1, members);
    benchmark::DoNotOptimize(m);
    benchmark::DoNotOptimize(members);
    rank = (rank + 7919) % 131072;
  }
}
BENCHMARK(BM_PerRankQuery)->Unit(benchmark::kNanosecond);

// Every kind and level for one rank (coordinates plus ten memberships).
void BM_PerRankAllKinds(benchmark::State& state) {
  const hcp::Topology t = large_layout();
  int64_t rank = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(t.coords(rank));
    for (hcp::GroupKind kind : hcp::kFlatKindsListed) benchmark::DoNotOptimize(t.membership(rank, kind));
    for (int k = 0; k < t.num_levels(); ++k) benchmark::DoNotOptimize(t.membership(rank, hcp::GroupKind::hcp, k));
    rank = (rank + 7919) % 131072;
  }
}
BENCHMARK(BM_PerRankAllKinds)->Unit(benchmark::kNanosecond);

void BM_ConstructAndValidate(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(large_layout());
}
BENCHMARK(BM_ConstructAndValidate)->Unit(benchmark::kNanosecond);

}  // namespace

BENCHMARK_MAIN();
