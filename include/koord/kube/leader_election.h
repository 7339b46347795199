// Leader election on a coordination.k8s.io/v1 Lease with client-go's semantics, so koord replicas
// and Koordinator's Go replicas can share one lock during a rolling migration.
#pragma once

#include <boost/json/value.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "koord/core/clock.h"
#include "koord/kube/rest_client.h"

namespace boost::asio {
class io_context;
}

namespace koord::kube {

/// How long this process may still write as the leader, asked before every write by a
/// RestClient::fenced() client. A leader is sure of the lease only until renew_deadline past the
/// start of its last successful renew (others wait lease_duration from when they saw it), so
/// the elector opens the fence until then on each renew and closes it before
/// on_stopped_leading. A write still queued when leadership ends (in a work queue, behind the
/// rate limiter) is then refused instead of sent, and a renew deadline that passes while the
/// elector's own timer is late closes the fence all the same. Thread-safe.
class LeadershipFence {
 public:
  /// `clock` must be the elector's: the deadlines are its monotonic time.
  explicit LeadershipFence(const Clock& clock = Clock::real()) : clock_(clock) {}

  /// The time left to write as the leader; zero when not leading or past the deadline.
  std::chrono::milliseconds remaining() const;
  /// Leading until `until` (monotonic); the elector's.
  void holdUntil(std::chrono::steady_clock::time_point until);
  /// Not leading (any more); the elector's.
  void release();

 private:
  const Clock& clock_;
  /// steady_clock ticks of the deadline; min() when released.
  std::atomic<std::chrono::steady_clock::rep> until_{
      std::chrono::steady_clock::duration::min().count()};
};

struct LeaderElectionConfig {
  std::string lease_namespace;
  std::string lease_name;
  /// Unique per replica (Koordinator uses hostname + "_" + a UUID).
  std::string identity;
  /// How long others wait after last seeing the record change before taking the lease.
  std::chrono::milliseconds lease_duration{15000};
  /// The leader gives up when no renew has succeeded for this long; must be under
  /// lease_duration so that it stops before anyone else can take over.
  std::chrono::milliseconds renew_deadline{10000};
  /// Between renews (exactly) and between acquire attempts (stretched by up to 1.2x more).
  std::chrono::milliseconds retry_period{2000};
  /// stop() hands the lease back (holder "", 1 s duration) so a successor need not wait.
  bool release_on_cancel = true;
  std::function<void()> on_started_leading;
  /// Once per on_started_leading: on lost leadership, or from stop() while leading.
  std::function<void()> on_stopped_leading;
  /// Each time the observed holder changes to a non-empty identity (ours included).
  std::function<void(const std::string&)> on_new_leader;
  /// Opened while leading, before on_started_leading, and closed on losing the lease or on
  /// stop(), before on_stopped_leading (see LeadershipFence). Optional; same Clock as the elector.
  std::shared_ptr<LeadershipFence> fence;
};

/// client-go's JitterFactor: acquire attempts wait retry_period x (1 + [0, 1.2)), and a renew
/// deadline at or under 1.2 x retry_period could pass between two healthy renews.
inline constexpr double kLeaderElectionJitterFactor = 1.2;

/// Throws std::invalid_argument naming the rule when the timings cannot give safe leadership
/// (lease_duration > renew_deadline > 1.2 x retry_period > 0) or a name is empty.
void validate(const LeaderElectionConfig& config);

/// The Lease spec fields leader election reads and writes (client-go's LeaderElectionRecord).
struct LeaderElectionRecord {
  std::string holder_identity;
  std::int64_t lease_duration_seconds = 0;
  std::optional<std::chrono::system_clock::time_point> acquire_time;
  std::optional<std::chrono::system_clock::time_point> renew_time;
  std::int64_t lease_transitions = 0;
};

/// A Lease's spec; missing or mistyped fields read as empty/zero, as client-go's decoding does.
LeaderElectionRecord recordFromLeaseSpec(const boost::json::value& spec);
/// The spec to PUT; absent times are left out.
boost::json::object leaseSpecFromRecord(const LeaderElectionRecord& record);

namespace detail {
struct ElectorState;
}

/// Campaigns for the Lease until it leads, renews it while leading, and stops for good when it
/// loses it: as client-go's Run returns after losing, a LeaderElector is single-use. After
/// on_stopped_leading the elector does nothing more; roles exit the process (Koordinator does),
/// and a replica that wants to campaign again makes a new LeaderElector.
///
/// Leadership ends when no renew has succeeded for renew_deadline (measured from the start of
/// the last successful attempt, so before the lease can expire for anyone else), or at once
/// when a renew finds another holder in the record. Other holders' records are judged by when
/// this process last saw the record change (its monotonic clock), never by the server's
/// renewTime, so clock skew between machines cannot hand the lease to two holders.
///
/// Everything runs on the io_context through one strand with the async RestClient verbs;
/// callbacks run there, serially, and must not block. The RestClient and the io_context must
/// outlive the LeaderElector. The Clock gives timestamps and observation times; the waits
/// themselves are real steady_timers.
class LeaderElector {
 public:
  /// Throws std::invalid_argument (see validate()).
  LeaderElector(RestClient& client, boost::asio::io_context& io, LeaderElectionConfig config,
                Clock& clock = Clock::real());
  /// stop().
  ~LeaderElector();
  LeaderElector(const LeaderElector&) = delete;
  LeaderElector& operator=(const LeaderElector&) = delete;

  /// Begins campaigning; a second call does nothing.
  void start();

  /// Ends the campaign; when leading and release_on_cancel, first PUTs the released record
  /// (holder "", leaseDurationSeconds 1, acquire/renew time now), then calls
  /// on_stopped_leading. Safe from any thread, any number of times.
  ///
  /// From a thread that is not running the io_context, stop() blocks until the release has
  /// finished and on_stopped_leading has run on an io thread, for at most 2 s (not at all when
  /// the io_context is stopped); if that time passes it calls on_stopped_leading itself, on
  /// the calling thread. Either way no callback runs once it has returned.
  ///
  /// From an io thread (a callback, a Reactor shutdown hook) it cannot wait without risking a
  /// deadlock: it returns at once, and the release and on_stopped_leading follow on the
  /// io_context, which keeps the io_context busy until they are done (a draining Reactor waits
  /// for them). No other callback runs after it has returned.
  void stop();

  bool isLeader() const;
  /// The holder identity in the last record seen ("" before the first read or when released).
  std::string observedLeader() const;

 private:
  std::shared_ptr<detail::ElectorState> state_;
};

}  // namespace koord::kube
