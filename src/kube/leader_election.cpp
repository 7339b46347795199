#include "koord/kube/leader_election.h"

#include <fmt/format.h>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/json.hpp>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <random>
#include <stdexcept>
#include <thread>

#include "koord/core/duration.h"
#include "koord/core/log.h"
#include "koord/core/metrics.h"
#include "koord/kube/time.h"

namespace koord::kube {

namespace json = boost::json;
using std::chrono::milliseconds;
using std::chrono::steady_clock;
using std::chrono::system_clock;

void validate(const LeaderElectionConfig& c) {
  if (c.lease_namespace.empty() || c.lease_name.empty())
    throw std::invalid_argument("leader election: the Lease namespace and name are required");
  if (c.identity.empty())
    throw std::invalid_argument("leader election: the identity is required");
  if (c.retry_period.count() <= 0) {
    throw std::invalid_argument(fmt::format("leader election: retry period ({}) must be positive",
                                            formatGoDuration(c.retry_period)));
  }
  if (c.lease_duration <= c.renew_deadline) {
    throw std::invalid_argument(
        fmt::format("leader election: lease duration ({}) must be greater than the renew "
                    "deadline ({})",
                    formatGoDuration(c.lease_duration), formatGoDuration(c.renew_deadline)));
  }
  // Integer form of renew <= 1.2 x retry, so the boundary is exact.
  if (c.renew_deadline.count() * 10 <= c.retry_period.count() * 12) {
    throw std::invalid_argument(
        fmt::format("leader election: renew deadline ({}) must be greater than 1.2 x the retry "
                    "period ({})",
                    formatGoDuration(c.renew_deadline), formatGoDuration(c.retry_period)));
  }
}

std::chrono::milliseconds LeadershipFence::remaining() const {
  const steady_clock::time_point until{steady_clock::duration(until_.load())};
  const auto now = clock_.monotonicNow();
  if (until <= now)
    return milliseconds(0);
  return std::chrono::duration_cast<milliseconds>(until - now);
}

void LeadershipFence::holdUntil(steady_clock::time_point until) {
  until_.store(until.time_since_epoch().count());
}

void LeadershipFence::release() {
  until_.store(steady_clock::duration::min().count());
}

namespace {

std::int64_t intField(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  if (v == nullptr)
    return 0;
  if (v->is_int64())
    return v->get_int64();
  if (v->is_uint64() && v->get_uint64() <= static_cast<std::uint64_t>(INT64_MAX))
    return static_cast<std::int64_t>(v->get_uint64());
  return 0;
}

std::optional<system_clock::time_point> timeField(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  if (v == nullptr || !v->is_string())
    return std::nullopt;
  return parseTime(v->get_string());
}

// Writes the record's fields into `spec`, keeping any others the server or a newer client put
// there.
void writeRecord(json::object& spec, const LeaderElectionRecord& r) {
  spec["holderIdentity"] = r.holder_identity;
  spec["leaseDurationSeconds"] = r.lease_duration_seconds;
  if (r.acquire_time) {
    spec["acquireTime"] = formatMicroTime(*r.acquire_time);
  } else {
    spec.erase("acquireTime");
  }
  if (r.renew_time) {
    spec["renewTime"] = formatMicroTime(*r.renew_time);
  } else {
    spec.erase("renewTime");
  }
  spec["leaseTransitions"] = r.lease_transitions;
}

}  // namespace

LeaderElectionRecord recordFromLeaseSpec(const json::value& spec) {
  LeaderElectionRecord r;
  if (!spec.is_object())
    return r;
  const auto& o = spec.get_object();
  if (const auto* h = o.if_contains("holderIdentity"); h && h->is_string())
    r.holder_identity = h->get_string();
  r.lease_duration_seconds = intField(o, "leaseDurationSeconds");
  r.acquire_time = timeField(o, "acquireTime");
  r.renew_time = timeField(o, "renewTime");
  r.lease_transitions = intField(o, "leaseTransitions");
  return r;
}

json::object leaseSpecFromRecord(const LeaderElectionRecord& record) {
  json::object spec;
  writeRecord(spec, record);
  return spec;
}

namespace detail {

// "409 Conflict: message", or the message alone when no response came.
std::string describe(const ApiError& e) {
  if (e.code == 0)
    return e.message;
  return fmt::format("{} {}: {}", e.code, e.reason, e.message);
}

// A stop() from a non-io thread waits this long for the release and on_stopped_leading.
constexpr milliseconds kStopWait{2000};

// client-go's leader_election_master_status{name}: 1 while this process holds the lease named,
// 0 while it campaigns or after it lost it.
metrics::Gauge& masterStatus(const std::string& lease_name) {
  return metrics::Registry::global()
      .gauge("leader_election_master_status",
             "Gauge of if the reporting system is master of the relevant lease, 0 indicates "
             "backup, 1 indicates master. 'name' is the string used to identify the lease. Please "
             "make sure to group by name.",
             {"name"})
      .with({lease_name});
}

struct ElectorState : std::enable_shared_from_this<ElectorState> {
  enum class Phase { kIdle, kCampaigning, kLeading, kStopping, kFinished };

  ElectorState(RestClient& c, boost::asio::io_context& io_in, LeaderElectionConfig cfg, Clock& cl)
      : client(c),
        io(io_in),
        strand(boost::asio::make_strand(io_in)),
        config(std::move(cfg)),
        clock(cl),
        ref{"coordination.k8s.io", "v1", "leases", config.lease_namespace, config.lease_name, ""},
        key(config.lease_namespace + "/" + config.lease_name),
        retry_timer(strand),
        deadline_timer(strand),
        observed_time(cl.monotonicNow()) {}

  // ---- everything below up to "cross-thread" runs on the strand ----

  void attempt() {
    if (phase != Phase::kCampaigning && phase != Phase::kLeading)
      return;
    const auto started = clock.monotonicNow();
    busy = true;
    client.get(ref, onStrand([started](ElectorState& s, ApiResult<json::value> r) {
                 s.onGet(std::move(r), started);
               }));
  }

  // Moves a RestClient answer onto the strand: it may arrive on any io thread.
  template <typename F>
  RestClient::Callback onStrand(F f) {
    return [self = shared_from_this(), f = std::move(f)](ApiResult<json::value> r) mutable {
      boost::asio::post(self->strand, [self, f = std::move(f), r = std::move(r)]() mutable {
        self->busy = false;
        if (self->phase == Phase::kStopping) {
          // Any lease in the answer says what we hold now, hence whether to release it.
          if (r && r->is_object() && r->get_object().contains("spec"))
            self->observeLease(*r);
          return self->continueStop();
        }
        if (self->phase == Phase::kFinished)
          return;
        f(*self, std::move(r));
      });
    };
  }

  void onGet(ApiResult<json::value> r, steady_clock::time_point started) {
    if (!r) {
      if (isNotFound(r.error()))
        return createLease(started);
      return attemptFailed("cannot read the lease", r.error());
    }
    if (!r->is_object()) {
      ApiError e;
      e.message = "the lease is not a JSON object";
      return attemptFailed("cannot read the lease", e);
    }
    lease = std::move(*r);
    const json::value* spec_ptr = lease.get_object().if_contains("spec");
    const json::value spec = spec_ptr != nullptr ? *spec_ptr : json::value();
    const auto now = clock.monotonicNow();
    if (spec != observed_spec) {
      observed_spec = spec;
      observed_time = now;
    }
    const LeaderElectionRecord old = recordFromLeaseSpec(spec);
    observeHolder(old.holder_identity);
    const bool ours = old.holder_identity == config.identity;
    const auto valid_for = old.lease_duration_seconds > 0
                               ? milliseconds(std::chrono::seconds(old.lease_duration_seconds))
                               : config.lease_duration;
    if (!old.holder_identity.empty() && !ours) {
      // Someone took it while we led: two leaders must not overlap, so give up at once rather
      // than wait out the renew deadline as client-go would.
      if (phase == Phase::kLeading)
        return lose(fmt::format("the lease is now held by {:?}", old.holder_identity));
      if (observed_time + valid_for > now) {
        KOORD_VLOG(4, "lease {} is held by {:?}; {} does not take it yet", key, old.holder_identity,
                   config.identity);
        // Try again when it would expire if that comes before the jittered retry: a dead
        // leader is replaced lease_duration after its last renew was seen, not up to 2.2 retry
        // periods later.
        return scheduleNext(
            std::chrono::duration_cast<milliseconds>(observed_time + valid_for - now) +
            milliseconds(10));
      }
    }
    LeaderElectionRecord next = ownRecord();
    if (ours) {
      next.acquire_time = old.acquire_time;
      next.lease_transitions = old.lease_transitions;
    } else {
      next.lease_transitions = old.lease_transitions + 1;
    }
    json::value body = lease;
    json::value& spec_out = body.get_object()["spec"];
    if (!spec_out.is_object())
      spec_out = json::object();
    writeRecord(spec_out.get_object(), next);
    busy = true;
    client.update(ref, std::move(body),
                  onStrand([started](ElectorState& s, ApiResult<json::value> w) {
                    s.onWrite(std::move(w), started);
                  }));
  }

  void createLease(steady_clock::time_point started) {
    json::object body{
        {"apiVersion", "coordination.k8s.io/v1"},
        {"kind", "Lease"},
        {"metadata", {{"name", config.lease_name}, {"namespace", config.lease_namespace}}},
        {"spec", leaseSpecFromRecord(ownRecord())}};
    auto collection = ref;
    collection.name.clear();
    busy = true;
    client.create(collection, std::move(body),
                  onStrand([started](ElectorState& s, ApiResult<json::value> w) {
                    s.onWrite(std::move(w), started);
                  }));
  }

  // A record naming us, acquired and renewed now; transitions as for a fresh lease.
  LeaderElectionRecord ownRecord() const {
    LeaderElectionRecord r;
    r.holder_identity = config.identity;
    r.lease_duration_seconds = std::max<std::int64_t>(
        1, std::chrono::duration_cast<std::chrono::seconds>(config.lease_duration).count());
    r.acquire_time = clock.now();
    r.renew_time = r.acquire_time;
    return r;
  }

  void observeLease(const json::value& written) {
    lease = written;
    observed_spec = written.get_object().at("spec");
    observed_time = clock.monotonicNow();
    observeHolder(recordFromLeaseSpec(observed_spec).holder_identity);
  }

  void onWrite(ApiResult<json::value> r, steady_clock::time_point started) {
    if (!r) {
      if ((isConflict(r.error()) || isAlreadyExists(r.error())) && phase != Phase::kLeading) {
        KOORD_VLOG(2, "lease {}: {} lost the race to another candidate: {}", key, config.identity,
                   r.error().message);
        return scheduleNext();
      }
      return attemptFailed("cannot write the lease", r.error());
    }
    if (!r->is_object() || !r->get_object().contains("spec")) {
      ApiError e;
      e.message = "the written lease has no spec";
      return attemptFailed("cannot write the lease", e);
    }
    observeLease(*r);
    last_success_start = started;
    // Before on_started_leading: the controllers it starts write through this fence.
    if (config.fence)
      config.fence->holdUntil(started + config.renew_deadline);
    if (phase != Phase::kLeading) {
      phase = Phase::kLeading;
      {
        std::lock_guard lock(mu);
        leading = true;
      }
      masterStatus(config.lease_name).set(1);
      KOORD_LOG_INFO("became leader of lease {} as {}", key, config.identity);
      runCallback([this] {
        started_called = true;
        if (config.on_started_leading)
          config.on_started_leading();
      });
      if (phase != Phase::kLeading)
        return;  // the callback called stop()
    } else {
      KOORD_VLOG(5, "renewed lease {} as {}", key, config.identity);
    }
    armDeadline();
    scheduleNext();
  }

  void attemptFailed(const char* what, const ApiError& e) {
    if (phase == Phase::kLeading) {
      KOORD_LOG_WARNING("lease {}: {} failed to renew: {}: {}", key, config.identity, what,
                        describe(e));
      if (clock.monotonicNow() - last_success_start >= config.renew_deadline)
        return lose("no renew succeeded within the renew deadline");
    } else {
      KOORD_LOG_WARNING("lease {}: {} failed to acquire: {}: {}", key, config.identity, what,
                        describe(e));
    }
    scheduleNext();
  }

  // A leader renews every retry_period exactly; a candidate waits retry_period x (1 + [0, 1.2))
  // so that candidates started together spread out (client-go's JitterUntil).
  void scheduleNext(std::optional<milliseconds> not_later = std::nullopt) {
    milliseconds delay = config.retry_period;
    if (phase != Phase::kLeading) {
      std::uniform_real_distribution<double> jitter(0.0, kLeaderElectionJitterFactor);
      delay += milliseconds(static_cast<std::int64_t>(
          static_cast<double>(config.retry_period.count()) * jitter(rng)));
    }
    if (not_later && *not_later < delay)
      delay = *not_later;
    retry_timer.expires_after(delay);
    retry_timer.async_wait([self = shared_from_this()](boost::system::error_code ec) {
      if (!ec)
        self->attempt();
    });
  }

  // The deadline runs apart from the renew chain so that a request hanging past it cannot keep
  // a stale leader going. It is measured from when the last successful attempt began: the
  // write landed after that, so others' lease_duration runs out later still.
  void armDeadline() {
    const auto remaining = config.renew_deadline - (clock.monotonicNow() - last_success_start);
    const std::uint64_t generation = ++deadline_generation;
    deadline_timer.expires_after(remaining);
    deadline_timer.async_wait(
        [self = shared_from_this(), generation](boost::system::error_code ec) {
          // A wait that had already completed when the timer was re-armed still arrives without
          // an error; the generation tells it apart.
          if (ec || generation != self->deadline_generation || self->phase != Phase::kLeading)
            return;
          self->lose("no renew succeeded within the renew deadline");
        });
  }

  void observeHolder(const std::string& holder) {
    {
      std::lock_guard lock(mu);
      observed_holder = holder;
    }
    if (holder == reported_leader)
      return;
    reported_leader = holder;
    if (holder.empty())
      return;
    KOORD_VLOG(1, "lease {}: new leader {:?}", key, holder);
    runCallback([this, &holder] {
      if (config.on_new_leader)
        config.on_new_leader(holder);
    });
  }

  void closeFence() {
    if (config.fence)
      config.fence->release();
  }

  void lose(const std::string& why) {
    closeFence();  // before anything else: writes stop first
    phase = Phase::kFinished;
    retry_timer.cancel();
    deadline_timer.cancel();
    {
      std::lock_guard lock(mu);
      leading = false;
    }
    masterStatus(config.lease_name).set(0);
    KOORD_LOG_INFO("lost leadership of lease {} as {}: {}", key, config.identity, why);
    runStoppedCallback();
    markFinished();
  }

  void beginStop() {
    if (phase == Phase::kFinished || phase == Phase::kStopping)
      return;
    closeFence();
    phase = Phase::kStopping;
    retry_timer.cancel();
    deadline_timer.cancel();
    if (!busy)
      continueStop();
    // else the answer in flight calls continueStop(): it may change what we hold.
  }

  void continueStop() {
    const LeaderElectionRecord held = recordFromLeaseSpec(observed_spec);
    if (!config.release_on_cancel || held.holder_identity != config.identity ||
        !lease.is_object()) {
      return finishStop();
    }
    // client-go's release: nobody holds it, and it expires one second after anyone sees it.
    LeaderElectionRecord released;
    released.lease_duration_seconds = 1;
    released.acquire_time = clock.now();
    released.renew_time = released.acquire_time;
    released.lease_transitions = held.lease_transitions;
    json::value body = lease;
    json::value& spec = body.get_object()["spec"];
    if (!spec.is_object())
      spec = json::object();
    writeRecord(spec.get_object(), released);
    busy = true;
    client.update(ref, std::move(body),
                  [self = shared_from_this()](ApiResult<json::value> r) mutable {
                    boost::asio::post(self->strand, [self, r = std::move(r)] {
                      self->busy = false;
                      if (!r) {
                        KOORD_LOG_WARNING("lease {}: {} could not release it: {}", self->key,
                                          self->config.identity, describe(r.error()));
                      } else {
                        KOORD_LOG_INFO("released lease {} as {}", self->key, self->config.identity);
                      }
                      self->finishStop();
                    });
                  });
  }

  void finishStop() {
    if (phase == Phase::kFinished)
      return;
    closeFence();
    phase = Phase::kFinished;
    bool was_leading;
    {
      std::lock_guard lock(mu);
      was_leading = leading;
      leading = false;
    }
    if (was_leading) {
      masterStatus(config.lease_name).set(0);
      KOORD_LOG_INFO("stopped leading lease {} as {}", key, config.identity);
    }
    runStoppedCallback();
    markFinished();
  }

  void markFinished() {
    std::lock_guard lock(mu);
    finished = true;
    finished_cv.notify_all();
  }

  // ---- callbacks: a gate that stop() can close, waiting out one that is running ----

  template <typename F>
  void runCallback(F f) {
    std::lock_guard lock(cb_mu);
    if (others_closed)
      return;
    callback_thread = std::this_thread::get_id();
    f();
    callback_thread = std::thread::id();
  }

  // on_stopped_leading once per on_started_leading, whoever gets here first.
  void runStoppedCallback() {
    std::lock_guard lock(cb_mu);
    if (all_closed)
      return;
    callStoppedLocked();
  }

  // cb_mu held.
  void callStoppedLocked() {
    if (!started_called || stopped_called)
      return;
    stopped_called = true;
    callback_thread = std::this_thread::get_id();
    if (config.on_stopped_leading)
      config.on_stopped_leading();
    callback_thread = std::thread::id();
  }

  // Runs `f` with cb_mu held, unless this thread already holds it (stop() from a callback).
  template <typename F>
  void withGate(F f) {
    if (callback_thread.load() == std::this_thread::get_id()) {
      f();
      return;
    }
    std::lock_guard lock(cb_mu);
    f();
  }

  RestClient& client;
  boost::asio::io_context& io;
  boost::asio::strand<boost::asio::io_context::executor_type> strand;
  const LeaderElectionConfig config;
  Clock& clock;
  const ResourceRef ref;
  const std::string key;

  // Strand only.
  Phase phase = Phase::kIdle;
  bool busy = false;  // a request is in flight
  boost::asio::steady_timer retry_timer;
  boost::asio::steady_timer deadline_timer;
  std::uint64_t deadline_generation = 0;
  std::mt19937_64 rng{std::random_device{}()};
  json::value lease;          // the last Lease read or written (its resourceVersion for PUT)
  json::value observed_spec;  // the last spec seen ...
  steady_clock::time_point observed_time;  // ... and when it last changed, by our clock
  steady_clock::time_point last_success_start;
  std::string reported_leader;

  // ---- cross-thread ----
  mutable std::mutex mu;
  bool leading = false;          // under mu
  std::string observed_holder;   // under mu
  bool start_requested = false;  // under mu
  bool stop_requested = false;   // under mu
  bool finished = false;         // under mu
  std::condition_variable finished_cv;

  std::mutex cb_mu;
  bool others_closed = false;   // under cb_mu: no more on_started_leading / on_new_leader
  bool all_closed = false;      // under cb_mu: no on_stopped_leading either
  bool started_called = false;  // under cb_mu
  bool stopped_called = false;  // under cb_mu
  std::atomic<std::thread::id> callback_thread{};
};

}  // namespace detail

LeaderElector::LeaderElector(RestClient& client, boost::asio::io_context& io,
                             LeaderElectionConfig config, Clock& clock) {
  validate(config);
  state_ = std::make_shared<detail::ElectorState>(client, io, std::move(config), clock);
}

LeaderElector::~LeaderElector() {
  stop();
}

void LeaderElector::start() {
  {
    std::lock_guard lock(state_->mu);
    if (state_->start_requested || state_->stop_requested)
      return;
    state_->start_requested = true;
  }
  KOORD_LOG_INFO("attempting to acquire lease {} as {}", state_->key, state_->config.identity);
  boost::asio::post(state_->strand, [s = state_] {
    if (s->phase != detail::ElectorState::Phase::kIdle)
      return;
    s->phase = detail::ElectorState::Phase::kCampaigning;
    detail::masterStatus(s->config.lease_name).set(0);
    s->attempt();
  });
}

void LeaderElector::stop() {
  auto& s = *state_;
  const bool in_callback = s.callback_thread.load() == std::this_thread::get_id();
  // Writes stop now, not once the strand gets to beginStop(): the lease may be handed back
  // before then.
  s.closeFence();
  {
    std::lock_guard lock(s.mu);
    if (!s.stop_requested) {
      s.stop_requested = true;
      boost::asio::post(s.strand, [st = state_] { st->beginStop(); });
    }
  }
  s.withGate([&] { s.others_closed = true; });
  // Inside a callback, or on an io thread, waiting could deadlock: the release and
  // on_stopped_leading follow on the io_context.
  if (in_callback || s.io.get_executor().running_in_this_thread())
    return;
  bool done = false;
  if (!s.io.stopped()) {
    std::unique_lock lock(s.mu);
    done = s.finished_cv.wait_for(lock, detail::kStopWait, [&] { return s.finished; });
  }
  std::lock_guard gate(s.cb_mu);
  s.all_closed = true;
  if (!done) {
    {
      std::lock_guard lock(s.mu);
      s.leading = false;
    }
    if (s.started_called && !s.stopped_called) {
      KOORD_LOG_WARNING("lease {}: {} stops leading without a finished release ({} passed)", s.key,
                        s.config.identity, formatGoDuration(detail::kStopWait));
    }
    s.callStoppedLocked();
  }
}

bool LeaderElector::isLeader() const {
  std::lock_guard lock(state_->mu);
  return state_->leading;
}

std::string LeaderElector::observedLeader() const {
  std::lock_guard lock(state_->mu);
  return state_->observed_holder;
}

}  // namespace koord::kube
