// The event recorder's pure parts: the Event it writes and the correlator's decisions (repeats,
// similar events, spam filter) against a FakeClock. The sending side is in tests/cluster.
#include "koord/kube/event_recorder.h"
#include "koord/kube/time.h"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <chrono>
#include <string>

using namespace std::chrono_literals;
using koord::FakeClock;
using namespace koord::kube;
namespace json = boost::json;

namespace {

const EventSource kSource{"koord-manager", "node-1"};

ObjectReference pod(const std::string& name) {
  return ObjectReference{"Pod", "v1", "team-a", name, "uid-" + name, "42", ""};
}

Event eventAt(const FakeClock& clock, const ObjectReference& obj, const std::string& reason,
              const std::string& message, EventType type = EventType::kWarning) {
  return makeEvent(obj, type, reason, message, kSource, clock.now());
}

}  // namespace

TEST_CASE("events: timestamps are RFC 3339 seconds in UTC", "[events]") {
  const std::chrono::system_clock::time_point t(1700000000s + 999ms);
  CHECK(formatTime(t) == "2023-11-14T22:13:20Z");
  CHECK(formatTime(std::chrono::system_clock::time_point(0s)) == "1970-01-01T00:00:00Z");
}

TEST_CASE("events: a first occurrence is named after the object and the time", "[events]") {
  const std::chrono::system_clock::time_point t(1700000000s + 5ns);
  Event e = makeEvent(pod("web-0"), EventType::kWarning, "Evicted", "too hot", kSource, t);
  CHECK(e.name == "web-0.17979cfe362a0005");  // 1700000000000000005 in hex
  CHECK(e.namespace_ == "team-a");
  CHECK(e.count == 1);
  CHECK(e.first_timestamp == t);
  CHECK(e.last_timestamp == t);

  ObjectReference node{"Node", "v1", "", "node-1", "uid-n", "", ""};
  Event cluster_scoped = makeEvent(node, EventType::kNormal, "Ready", "ok", kSource, t);
  CHECK(cluster_scoped.namespace_ == "default");
}

TEST_CASE("events: the JSON body carries the core/v1 fields", "[events]") {
  const std::chrono::system_clock::time_point t(1700000000s);
  ObjectReference obj = pod("web-0");
  obj.field_path = "spec.containers{app}";
  Event e = makeEvent(obj, EventType::kWarning, "Evicted", "too hot", kSource, t);
  e.count = 3;
  e.last_timestamp = t + 90s;
  json::value v = eventToJson(e);
  CHECK(v.at("apiVersion") == "v1");
  CHECK(v.at("kind") == "Event");
  CHECK(v.at("metadata").at("name") == json::value(e.name));
  CHECK(v.at("metadata").at("namespace") == "team-a");
  const auto& io = v.at("involvedObject");
  CHECK(io.at("kind") == "Pod");
  CHECK(io.at("namespace") == "team-a");
  CHECK(io.at("name") == "web-0");
  CHECK(io.at("uid") == "uid-web-0");
  CHECK(io.at("apiVersion") == "v1");
  CHECK(io.at("resourceVersion") == "42");
  CHECK(io.at("fieldPath") == "spec.containers{app}");
  CHECK(v.at("type") == "Warning");
  CHECK(v.at("reason") == "Evicted");
  CHECK(v.at("message") == "too hot");
  CHECK(v.at("count") == 3);
  CHECK(v.at("firstTimestamp") == "2023-11-14T22:13:20Z");
  CHECK(v.at("lastTimestamp") == "2023-11-14T22:14:50Z");
  CHECK(v.at("source").at("component") == "koord-manager");
  CHECK(v.at("source").at("host") == "node-1");
  CHECK(v.at("reportingComponent") == "koord-manager");
  CHECK(v.at("reportingInstance") == "node-1");

  json::value patch = eventRepeatPatch(e);
  CHECK(patch.as_object().size() == 3);
  CHECK(patch.at("count") == 3);
  CHECK(patch.at("lastTimestamp") == "2023-11-14T22:14:50Z");
  CHECK(patch.at("message") == "too hot");
}

TEST_CASE("correlator: identical events are one Event with a count", "[events]") {
  FakeClock clock;
  EventCorrelator c(clock);
  const auto t0 = clock.now();
  auto first = c.correlate(eventAt(clock, pod("a"), "Evicted", "too hot"));
  clock.advance(10s);
  auto second = c.correlate(eventAt(clock, pod("a"), "Evicted", "too hot"));
  clock.advance(10s);
  auto third = c.correlate(eventAt(clock, pod("a"), "Evicted", "too hot"));

  CHECK_FALSE(first.skip);
  CHECK_FALSE(third.skip);
  CHECK(first.key == second.key);
  CHECK(second.key == third.key);
  CHECK(first.event.count == 1);
  CHECK(second.event.count == 2);
  CHECK(third.event.count == 3);
  CHECK(third.event.name == first.event.name);  // the repeat patches the first Event
  CHECK(third.event.first_timestamp == t0);
  CHECK(third.event.last_timestamp == t0 + 20s);
  CHECK(third.event.message == "too hot");
}

TEST_CASE("correlator: any difference but the time makes a separate Event", "[events]") {
  FakeClock clock;
  EventCorrelator c(clock);
  auto base = c.correlate(eventAt(clock, pod("a"), "Evicted", "too hot"));
  clock.advance(1s);
  auto other_message = c.correlate(eventAt(clock, pod("a"), "Evicted", "too cold"));
  auto other_reason = c.correlate(eventAt(clock, pod("a"), "Killed", "too hot"));
  auto other_type = c.correlate(eventAt(clock, pod("a"), "Evicted", "too hot", EventType::kNormal));
  auto other_object = c.correlate(eventAt(clock, pod("b"), "Evicted", "too hot"));
  ObjectReference container = pod("a");
  container.field_path = "spec.containers{app}";
  auto other_field = c.correlate(eventAt(clock, container, "Evicted", "too hot"));
  for (const auto* r : {&other_message, &other_reason, &other_type, &other_object, &other_field}) {
    CHECK(r->key != base.key);
    CHECK(r->event.count == 1);
    CHECK(r->event.name != base.event.name);
  }
  auto again = c.correlate(eventAt(clock, pod("a"), "Evicted", "too hot"));
  CHECK(again.key == base.key);
  CHECK(again.event.count == 2);
}

TEST_CASE("correlator: similar events within 10 minutes are combined", "[events]") {
  FakeClock clock;
  EventCorrelator c(clock);
  std::vector<CorrelatedEvent> out;
  for (int i = 1; i <= 11; ++i) {
    out.push_back(c.correlate(eventAt(clock, pod("a"), "FailedSync", "try " + std::to_string(i))));
    clock.advance(30s);
  }
  // client-go's rule: the 10th distinct message within the window is the first combined one.
  for (int i = 0; i < 9; ++i) {
    CHECK(out[i].event.message == "try " + std::to_string(i + 1));
    CHECK(out[i].event.count == 1);
  }
  CHECK(out[9].event.message == "(combined from similar events): try 10");
  CHECK(out[9].event.count == 1);
  CHECK(out[10].event.message == "(combined from similar events): try 11");
  CHECK(out[10].event.count == 2);
  CHECK(out[10].key == out[9].key);
  CHECK(out[10].event.name == out[9].event.name);
  CHECK(out[10].event.first_timestamp == out[9].event.first_timestamp);

  // Another reason on the same object is counted apart.
  auto other = c.correlate(eventAt(clock, pod("a"), "Scheduled", "try 12"));
  CHECK(other.event.message == "try 12");
}

TEST_CASE("correlator: the similar-event count restarts after 10 quiet minutes", "[events]") {
  FakeClock clock;
  EventCorrelator c(clock);
  CorrelatedEvent last;
  for (int i = 1; i <= 10; ++i)
    last = c.correlate(eventAt(clock, pod("a"), "FailedSync", "try " + std::to_string(i)));
  REQUIRE(last.event.message == "(combined from similar events): try 10");

  clock.advance(10min + 1s);
  auto fresh = c.correlate(eventAt(clock, pod("a"), "FailedSync", "try 11"));
  CHECK(fresh.event.message == "try 11");
  CHECK(fresh.event.count == 1);
  for (int i = 12; i <= 19; ++i) {
    auto r = c.correlate(eventAt(clock, pod("a"), "FailedSync", "try " + std::to_string(i)));
    CHECK(r.event.message == "try " + std::to_string(i));
  }
  // The tenth distinct message of the new window combines again, into the same Event.
  auto combined = c.correlate(eventAt(clock, pod("a"), "FailedSync", "try 20"));
  CHECK(combined.event.message == "(combined from similar events): try 20");
  CHECK(combined.key == last.key);
  CHECK(combined.event.count == 2);
}

TEST_CASE("correlator: 25 events per object, then one per 5 minutes", "[events]") {
  FakeClock clock;
  EventCorrelator c(clock);
  for (int i = 1; i <= 25; ++i) {
    auto r = c.correlate(eventAt(clock, pod("a"), "Evicted", "too hot"));
    REQUIRE_FALSE(r.skip);
    REQUIRE(r.event.count == i);
  }
  auto over = c.correlate(eventAt(clock, pod("a"), "Evicted", "too hot"));
  CHECK(over.skip);
  CHECK(over.first_skip);
  auto over_again = c.correlate(eventAt(clock, pod("a"), "Other", "different"));
  CHECK(over_again.skip);  // the bucket is per source and object, whatever the event
  CHECK_FALSE(over_again.first_skip);

  // Another object, or another source, has its own bucket.
  CHECK_FALSE(c.correlate(eventAt(clock, pod("b"), "Evicted", "too hot")).skip);
  Event from_elsewhere = eventAt(clock, pod("a"), "Evicted", "too hot");
  from_elsewhere.source.host = "node-2";
  CHECK_FALSE(c.correlate(from_elsewhere).skip);

  clock.advance(5min - 1s);
  CHECK(c.correlate(eventAt(clock, pod("a"), "Evicted", "too hot")).skip);
  clock.advance(1s);
  auto refilled = c.correlate(eventAt(clock, pod("a"), "Evicted", "too hot"));
  CHECK_FALSE(refilled.skip);
  CHECK(refilled.event.count == 26);  // dropped events were not counted
  auto next = c.correlate(eventAt(clock, pod("a"), "Evicted", "too hot"));
  CHECK(next.skip);
  CHECK(next.first_skip);  // a new burst of drops
}

TEST_CASE("correlator: the repeat cache forgets the least recently used", "[events]") {
  FakeClock clock;
  EventCorrelatorOptions options;
  options.cache_size = 2;
  EventCorrelator c(clock, options);
  auto a = c.correlate(eventAt(clock, pod("a"), "R", "m"));
  c.correlate(eventAt(clock, pod("b"), "R", "m"));
  CHECK(c.correlate(eventAt(clock, pod("a"), "R", "m")).event.count == 2);  // a is now newest
  c.correlate(eventAt(clock, pod("c"), "R", "m"));                          // evicts b
  CHECK(c.correlate(eventAt(clock, pod("a"), "R", "m")).event.count == 3);
  CHECK(c.correlate(eventAt(clock, pod("b"), "R", "m")).event.count == 1);
  CHECK(a.event.count == 1);
}
