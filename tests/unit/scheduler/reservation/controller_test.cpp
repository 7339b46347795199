// The reservation lifecycle controller's decisions over one pass, and the writes they make.
#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include "catch_expected.h"

#include "cache/scheduler_cache.h"
#include "fixture.h"
#include "koord/core/metrics.h"
#include "reservation/reservation_controller.h"

using namespace reservation_test;
using koord::roles::scheduler::reservation::ControllerAction;
using koord::roles::scheduler::reservation::ControllerOptions;
using koord::roles::scheduler::reservation::ReservationController;
using std::chrono::hours;
using std::chrono::seconds;
using Clock = std::chrono::system_clock;

namespace {

struct FakeApi final : SchedulerApi {
  std::shared_ptr<const PodInfo> currentPod(const std::string&) const override { return nullptr; }
  void reportScheduled(const PodInfo&, const std::string&, const std::string&) override {}
  void reportFailure(const PodInfo&, const std::string&, std::string_view, const std::string&,
                     const std::string&) override {}
  std::vector<std::shared_ptr<const ReservationState>> reservations() const override { return all; }
  void patchReservationStatus(const apis::Reservation& r, boost::json::value patch,
                              ApiCallback done) override {
    patches.emplace_back(r.name, std::move(patch));
    done({});
  }
  void deleteReservation(const apis::Reservation& r, ApiCallback done) override {
    deleted.push_back(r.name);
    done({});
  }

  std::vector<std::shared_ptr<const ReservationState>> all;
  std::vector<std::pair<std::string, boost::json::value>> patches;
  std::vector<std::string> deleted;
};

struct Fixture {
  Fixture() : metrics(registry) { REQUIRE(cache.addNode(node("n1", 8000))); }

  void add(std::shared_ptr<apis::Reservation> r) {
    if (r->available())
      REQUIRE(cache.addReservation(infoOf(r)));
    api.all.push_back(std::make_shared<ReservationState>(stateOf(r)));
  }
  auto pass(Clock::time_point now, bool gc = true) {
    ReservationController c(api, cache, metrics, options);
    return c.syncOnce(now, gc);
  }
  const boost::json::object& status(std::size_t i) const {
    return api.patches.at(i).second.as_object().at("status").as_object();
  }

  koord::metrics::Registry registry;
  SchedulerMetrics metrics;
  SchedulerCache cache;
  FakeApi api;
  ControllerOptions options;
};

const Clock::time_point kCreated = Clock::time_point{} + hours(24 * 365 * 50);

}  // namespace

TEST_CASE("a reservation past its ttl or expires is Failed with reason Expired") {
  Fixture f;
  auto by_ttl = makeReservation("by-ttl", "n1", 1000);
  by_ttl->creation_timestamp = kCreated;
  by_ttl->ttl = seconds(30);
  auto by_expires = makeReservation("by-expires", "", 1000);
  by_expires->creation_timestamp = kCreated;
  by_expires->expires = kCreated + seconds(10);
  auto forever = makeReservation("forever", "", 1000);
  forever->creation_timestamp = kCreated;
  forever->ttl = seconds(0);
  auto young = makeReservation("young", "", 1000);
  young->creation_timestamp = kCreated;  // the 24 h default
  for (auto r : {by_ttl, by_expires, forever, young})
    f.add(r);

  auto actions = f.pass(kCreated + seconds(31));
  CHECK(actions.size() == 2);
  CHECK(actions.at("by-ttl") == ControllerAction::kExpire);
  CHECK(actions.at("by-expires") == ControllerAction::kExpire);
  REQUIRE(f.api.patches.size() == 2);
  for (std::size_t i = 0; i < 2; ++i) {
    CHECK(f.status(i).at("phase") == "Failed");
    const auto& ready = f.status(i).at("conditions").as_array().back().as_object();
    CHECK(ready.at("type") == "Ready");
    CHECK(ready.at("status") == "False");
    CHECK(ready.at("reason") == "Expired");
  }
  CHECK(f.pass(kCreated + hours(25)).at("young") == ControllerAction::kExpire);
}

TEST_CASE("a reservation whose node is gone is Failed") {
  Fixture f;
  auto r = makeReservation("r1", "n9", 1000);
  r->creation_timestamp = kCreated;
  f.api.all.push_back(std::make_shared<ReservationState>(stateOf(r)));
  CHECK(f.pass(kCreated + seconds(1)).at("r1") == ControllerAction::kNodeLost);
  CHECK(f.status(0).at("phase") == "Failed");
}

TEST_CASE("owners are written to the status; an allocate-once reservation then Succeeds") {
  Fixture f;
  auto once = makeReservation("once", "n1", 2000);
  once->creation_timestamp = kCreated;
  auto many = makeReservation("many", "n1", 2000);
  many->creation_timestamp = kCreated;
  many->allocate_once = false;
  f.add(once);
  f.add(many);
  CHECK(f.pass(kCreated + seconds(1)).empty());  // no owners yet, status already says so

  REQUIRE(f.cache.addPod(allocatedTo(owner("web-1", 500, "n1"), *once)));
  // web-2 also asks memory, which `many` does not keep: status.allocated leaves it out, so the
  // next resync finds the status true and writes nothing.
  auto web2 = owner("web-2", 700, "n1");
  web2->requests.memory = 1 << 30;
  REQUIRE(f.cache.addPod(allocatedTo(web2, *many)));
  auto actions = f.pass(kCreated + seconds(2));
  CHECK(actions.at("once") == ControllerAction::kSucceed);
  CHECK(actions.at("many") == ControllerAction::kSyncOwners);
  REQUIRE(f.api.patches.size() == 2);
  for (std::size_t i = 0; i < 2; ++i) {
    const auto& s = f.status(i);
    const bool is_once = f.api.patches[i].first == "once";
    CHECK(s.at("currentOwners").as_array().at(0).as_object().at("name") ==
          (is_once ? "web-1" : "web-2"));
    CHECK(s.at("allocated").as_object().at("cpu") == (is_once ? "500m" : "700m"));
    CHECK_FALSE(s.at("allocated").as_object().contains("memory"));
    if (is_once)
      CHECK(s.at("phase") == "Succeeded");
    else
      CHECK_FALSE(s.contains("phase"));
  }
  // The written status, read back: nothing left to write for `many`.
  auto synced = std::make_shared<apis::Reservation>(*many);
  synced->allocated["cpu"] = kube::Quantity::fromMilli(700);
  synced->current_owners.push_back({"", "", "default", "web-2", "uid-web-2"});
  f.api.all = {std::make_shared<ReservationState>(stateOf(synced))};
  CHECK(f.pass(kCreated + seconds(3)).empty());
}

TEST_CASE("finished reservations are deleted after gcDurationSeconds, unless gc is off") {
  Fixture f;
  f.options.gc_duration = seconds(60);
  auto done = makeReservation("done", "", 1000);
  done->creation_timestamp = kCreated;
  done->phase = apis::ReservationPhase::kSucceeded;
  done->conditions.push_back({"Ready", "False", "Succeeded", "", {}, kCreated + seconds(100)});
  f.add(done);
  CHECK(f.pass(kCreated + seconds(159)).empty());
  CHECK(f.pass(kCreated + seconds(161), false).empty());  // not a gc pass
  CHECK(f.pass(kCreated + seconds(161)).at("done") == ControllerAction::kDelete);
  CHECK(f.api.deleted == std::vector<std::string>{"done"});
}

TEST_CASE("the phase metrics follow each pass") {
  Fixture f;
  auto a = makeReservation("a", "n1", 1000);
  a->creation_timestamp = kCreated;
  f.add(a);
  auto p = makeReservation("p", "", 1000);
  p->creation_timestamp = kCreated;
  f.add(p);
  ReservationController c(f.api, f.cache, f.metrics, f.options);
  c.syncOnce(kCreated + seconds(1), false);
  const std::string text = f.registry.render();
  CHECK(text.find(R"(scheduler_reservation_status_phase{name="a",phase="Available"} 1)") !=
        std::string::npos);
  CHECK(text.find(R"(koord_scheduler_reservations{phase="Pending"} 1)") != std::string::npos);
  f.api.all.pop_back();
  c.syncOnce(kCreated + seconds(2), false);
  CHECK(f.registry.render().find(R"(name="p")") == std::string::npos);
}
