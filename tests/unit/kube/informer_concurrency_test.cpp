// koord::kube::Informer from several threads at once: the reflector, watch and HTTP client on two
// io threads feed the store while test threads read it, its indexes and the sync state, and the
// peer's collection changes under them (adds, updates, deletes, a 410 that forces a relist).
// The peer is a loopback HTTP server that keeps one ConfigMap collection and its event log.
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "http_peer.h"
#include "koord/kube/informer.h"
#include "test_threads.h"

using namespace std::chrono_literals;
namespace json = boost::json;
using namespace koord::kube;
using koord::testing::HttpPeer;
using koord::testing::PeerReply;
using koord::testing::PeerRequest;
using koord::testing::queryParam;

using koord::kube::testing::IoThreads;
using koord::kube::testing::JoinAll;
using koord::kube::testing::waitFor;

namespace {

constexpr const char* kPath = "/api/v1/namespaces/default/configmaps";

// One ConfigMap collection with resourceVersions and a log of its changes, served as list and
// watch. Every object carries its own resourceVersion in data.v, and a label `group`.
class Collection {
 public:
  void put(const std::string& name, const std::string& group) {
    std::lock_guard lock(mu_);
    const auto rv = std::to_string(++rv_);
    json::object o{{"apiVersion", "v1"},
                   {"kind", "ConfigMap"},
                   {"metadata",
                    {{"name", name},
                     {"namespace", "default"},
                     {"resourceVersion", rv},
                     {"labels", {{"group", group}}}}},
                   {"data", {{"v", rv}}}};
    const bool existed = objects_.count(name) > 0;
    objects_[name] = o;
    log_.push_back({rv_, json::serialize(json::object{{"type", existed ? "MODIFIED" : "ADDED"},
                                                      {"object", o}})});
    cv_.notify_all();
  }

  void remove(const std::string& name) {
    std::lock_guard lock(mu_);
    auto it = objects_.find(name);
    if (it == objects_.end())
      return;
    json::object o = it->second;
    objects_.erase(it);
    o["metadata"].as_object()["resourceVersion"] = std::to_string(++rv_);
    log_.push_back({rv_, json::serialize(json::object{{"type", "DELETED"}, {"object", o}})});
    cv_.notify_all();
  }

  // The next watch stream answers 410 Gone instead of events, as the apiserver does once etcd
  // has compacted past the watch's resourceVersion.
  void expireWatches() {
    std::lock_guard lock(mu_);
    ++expire_;
    cv_.notify_all();
  }

  // name -> resourceVersion of what the collection holds now.
  std::map<std::string, std::string> state() const {
    std::lock_guard lock(mu_);
    std::map<std::string, std::string> out;
    for (const auto& [name, o] : objects_)
      out[name] = std::string(o.at("metadata").at("resourceVersion").as_string());
    return out;
  }

  int lists() const { return lists_.load(); }
  int expiredWatches() const { return expired_.load(); }

  PeerReply serve(const PeerRequest& r) {
    if (r.method != "GET" || r.path != kPath)
      return {404, R"({"kind":"Status","code":404,"reason":"NotFound"})", {}};
    if (queryParam(r.query, "watch") != "true")
      return list();
    std::uint64_t from = std::stoull("0" + queryParam(r.query, "resourceVersion"));
    auto ended = std::make_shared<bool>(false);
    auto cursor = std::make_shared<std::uint64_t>(from);
    return {200, "", [this, ended, cursor]() -> std::optional<std::string> {
              if (*ended)
                return std::nullopt;
              std::unique_lock lock(mu_);
              cv_.wait_for(lock, 20ms, [&] { return expire_ > 0 || newest() > *cursor; });
              if (expire_ > 0) {
                --expire_;
                ++expired_;
                *ended = true;
                return R"({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1",)"
                       R"("status":"Failure","reason":"Expired","code":410,)"
                       R"("message":"too old resource version"}})"
                       "\n";
              }
              std::string out;
              for (const auto& [rv, line] : log_) {
                if (rv > *cursor) {
                  out += line + "\n";
                  *cursor = rv;
                }
              }
              return out;
            }};
  }

 private:
  std::uint64_t newest() const { return log_.empty() ? 0 : log_.back().first; }

  PeerReply list() {
    std::lock_guard lock(mu_);
    ++lists_;
    json::array items;
    for (const auto& [name, o] : objects_)
      items.push_back(o);
    return {200,
            json::serialize(json::object{{"kind", "ConfigMapList"},
                                         {"apiVersion", "v1"},
                                         {"metadata", {{"resourceVersion", std::to_string(rv_)}}},
                                         {"items", std::move(items)}}),
            {}};
  }

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::uint64_t rv_ = 100;
  std::map<std::string, json::object> objects_;
  std::vector<std::pair<std::uint64_t, std::string>> log_;
  int expire_ = 0;
  std::atomic<int> lists_{0};
  std::atomic<int> expired_{0};
};

// What the informer keeps of a ConfigMap.
struct Item {
  std::string name;
  std::string group;
  std::string rv;  // metadata.resourceVersion
  std::string v;   // data.v: equal to rv in every object the collection serves
};

Expected<Item> project(const json::value& v) {
  Item it;
  const auto& md = v.at("metadata");
  it.name = md.at("name").as_string();
  it.rv = md.at("resourceVersion").as_string();
  it.group = md.at("labels").at("group").as_string();
  it.v = v.at("data").at("v").as_string();
  return it;
}

}  // namespace

TEST_CASE("informer: store, indexes and handlers stay consistent under concurrent readers",
          "[kube][informer][concurrency]") {
  // What the handlers were told, replayed: must end as the collection ends. Declared before the
  // informer, which calls the handlers until it is stopped.
  std::mutex seen_mu;
  std::map<std::string, std::string> seen;
  std::atomic<int> handler_faults{0};
  Collection collection;
  for (int i = 0; i < 40; ++i)
    collection.put("cm-" + std::to_string(i), "g" + std::to_string(i % 4));
  HttpPeer peer([&](const PeerRequest& r) { return collection.serve(r); });

  IoThreads io(2);
  RestConfig config;
  config.host = peer.url();
  config.qps = 0;
  RestClient client(io.io, config);
  Informer<Item> informer(client, io.io, ResourceRef{"", "v1", "configmaps", "default", "", ""},
                          project);
  informer.addIndex("group", [](const Item& it) { return std::vector<std::string>{it.group}; });

  InformerHandlers<Item> handlers;
  handlers.on_add = [&](const std::string& key, const Item& it) {
    std::lock_guard lock(seen_mu);
    if (key != "default/" + it.name)
      ++handler_faults;
    seen[it.name] = it.rv;
  };
  handlers.on_update = [&](const std::string&, const Item& old_it, const Item& new_it) {
    std::lock_guard lock(seen_mu);
    if (old_it.name != new_it.name || seen[new_it.name] != old_it.rv)
      ++handler_faults;
    seen[new_it.name] = new_it.rv;
  };
  handlers.on_delete = [&](const std::string&, const Item& it) {
    std::lock_guard lock(seen_mu);
    if (seen.erase(it.name) != 1)
      ++handler_faults;
  };
  informer.addHandlers(handlers);
  informer.start();

  // Readers: every index answer holds only objects of its group, and every object is whole.
  std::atomic<bool> done{false};
  std::atomic<int> read_faults{0};
  std::atomic<long> reads{0};
  std::vector<std::thread> readers;
  JoinAll join_readers{done, readers};
  for (int r = 0; r < 3; ++r) {
    readers.emplace_back([&, r] {
      while (!done) {
        const std::string group = "g" + std::to_string(r % 4);
        for (const auto& it : informer.store().byIndex("group", group)) {
          if (it->group != group || it->v != it->rv)
            ++read_faults;
        }
        for (const auto& it : informer.store().list()) {
          if (it->v != it->rv)
            ++read_faults;
        }
        const auto key = "default/cm-" + std::to_string(reads % 60);
        if (auto it = informer.store().get(key); it && "default/" + it->name != key)
          ++read_faults;
        (void)informer.hasSynced();
        ++reads;
      }
    });
  }

  REQUIRE(informer.waitForSync(20s));
  // Changes while the watch runs, a forced relist half way, more changes after it.
  std::mt19937 rng(7);
  for (int step = 0; step < 300; ++step) {
    const int n = static_cast<int>(rng() % 60);
    const std::string name = "cm-" + std::to_string(n);
    if (rng() % 4 == 0)
      collection.remove(name);
    else
      collection.put(name, "g" + std::to_string(rng() % 4));
    if (step == 150)
      collection.expireWatches();
    if (step % 20 == 0)
      std::this_thread::sleep_for(2ms);
  }
  const auto want = collection.state();
  auto storeState = [&] {
    std::map<std::string, std::string> got;
    for (const auto& it : informer.store().list())
      got[it->name] = it->rv;
    return got;
  };
  const bool caught_up = waitFor([&] { return storeState() == want; }, 30s);
  done = true;
  for (auto& t : readers)
    t.join();
  informer.stop();

  CHECK(caught_up);
  CHECK(storeState() == want);
  {
    std::lock_guard lock(seen_mu);
    CHECK(seen == want);
  }
  CHECK(handler_faults == 0);
  CHECK(read_faults == 0);
  CHECK(reads > 0);
  CHECK(informer.hasSynced());
  CHECK(informer.projectionErrors() == 0);
  // The 410 was served and answered with a relist.
  CHECK(collection.expiredWatches() == 1);
  CHECK(collection.lists() >= 2);
  CHECK(informer.reflector().listsCompleted() >= 2);
}
