// The start-up every leader-elected role shares: its controllers start once the informer caches
// have synced and this replica leads, and a lost lease ends the process with exit status 1.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "koord/kube/leader_election.h"

namespace koord {
class Reactor;
}

namespace koord::app {

struct LeaderGateOptions {
  /// The role's name, which opens the gate's log lines ("<role>: the leader is ...").
  std::string role;
  /// False (--leader-elect=false): this replica leads from the start and its writes are not
  /// fenced.
  bool leader_elect = true;
  /// The Lease's namespace, name and timings. The gate sets the callbacks and the fence, and the
  /// identity when it is empty (leaderIdentity()).
  kube::LeaderElectionConfig election;
  /// How long one wait for the caches may block: a stop is noticed between two waits.
  std::chrono::milliseconds sync_poll{500};
};

/// What the role does at each step; all run on the gate's own thread, never on an io thread.
struct LeaderGateHooks {
  /// True once every informer cache has synced; may block for up to the given time.
  std::function<bool(std::chrono::milliseconds)> wait_for_sync;
  /// Once, when the caches have synced (readiness, state that needs the caches); optional.
  std::function<void()> on_synced;
  /// Once, synced and leading: starts the controllers. Not called when a stop comes first.
  std::function<void()> on_leading;
};

/// Used in this order by a role's main:
///   LeaderGate gate(reactor, client, options);   // before the controllers: they take writer()
///   gate.start(hooks);                           // after informers.start()
///   reactor.onShutdown([&] { gate.stopElection(); /* informers.stop(), ... */ });
///   int rc = gate.join(reactor.run());           // then stop the controllers and informers
/// The controllers write only while this replica leads: once the lease's renew deadline has
/// passed or leadership has ended, writer() refuses a write that was still queued instead of
/// sending it beside a successor's (see kube::LeadershipFence). Losing the lease ends the process
/// (as controller-runtime does), since a leader that lost it may already have a successor.
class LeaderGate {
 public:
  /// `reactor` and `client` must outlive the gate.
  LeaderGate(Reactor& reactor, kube::RestClient& client, LeaderGateOptions options);
  /// Joins the gate's thread if join() was not called (a start-up fault after start()).
  ~LeaderGate();
  LeaderGate(const LeaderGate&) = delete;
  LeaderGate& operator=(const LeaderGate&) = delete;

  /// The client the controllers write through: fenced on the lease when electing.
  kube::RestClient& writer();
  /// True once the caches have synced; before on_synced runs.
  bool synced() const;

  /// Starts the thread that waits for the caches, then campaigns for the lease (or leads at
  /// once). Throws std::invalid_argument for lease timings that cannot give safe leadership.
  void start(LeaderGateHooks hooks);
  /// Ends the campaign; returns at once on an io thread (a Reactor shutdown hook). Call it
  /// before stopping the informers.
  void stopElection();
  /// After the reactor has run: stops the elector (handing the lease back) and joins the gate's
  /// thread. Returns 1 when leadership was lost, `rc` otherwise.
  int join(int rc);

 private:
  void waitThenLead();

  Reactor& reactor_;
  kube::RestClient& client_;
  LeaderGateOptions options_;
  LeaderGateHooks hooks_;
  std::shared_ptr<kube::LeadershipFence> fence_;
  std::unique_ptr<kube::RestClient> fenced_client_;
  std::unique_ptr<kube::LeaderElector> elector_;
  std::atomic<bool> synced_{false};
  std::atomic<bool> leading_{false};
  std::atomic<bool> lost_leadership_{false};
  std::atomic<bool> abandoned_{false};  // the destructor ends the thread's waits
  std::thread thread_;
};

}  // namespace koord::app
