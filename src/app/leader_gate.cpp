#include "koord/app/leader_gate.h"

#include <utility>

#include "koord/app/leader_election_flags.h"
#include "koord/core/log.h"
#include "koord/core/reactor.h"
#include "koord/kube/rest_client.h"

namespace koord::app {

LeaderGate::LeaderGate(Reactor& reactor, kube::RestClient& client, LeaderGateOptions options)
    : reactor_(reactor),
      client_(client),
      options_(std::move(options)),
      fence_(std::make_shared<kube::LeadershipFence>()) {
  if (options_.leader_elect)
    fenced_client_ = client_.fenced([fence = fence_] { return fence->remaining(); });
}

LeaderGate::~LeaderGate() {
  abandoned_ = true;
  if (thread_.joinable())
    thread_.join();
}

kube::RestClient& LeaderGate::writer() {
  return fenced_client_ ? *fenced_client_ : client_;
}

bool LeaderGate::synced() const {
  return synced_;
}

void LeaderGate::start(LeaderGateHooks hooks) {
  hooks_ = std::move(hooks);
  // The caches are waited for off the io threads: informers fill them on the io threads.
  thread_ = std::thread([this] { waitThenLead(); });
  if (!options_.leader_elect) {
    leading_ = true;
    return;
  }
  kube::LeaderElectionConfig le = std::move(options_.election);
  if (le.identity.empty())
    le.identity = leaderIdentity();
  le.on_started_leading = [this] { leading_ = true; };
  le.fence = fence_;
  le.on_stopped_leading = [this] {
    if (!reactor_.stopping()) {
      KOORD_LOG_ERROR("{}: leader election lost, exiting", options_.role);
      lost_leadership_ = true;
      reactor_.requestStop();
    }
  };
  le.on_new_leader = [role = options_.role](const std::string& id) {
    KOORD_LOG_INFO("{}: the leader is {}", role, id);
  };
  elector_ = std::make_unique<kube::LeaderElector>(client_, reactor_.context(), std::move(le));
  elector_->start();
}

void LeaderGate::waitThenLead() {
  bool synced = false;
  while (!reactor_.stopping() && !abandoned_) {
    if (!synced && hooks_.wait_for_sync(options_.sync_poll)) {
      synced = true;
      synced_ = true;
      if (hooks_.on_synced)
        hooks_.on_synced();
      KOORD_LOG_INFO("{}: informer caches synced", options_.role);
    }
    if (synced && leading_) {
      if (!reactor_.stopping())
        hooks_.on_leading();
      return;
    }
    if (synced)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

void LeaderGate::stopElection() {
  if (elector_)
    elector_->stop();
}

int LeaderGate::join(int rc) {
  stopElection();
  if (thread_.joinable())
    thread_.join();
  return lost_leadership_ ? 1 : rc;
}

}  // namespace koord::app
