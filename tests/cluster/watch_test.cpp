// koord::kube watch support: the event decoder and backoff as pure units ("[unit]"), and the
// Watcher and http::Client::stream against the real apiserver that cluster.sh starts ("[cluster]").
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cluster_api.h"
#include "cluster_env.h"
#include "koord/http/client.h"
#include "koord/kube/rest_client.h"
#include "koord/kube/watch.h"

using namespace std::chrono_literals;
namespace json = boost::json;
using koord::testing::tokenConfig;
using namespace koord::kube;

// ---- against the real apiserver ----

namespace {

using Api = koord::testing::KubeApi;
using koord::testing::named;
using koord::testing::ok;
using koord::testing::TestNamespace;
using koord::testing::uniqueName;
using namespace koord::testing::resources;

// Events and errors a Watcher delivered, waited on from the test thread.
struct Recorder {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<WatchEvent> events;
  std::vector<ApiError> errors;

  Watcher::Handler handler() {
    return [this](const WatchEvent& e) {
      std::lock_guard lock(mu);
      events.push_back(e);
      cv.notify_all();
    };
  }
  Watcher::ErrorHandler onError() {
    return [this](const ApiError& e) {
      std::lock_guard lock(mu);
      errors.push_back(e);
      cv.notify_all();
    };
  }
  template <typename Pred>
  bool waitFor(Pred pred, std::chrono::seconds timeout = 30s) {
    std::unique_lock lock(mu);
    return cv.wait_for(lock, timeout, [&] { return pred(*this); });
  }
};

json::value configMap(const std::string& name, const std::string& value) {
  return json::object{{"apiVersion", "v1"},
                      {"kind", "ConfigMap"},
                      {"metadata", {{"name", name}, {"labels", {{"koord-watch-test", "1"}}}}},
                      {"data", {{"k", value}}}};
}

std::string rvOf(const json::value& v) {
  return std::string(v.at("metadata").at("resourceVersion").as_string());
}

}  // namespace

TEST_CASE("http stream: a watch body arrives piece by piece and cancel ends it", "[cluster]") {
  Api api(tokenConfig());
  auto req = api->prepareRequest("GET", "/api/v1/namespaces?watch=true&timeoutSeconds=30");
  REQUIRE(req.has_value());
  std::mutex mu;
  std::condition_variable cv;
  int status = 0;
  std::string body;
  bool done = false;
  boost::system::error_code result;
  auto handle = api->httpClient().stream(
      std::move(*req),
      [&](int s, const koord::http::Headers&) {
        std::lock_guard lock(mu);
        status = s;
        return true;
      },
      [&](std::string_view chunk) {
        std::lock_guard lock(mu);
        body.append(chunk);
        cv.notify_all();
        return true;
      },
      [&](boost::system::error_code ec) {
        std::lock_guard lock(mu);
        done = true;
        result = ec;
        cv.notify_all();
      });
  {
    std::unique_lock lock(mu);
    // The initial ADDED events for existing namespaces come before the stream ends.
    REQUIRE(cv.wait_for(lock, 20s, [&] { return body.find('\n') != std::string::npos; }));
    CHECK(status == 200);
    CHECK_FALSE(done);
  }
  handle.cancel();
  std::unique_lock lock(mu);
  REQUIRE(cv.wait_for(lock, 10s, [&] { return done; }));
  CHECK(result == boost::asio::error::operation_aborted);
}

TEST_CASE("Watcher delivers ADDED, MODIFIED, DELETED in order", "[cluster]") {
  Api api(tokenConfig());
  TestNamespace ns(*api, "koord-watch");
  ResourceRef cms = named(kConfigMaps, "", ns.name());
  auto list = ok(api->listSync(cms), "list");
  WatchOptions opts;
  opts.resource_version = rvOf(list);
  // The controller-manager adds kube-root-ca.crt to every namespace at its own pace.
  opts.label_selector = "koord-watch-test=1";
  Recorder rec;
  Watcher w(*api, api.io, cms, opts, rec.handler(), rec.onError());
  w.start();

  auto created = ok(api->createSync(cms, configMap("cm1", "v1")), "create");
  auto named = cms;
  named.name = "cm1";
  auto updated = ok(api->updateSync(named, configMap("cm1", "v2")), "update");
  ok(api->removeSync(named), "delete");

  REQUIRE(rec.waitFor([](Recorder& r) { return r.events.size() >= 3; }));
  std::lock_guard lock(rec.mu);
  REQUIRE(rec.events.size() == 3);
  CHECK(rec.events[0].type == WatchEventType::kAdded);
  CHECK(rec.events[1].type == WatchEventType::kModified);
  CHECK(rec.events[2].type == WatchEventType::kDeleted);
  std::uint64_t last = 0;
  for (const auto& e : rec.events) {
    CHECK(e.object.at("metadata").at("name").as_string() == "cm1");
    auto rv = std::stoull(rvOf(e.object));
    CHECK(rv > last);
    last = rv;
  }
  CHECK(rvOf(rec.events[0].object) == rvOf(created));
  CHECK(rvOf(rec.events[1].object) == rvOf(updated));
  CHECK(rec.errors.empty());
  CHECK(std::stoull(w.resourceVersion()) >= last);
}

TEST_CASE("Watcher resumes after the server ends a stream", "[cluster]") {
  Api api(tokenConfig());
  TestNamespace ns(*api, "koord-watch-resume");
  ResourceRef cms = named(kConfigMaps, "", ns.name());
  auto list = ok(api->listSync(cms), "list");
  WatchOptions opts;
  opts.resource_version = rvOf(list);
  // The controller-manager adds kube-root-ca.crt to every namespace at its own pace.
  opts.label_selector = "koord-watch-test=1";
  opts.timeout_seconds = 2;
  Recorder rec;
  Watcher w(*api, api.io, cms, opts, rec.handler(), rec.onError());
  w.start();
  // Wait until the first stream has ended and a second one is open.
  auto deadline = std::chrono::steady_clock::now() + 20s;
  while (w.streamsOpened() < 2 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(100ms);
  REQUIRE(w.streamsOpened() >= 2);
  ok(api->createSync(cms, configMap("late", "x")), "create");
  REQUIRE(rec.waitFor([](Recorder& r) { return !r.events.empty(); }));
  std::lock_guard lock(rec.mu);
  CHECK(rec.events[0].type == WatchEventType::kAdded);
  CHECK(rec.events[0].object.at("metadata").at("name").as_string() == "late");
  CHECK(rec.errors.empty());
}

TEST_CASE("Watcher from a compacted resourceVersion reports expired", "[cluster]") {
  Api api(tokenConfig());
  TestNamespace ns(*api, "koord-watch-old");
  ResourceRef cms = named(kConfigMaps, "", ns.name());
  WatchOptions opts;
  opts.resource_version = "1";
  Recorder rec;
  Watcher w(*api, api.io, cms, opts, rec.handler(), rec.onError());
  w.start();
  bool got = rec.waitFor([](Recorder& r) { return !r.errors.empty(); }, 5s);
  if (!got) {
    WARN(
        "the apiserver did not answer 410 for resourceVersion 1 (its watch cache still covers "
        "it); the expired path is not exercised");
    return;
  }
  std::lock_guard lock(rec.mu);
  CHECK(rec.errors[0].code == 410);
  CHECK(isResourceExpired(rec.errors[0]));
  CHECK(w.streamsOpened() == 1);
}
