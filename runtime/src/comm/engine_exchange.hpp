// The base of the communicators that move an engine's device memory over a host-memory communicator (the
// in-process world): StagedCommunicator (through host buffers) and PeerCopyCommunicator (device to device). Both
// keep the inner communicator's matching and failure handling and add only the data movement; a failed copy aborts
// the world so that the peers stop waiting for this rank.
#pragma once

#include <memory>
#include <string>

#include "hcp/communicator.hpp"
#include "hcp/cp_engine.hpp"

namespace hcp {

class EngineExchange : public Communicator {
 public:
  // `inner` and `engine` must outlive this object, unless `owned` holds `inner`.
  EngineExchange(Communicator* inner, CpEngine* engine, std::unique_ptr<Communicator> owned)
      : inner_(inner), engine_(engine), owned_(std::move(owned)) {}

  int rank() const override { return inner_->rank(); }
  int size() const override { return inner_->size(); }
  bool device_memory() const override { return true; }
  bool in_process() const override { return inner_->in_process(); }
  Status barrier() override { return inner_->barrier(); }
  using Communicator::abort;
  void abort(Errc cause, std::string_view reason) override { inner_->abort(cause, reason); }

  // The split groups move data the same way.
  Status split(int color, int key, std::unique_ptr<Communicator>* out) override {
    std::unique_ptr<Communicator> inner;
    HCP_TRY(inner_->split(color, key, &inner));
    if (!inner) {
      out->reset();
      return {};
    }
    *out = rewrap(std::move(inner));
    return {};
  }

 protected:
  virtual std::unique_ptr<Communicator> rewrap(std::unique_ptr<Communicator> inner) = 0;

  Status copied(Status s) {
    if (!s.ok()) inner_->abort(s.code(), "device exchange failed: " + s.message());
    return s;
  }
  // A second post while one is pending: refused before the buffers the peer is reading are touched, and reported
  // as the inner communicator would (the world is aborted).
  Status refuse_if_posted() {
    if (!posted_) return {};
    const Status status(Errc::invalid_argument, "send/recv: an exchange is already posted");
    inner_->abort(status.code(), status.message());
    return status;
  }

  // For the destructors: an exchange still posted points the inner communicator (and peers) at this object's
  // buffers; waiting for it (it fails at once in a failed world) lets the peers' copies out of them end first.
  void settle_posted() {
    if (!posted_) return;
    posted_ = false;
    (void)inner_->wait_send_recv();
  }

  bool posted_ = false;  // between a successful post_send_recv and its wait_send_recv

  Communicator* inner_;
  CpEngine* engine_;

 private:
  std::unique_ptr<Communicator> owned_;
};

}  // namespace hcp
