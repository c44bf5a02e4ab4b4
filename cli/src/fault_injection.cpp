#include "fault_injection.hpp"

#include <csignal>
#include <memory>
#include <thread>

#include "hcp/error.hpp"
#include "int_list.hpp"

namespace hcp::cli {
namespace {

// Counts the ring exchanges of the process (shared by the wrapper and every group split from it).
struct Counter {
  int exchanges = 0;
};

class FaultyCommunicator final : public Communicator {
 public:
  FaultyCommunicator(std::unique_ptr<Communicator> inner, FaultPlan plan, std::shared_ptr<Counter> counter)
      : inner_(std::move(inner)), plan_(std::move(plan)), counter_(std::move(counter)) {}

  int rank() const override { return inner_->rank(); }
  int size() const override { return inner_->size(); }
  bool device_memory() const override { return inner_->device_memory(); }
  bool in_process() const override { return inner_->in_process(); }

  Status post_send_recv(const void* send, size_t send_bytes, int dst, void* recv, size_t recv_bytes,
                        int src) override {
    if (++counter_->exchanges == plan_.step) {
      if (plan_.kind == "kill") std::raise(SIGKILL);
      if (plan_.kind == "hang") {
        for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
      }
      inner_->abort(Errc::comm, "fault injected at ring exchange " + std::to_string(plan_.step));
      return Status(Errc::comm, "fault injected at ring exchange " + std::to_string(plan_.step));
    }
    return inner_->post_send_recv(send, send_bytes, dst, recv, recv_bytes, src);
  }
  Status wait_send_recv() override { return inner_->wait_send_recv(); }
  Status all_to_all(const void* send, void* recv, size_t chunk_bytes) override {
    return inner_->all_to_all(send, recv, chunk_bytes);
  }
  Status all_gather(const void* send, void* recv, size_t chunk_bytes) override {
    return inner_->all_gather(send, recv, chunk_bytes);
  }
  Status reduce_scatter_sum(const float* send, float* recv, size_t count) override {
    return inner_->reduce_scatter_sum(send, recv, count);
  }
  Status barrier() override { return inner_->barrier(); }
  Status split(int color, int key, std::unique_ptr<Communicator>* out) override {
    std::unique_ptr<Communicator> child;
    HCP_TRY(inner_->split(color, key, &child));
    if (child) child = std::make_unique<FaultyCommunicator>(std::move(child), plan_, counter_);
    *out = std::move(child);
    return {};
  }
  void abort(Errc cause, std::string_view reason) override { inner_->abort(cause, reason); }

 private:
  std::unique_ptr<Communicator> inner_;
  FaultPlan plan_;
  std::shared_ptr<Counter> counter_;
};

}  // namespace

FaultPlan parse_fault(const std::string& text) {
  const size_t a = text.find(':'), b = a == std::string::npos ? a : text.find(':', a + 1);
  FaultPlan plan;
  if (b != std::string::npos) {
    const std::vector<int64_t> numbers = parse_int_list(text.substr(0, a) + "," + text.substr(a + 1, b - a - 1),
                                                        "--inject-fault");
    plan.rank = static_cast<int>(numbers[0]), plan.step = static_cast<int>(numbers[1]);
    plan.kind = text.substr(b + 1);
  }
  if (b == std::string::npos || plan.rank < 0 || plan.step < 1 ||
      (plan.kind != "kill" && plan.kind != "hang" && plan.kind != "abort"))
    throw Error(Errc::invalid_config, "--inject-fault must be RANK:STEP:KIND with STEP >= 1 and KIND kill, hang or "
                                      "abort, got '" + text + "'");
  return plan;
}

std::unique_ptr<Communicator> with_fault(std::unique_ptr<Communicator> inner, const FaultPlan& plan) {
  if (plan.rank != inner->rank()) return inner;
  return std::make_unique<FaultyCommunicator>(std::move(inner), plan, std::make_shared<Counter>());
}

}  // namespace hcp::cli
