// The koordlet's auditor: the verbose filter, Koordinator's /events pages (text and JSON, the
// page token, the size limit), the bound on concurrent readers, and the evictor's event.
#include "audit/auditor.h"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "koord/kube/event_recorder.h"
#include "koord/kube/rest_client.h"
#include "qosmanager/evict/pod_evictor.h"
#include "temp_tree.h"

using namespace koord::roles::koordlet;
using koord::testing::TempTree;
namespace http = koord::http;
namespace json = boost::json;

namespace {

audit::AuditConfig config(const TempTree& tree) {
  audit::AuditConfig c;
  c.log_dir = tree.path("audit");
  c.max_disk_space_mb = 1;
  c.max_file_bytes = 16 << 10;
  return c;
}

http::Request get(std::string query, bool json_accept = false) {
  http::Request r;
  r.method = "GET";
  r.path = std::string(audit::kAuditHttpPath);
  r.query = std::move(query);
  r.target = r.path + "?" + r.query;
  if (json_accept)
    r.headers.emplace_back("Accept", "application/json");
  return r;
}

std::vector<json::object> eventsOf(const http::Response& r) {
  std::vector<json::object> out;
  std::string_view rest = r.body;
  while (!rest.empty()) {
    const auto nl = rest.find('\n');
    out.push_back(json::parse(rest.substr(0, nl)).as_object());
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
  }
  return out;
}

void recordN(audit::Auditor& auditor, int n) {
  for (int i = 0; i < n; ++i) {
    audit::Event e;
    e.type = "pod";
    e.namespace_ = "ns";
    e.name = "pod-" + std::to_string(i);
    e.reason = "r";
    auditor.record(0, std::move(e));
  }
}

}  // namespace

TEST_CASE("auditor: events above -audit-verbose are not recorded", "[koordlet][audit]") {
  TempTree tree("koord-auditor");
  auto c = config(tree);
  c.verbose = 3;
  audit::Auditor auditor(c);
  for (int v : {0, 3, 4, 9}) {
    audit::Event e;
    e.reason = "v" + std::to_string(v);
    auditor.record(v, e);
  }
  auto page = eventsOf(auditor.handle(get("")));
  REQUIRE(page.size() == 2);
  CHECK(page[0].at("reason").as_string() == "v3");
  CHECK(page[1].at("reason").as_string() == "v0");
  CHECK(page[0].contains("createdAt"));

  SECTION("0 records every level") {
    TempTree other("koord-auditor");
    auto all = config(other);
    all.verbose = 0;
    audit::Auditor everything(all);
    for (int v : {0, 5, 10})
      everything.record(v, audit::Event{});
    CHECK(eventsOf(everything.handle(get(""))).size() == 3);
  }
}

TEST_CASE("auditor: /events pages newest first with a page token", "[koordlet][audit]") {
  TempTree tree("koord-auditor");
  audit::Auditor auditor(config(tree));
  recordN(auditor, 10);

  auto first = auditor.handle(get("size=4"));
  CHECK(first.status == 200);
  auto events = eventsOf(first);
  REQUIRE(events.size() == 4);
  CHECK(events[0].at("name").as_string() == "pod-9");
  CHECK(events[3].at("name").as_string() == "pod-6");
  CHECK(events[0].at("type").as_string() == "pod");
  CHECK(events[0].at("namespace").as_string() == "ns");
  CHECK_FALSE(events[0].contains("container"));
  const std::string token(first.header("Next-Page-Token"));
  REQUIRE(token.size() == 36);

  // An event recorded meanwhile is not this reader's: it started before it.
  recordN(auditor, 1);
  auto second = auditor.handle(get("size=4&pageToken=" + token));
  events = eventsOf(second);
  REQUIRE(events.size() == 4);
  CHECK(events[0].at("name").as_string() == "pod-5");
  CHECK(second.header("Next-Page-Token") == token);

  auto last = auditor.handle(get("pageToken=" + token + "&size=4"));
  events = eventsOf(last);
  REQUIRE(events.size() == 2);
  CHECK(events[1].at("name").as_string() == "pod-0");
  CHECK(last.header("Next-Page-Token").empty());
  // Read to the end: the reader is gone and its token with it.
  CHECK(auditor.activeReaders() == 0);
  CHECK(auditor.handle(get("pageToken=" + token)).status == 409);
}

TEST_CASE("auditor: JSON pages with Accept: application/json", "[koordlet][audit]") {
  TempTree tree("koord-auditor");
  audit::Auditor auditor(config(tree));
  recordN(auditor, 3);
  auto r = auditor.handle(get("size=2", true));
  CHECK(r.status == 200);
  CHECK_THAT(r.content_type, Catch::StartsWith("application/json"));
  auto body = json::parse(r.body).as_object();
  const auto& events = body.at("Events").as_array();
  REQUIRE(events.size() == 2);
  CHECK(events[0].at("name").as_string() == "pod-2");
  const std::string token(body.at("NextPageToken").as_string());
  REQUIRE_FALSE(token.empty());

  body = json::parse(auditor.handle(get("size=2&pageToken=" + token, true)).body).as_object();
  CHECK(body.at("Events").as_array().size() == 1);
  CHECK(body.at("NextPageToken").as_string().empty());
}

TEST_CASE("auditor: the size limit and unknown tokens", "[koordlet][audit]") {
  TempTree tree("koord-auditor");
  auto c = config(tree);
  c.max_events_limit = 5;
  audit::Auditor auditor(c);
  recordN(auditor, 8);
  auto over = auditor.handle(get("size=6"));
  CHECK(over.status == 400);
  CHECK_THAT(over.body, Catch::Contains("size(6) exceeds the limit(5)"));
  CHECK(auditor.handle(get("size=-1")).status == 400);
  CHECK(auditor.handle(get("pageToken=nope")).status == 409);
  // No size: the default, held to the limit; an unparsable size is the default too.
  CHECK(eventsOf(auditor.handle(get(""))).size() == 5);
  CHECK(eventsOf(auditor.handle(get("size=many"))).size() == 5);
  CHECK(auditor.activeReaders() == 2);
}

TEST_CASE("auditor: readers are bounded by -audit-max-concurrent-readers", "[koordlet][audit]") {
  TempTree tree("koord-auditor");
  auto c = config(tree);
  c.max_concurrent_readers = 2;
  audit::Auditor auditor(c);
  recordN(auditor, 10);
  std::vector<std::string> tokens;
  for (int i = 0; i < 3; ++i)
    tokens.emplace_back(auditor.handle(get("size=1")).header("Next-Page-Token"));
  CHECK(auditor.activeReaders() == 2);
  // The oldest went first; the two newer ones go on.
  CHECK(auditor.handle(get("size=1&pageToken=" + tokens[0])).status == 409);
  for (int i : {1, 2}) {
    auto next = auditor.handle(get("size=1&pageToken=" + tokens[i]));
    CHECK(next.status == 200);
    CHECK(eventsOf(next).at(0).at("name").as_string() == "pod-8");
  }

  SECTION("a reader unused for the TTL goes too") {
    TempTree other("koord-auditor");
    auto short_ttl = config(other);
    short_ttl.active_reader_ttl = std::chrono::milliseconds(1);
    audit::Auditor quick(short_ttl);
    recordN(quick, 3);
    const std::string token(quick.handle(get("size=1")).header("Next-Page-Token"));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    CHECK(quick.handle(get("size=1&pageToken=" + token)).status == 409);
    CHECK(quick.activeReaders() == 0);
  }
}

TEST_CASE("auditor: a bad config is refused at startup", "[koordlet][audit]") {
  TempTree tree("koord-auditor");
  for (auto bad :
       {&audit::AuditConfig::max_disk_space_mb, &audit::AuditConfig::max_concurrent_readers,
        &audit::AuditConfig::max_events_limit}) {
    auto c = config(tree);
    c.*bad = 0;
    CHECK_THROWS_AS(audit::Auditor(c), std::invalid_argument);
  }
  tree.write("file", "x");
  auto c = config(tree);
  c.log_dir = tree.path("file") / "audit";
  CHECK_THROWS_AS(audit::Auditor(c), std::runtime_error);
}

TEST_CASE("audit: V() records to the installed auditor only", "[koordlet][audit]") {
  TempTree tree("koord-auditor");
  auto auditor = std::make_shared<audit::Auditor>(config(tree));
  audit::V(0).node().reason("before").record();  // none installed: dropped
  CHECK_FALSE(audit::enabled());
  {
    audit::DefaultAuditorScope scope(auditor);
    CHECK(audit::enabled());
    audit::V(3).group("cpu").reason("CPUSuppress").message("cpuset 0-3").record();
    audit::V(0).pod("ns", "p").container("c").reason("r").record();
  }
  audit::V(0).node().reason("after").record();
  auto events = eventsOf(auditor->handle(get("")));
  REQUIRE(events.size() == 2);
  CHECK(events[0].at("container").as_string() == "c");
  CHECK(events[1].at("type").as_string() == "group");
  CHECK(events[1].at("name").as_string() == "cpu");
  CHECK(events[1].at("message").as_string() == "cpuset 0-3");
}

TEST_CASE("audit: an eviction the koordlet tries is recorded at V level 0", "[koordlet][audit]") {
  TempTree tree("koord-auditor");
  auto c = config(tree);
  c.verbose = 1;
  auto auditor = std::make_shared<audit::Auditor>(c);
  audit::DefaultAuditorScope scope(auditor);

  boost::asio::io_context io;
  auto guard = boost::asio::make_work_guard(io);
  std::thread runner([&] { io.run(); });
  std::optional<bool> answer;
  {
    koord::kube::RestConfig rest;
    rest.host = "https://127.0.0.1:1";  // nothing listens: the eviction fails
    rest.timeout = std::chrono::milliseconds(2000);
    koord::kube::RestClient client(io, rest);
    koord::kube::EventRecorder recorder(client, io, {"koordlet", "node-a"});
    koord::metrics::Registry registry;
    qosmanager::PodEvictor evictor(client, recorder, registry, "node-a");
    evictor.setEvictionVersion("policy/v1");
    PodMeta pod;
    pod.namespace_ = "ns";
    pod.name = "be-0";
    pod.uid = "uid-0";
    std::atomic<bool> done{false};
    evictor.evict(pod, "EvictPodByNodeMemoryUsage", "node memory usage over the threshold",
                  [&](bool ok) {
                    answer = ok;
                    done = true;
                  });
    for (int i = 0; i < 500 && !done; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    evictor.stop();
  }
  guard.reset();
  io.stop();
  runner.join();
  REQUIRE(answer.has_value());
  CHECK_FALSE(*answer);

  auto events = eventsOf(auditor->handle(get("")));
  REQUIRE(events.size() == 1);
  CHECK(events[0].at("type").as_string() == "pod");
  CHECK(events[0].at("namespace").as_string() == "ns");
  CHECK(events[0].at("name").as_string() == "be-0");
  CHECK(events[0].at("reason").as_string() == "EvictPodByNodeMemoryUsage");
  CHECK(events[0].at("message").as_string() == "node memory usage over the threshold");
}
