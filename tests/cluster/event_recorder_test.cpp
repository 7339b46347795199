// koord::kube::EventRecorder against the real apiserver that cluster.sh starts: repeats counted on
// one Event, a new message a new Event, an Event deleted under the recorder written again; and
// against a port where nothing listens: transport retries and the bounded backlog.
#include <fmt/format.h>
#include <boost/asio/io_context.hpp>
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cluster_api.h"
#include "cluster_env.h"
#include "koord/core/log.h"
#include "koord/kube/event_recorder.h"
#include "koord/kube/rest_client.h"

using namespace std::chrono_literals;
namespace json = boost::json;
using koord::testing::ok;
using koord::testing::str;
using koord::testing::TestNamespace;
using koord::testing::tokenConfig;
using koord::testing::uniqueName;
using namespace koord::kube;
using Api = koord::testing::KubeApi;
using koord::testing::named;
using namespace koord::testing::resources;

namespace {

// The Events about `object` in `ns` that `component` wrote.
std::vector<json::value> eventsAbout(RestClient& api, const std::string& ns,
                                     const std::string& object, const std::string& component) {
  ListOptions options;
  options.field_selector = "involvedObject.name=" + object;
  auto list = ok(api.listSync(named(kEvents, "", ns), options), "list");
  std::vector<json::value> out;
  for (const auto& item : list.at("items").as_array()) {
    if (str(item, {"source", "component"}) == component)
      out.push_back(item);
  }
  return out;
}

const json::value* withMessage(const std::vector<json::value>& events, const std::string& msg) {
  for (const auto& e : events) {
    if (str(e, {"message"}) == msg)
      return &e;
  }
  return nullptr;
}

std::int64_t countOf(const json::value& e) {
  return e.at("count").to_number<std::int64_t>();
}

}  // namespace

TEST_CASE("events on a ConfigMap: repeats counted, new messages apart, deleted ones rewritten",
          "[cluster]") {
  Api api(tokenConfig());
  TestNamespace ns(*api, "koord-events");
  const std::string component = "koord-event-test";

  auto cm = ok(api->createSync(named(kConfigMaps, "", ns.name()),
                               json::object{{"apiVersion", "v1"},
                                            {"kind", "ConfigMap"},
                                            {"metadata", {{"name", "settings"}}},
                                            {"data", {{"k", "v"}}}}),
               "create configmap");
  ObjectReference ref{"ConfigMap",
                      "v1",
                      ns.name(),
                      "settings",
                      str(cm, {"metadata", "uid"}),
                      str(cm, {"metadata", "resourceVersion"}),
                      ""};

  EventRecorder recorder(*api, api.io, EventSource{component, "test-host"});
  for (int i = 0; i < 3; ++i)
    recorder.record(ref, EventType::kWarning, "OverBudget", "the budget is spent");
  REQUIRE(recorder.flush(60s));

  auto events = eventsAbout(*api, ns.name(), "settings", component);
  REQUIRE(events.size() == 1);
  const json::value& e = events[0];
  CHECK(countOf(e) == 3);
  CHECK(str(e, {"type"}) == "Warning");
  CHECK(str(e, {"reason"}) == "OverBudget");
  CHECK(str(e, {"message"}) == "the budget is spent");
  CHECK(str(e, {"metadata", "namespace"}) == ns.name());
  CHECK(str(e, {"metadata", "name"}).rfind("settings.", 0) == 0);
  CHECK(str(e, {"involvedObject", "kind"}) == "ConfigMap");
  CHECK(str(e, {"involvedObject", "apiVersion"}) == "v1");
  CHECK(str(e, {"involvedObject", "namespace"}) == ns.name());
  CHECK(str(e, {"involvedObject", "name"}) == "settings");
  CHECK(str(e, {"involvedObject", "uid"}) == ref.uid);
  CHECK(str(e, {"source", "component"}) == component);
  CHECK(str(e, {"source", "host"}) == "test-host");
  CHECK(str(e, {"firstTimestamp"}).size() == std::string("2026-11-22T10:00:00Z").size());
  CHECK(str(e, {"lastTimestamp"}) >= str(e, {"firstTimestamp"}));
  const std::string first_name = str(e, {"metadata", "name"});
  const std::string first_uid = str(e, {"metadata", "uid"});

  recorder.record(ref, EventType::kWarning, "OverBudget", "the budget is overdrawn");
  REQUIRE(recorder.flush(60s));
  events = eventsAbout(*api, ns.name(), "settings", component);
  REQUIRE(events.size() == 2);
  const auto* overdrawn = withMessage(events, "the budget is overdrawn");
  REQUIRE(overdrawn != nullptr);
  CHECK(countOf(*overdrawn) == 1);
  CHECK(str(*overdrawn, {"metadata", "name"}) != first_name);
  const auto* spent = withMessage(events, "the budget is spent");
  REQUIRE(spent != nullptr);
  CHECK(countOf(*spent) == 3);

  // The Event goes away (as if its TTL passed): the next repeat's PATCH gets 404 and the
  // recorder writes it anew, keeping client-go's running count.
  ok(api->removeSync(named(kEvents, first_name, ns.name())), "delete event");
  recorder.record(ref, EventType::kWarning, "OverBudget", "the budget is spent");
  REQUIRE(recorder.flush(60s));
  events = eventsAbout(*api, ns.name(), "settings", component);
  REQUIRE(events.size() == 2);
  spent = withMessage(events, "the budget is spent");
  REQUIRE(spent != nullptr);
  CHECK(str(*spent, {"metadata", "uid"}) != first_uid);
  CHECK(countOf(*spent) == 4);

  CHECK(recorder.droppedCount() == 0);
  CHECK(recorder.filteredCount() == 0);
}

TEST_CASE("events about many objects are all written and each object's repeats still count",
          "[cluster]") {
  Api api(tokenConfig());
  TestNamespace ns(*api, "koord-events-many");
  const std::string component = "koord-event-many";
  EventRecorder recorder(*api, api.io, EventSource{component, "test-host"});
  // More objects than the recorder writes side by side, three repeats each, interleaved: every
  // object must end with one Event counting 3 (a repeat overtaking its create would leave a
  // second Event or a lower count).
  constexpr int kObjects = 40;
  auto refOf = [&](int i) {
    return ObjectReference{
        "Pod", "v1", ns.name(), fmt::format("pod-{}", i), fmt::format("uid-{}", i), "", ""};
  };
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < kObjects; ++i)
      recorder.record(refOf(i), EventType::kNormal, "Scheduled", "assigned somewhere");
  }
  REQUIRE(recorder.flush(60s));
  ListOptions options;
  options.field_selector = "source=" + component;
  auto list = ok(api->listSync(named(kEvents, "", ns.name()), options), "list");
  std::map<std::string, std::int64_t> counts;
  int written = 0;
  for (const auto& item : list.at("items").as_array()) {
    if (str(item, {"source", "component"}) != component)
      continue;
    ++written;
    counts[str(item, {"involvedObject", "name"})] = countOf(item);
  }
  CHECK(written == kObjects);
  REQUIRE(counts.size() == static_cast<std::size_t>(kObjects));
  for (const auto& [name, count] : counts) {
    INFO(name);
    CHECK(count == 3);
  }
  CHECK(recorder.droppedCount() == 0);
}

TEST_CASE("an event on a cluster-scoped object goes to the default namespace", "[cluster]") {
  Api api(tokenConfig());
  TestNamespace ns(*api, "koord-events-cs");
  const std::string component = "koord-event-test-cs";
  auto got = ok(api->getSync(named(kNamespaces, ns.name())), "get ns");
  ObjectReference ref{"Namespace", "v1", "", ns.name(), str(got, {"metadata", "uid"}), "", ""};

  {
    EventRecorder recorder(*api, api.io, EventSource{component, "test-host"});
    recorder.record(ref, EventType::kNormal, "Checked", "looked fine");
    REQUIRE(recorder.flush(60s));
  }
  auto events = eventsAbout(*api, "default", ns.name(), component);
  REQUIRE(events.size() == 1);
  CHECK(str(events[0], {"type"}) == "Normal");
  CHECK(str(events[0], {"involvedObject", "kind"}) == "Namespace");
  CHECK(countOf(events[0]) == 1);
  ok(api->removeSync(named(kEvents, str(events[0], {"metadata", "name"}), "default")),
     "delete event");
}

TEST_CASE("an event the server refuses is logged and skipped, not retried forever", "[cluster]") {
  Api api(tokenConfig());
  const std::string component = "koord-event-test-bad";
  // No such namespace: the create is refused with 404 and the recorder moves on.
  ObjectReference ref{"ConfigMap", "v1", uniqueName("koord-no-such-ns"), "x", "uid-x", "", ""};
  EventRecorder recorder(*api, api.io, EventSource{component, "test-host"});
  recorder.record(ref, EventType::kWarning, "Lost", "nobody will read this");
  const auto start = std::chrono::steady_clock::now();
  REQUIRE(recorder.flush(60s));
  CHECK(std::chrono::steady_clock::now() - start < 9s);  // given up at once, no 10 s retry wait
}

TEST_CASE("a transport failure is retried until the recorder goes away", "[cluster]") {
  RestConfig nowhere;
  nowhere.host = "https://127.0.0.1:1";  // nothing listens there: connection refused
  nowhere.insecure_skip_verify = true;
  nowhere.timeout = 2000ms;
  Api api(nowhere);
  auto recorder = std::make_unique<EventRecorder>(*api, api.io, EventSource{"koord-x", "h"});
  ObjectReference ref{"ConfigMap", "v1", "default", "x", "uid-x", "", ""};
  recorder->record(ref, EventType::kWarning, "Lost", "the server is away");
  // Still pending: the recorder waits to try again instead of dropping the event.
  CHECK_FALSE(recorder->flush(500ms));
  const auto start = std::chrono::steady_clock::now();
  recorder.reset();  // cancels the retry wait
  CHECK(std::chrono::steady_clock::now() - start < 1s);
}

TEST_CASE("a full backlog drops further events, counts them and warns once", "[cluster]") {
  int warnings = 0;
  koord::log::setSink([&](std::string_view line) {
    if (line.find("backlog is full") != std::string_view::npos)
      ++warnings;
  });
  {
    boost::asio::io_context idle;  // never run: nothing is sent, the backlog only fills
    RestConfig nowhere;
    nowhere.host = "https://127.0.0.1:1";
    RestClient client(idle, nowhere);
    EventRecorder recorder(client, idle, EventSource{"koord-x", "h"});
    ObjectReference ref{"ConfigMap", "v1", "default", "x", "uid-x", "", ""};
    for (std::size_t i = 0; i < EventRecorder::kMaxQueuedEvents + 7; ++i)
      recorder.record(ref, EventType::kNormal, "Burst", "event " + std::to_string(i));
    CHECK(recorder.droppedCount() == 7);
    CHECK_FALSE(recorder.flush(10ms));
  }
  koord::log::setSink(nullptr);
  CHECK(warnings == 1);
}
