// What the cluster tests share to talk to the test apiserver: a RestClient with an io thread of
// its own, unique names, a per-test namespace, and helpers that fail the test on API errors.
#pragma once

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <thread>
#include <utility>

#include "koord/kube/rest_client.h"
#include "resources.h"

namespace koord::testing {

/// A RestClient whose io_context runs on a thread of its own, so the ...Sync calls can block
/// the test's thread while informers and watchers run on `io`.
class KubeApi {
 public:
  explicit KubeApi(kube::RestConfig config)
      : guard_(boost::asio::make_work_guard(io)), thread_([this] { io.run(); }) {
    client_ = std::make_unique<kube::RestClient>(io, std::move(config));
  }
  ~KubeApi() {
    client_.reset();
    guard_.reset();
    io.stop();
    thread_.join();
  }
  KubeApi(const KubeApi&) = delete;
  KubeApi& operator=(const KubeApi&) = delete;

  kube::RestClient& operator*() { return *client_; }
  kube::RestClient* operator->() { return client_.get(); }
  boost::asio::io_context io;

 private:
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> guard_;
  std::thread thread_;
  std::unique_ptr<kube::RestClient> client_;
};

/// The koord binary under test ($KOORD_BINARY, set by CTest).
inline std::string koordBinary() {
  const char* b = std::getenv("KOORD_BINARY");
  if (b == nullptr)
    FAIL("KOORD_BINARY is not set");
  return b;
}

/// Polls `check` until it holds or `timeout` passes; the last answer is returned.
inline bool eventually(std::chrono::milliseconds timeout, const std::function<bool()>& check,
                       std::chrono::milliseconds poll = std::chrono::milliseconds(200)) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (check())
      return true;
    std::this_thread::sleep_for(poll);
  }
  return check();
}

/// Names unique per run, so a leftover of an interrupted run never collides.
inline std::string uniqueName(const std::string& prefix) {
  auto now = std::chrono::system_clock::now().time_since_epoch();
  return prefix + "-" + std::to_string(::getpid()) + "-" +
         std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(now).count() %
                        100000000);
}

/// The string at `path` inside `v`, or "" when any step is missing or not a string.
inline std::string str(const boost::json::value& v, std::initializer_list<const char*> path) {
  const boost::json::value* cur = &v;
  for (const char* key : path) {
    if (!cur->is_object() || !cur->as_object().contains(key))
      return "";
    cur = &cur->as_object().at(key);
  }
  return cur->is_string() ? std::string(cur->as_string()) : "";
}

/// The value of a result the test cannot go on without; fails the test with the API error.
inline boost::json::value ok(kube::ApiResult<boost::json::value> r, const char* what) {
  if (!r)
    FAIL(what << ": " << r.error().code << " " << r.error().reason << ": " << r.error().message);
  return std::move(*r);
}

/// A pause pod for koord-scheduler, kept to the test's nodes (those labelled `node_label`=`id`),
/// its `requests` also its limits; with `node_name` it is bound already.
inline boost::json::object schedulerTestPod(const std::string& name, const std::string& ns,
                                            const std::string& node_label, const std::string& id,
                                            boost::json::object requests,
                                            boost::json::object labels = {},
                                            const std::string& priority_class = "",
                                            const std::string& node_name = "") {
  boost::json::object spec{
      {"schedulerName", "koord-scheduler"},
      {"nodeSelector", {{node_label, id}}},
      {"tolerations", boost::json::array{boost::json::object{{"operator", "Exists"}}}},
      {"containers", boost::json::array{boost::json::object{
                         {"name", "c"},
                         {"image", "registry.k8s.io/pause:3.2"},
                         {"resources", {{"requests", requests}, {"limits", requests}}}}}}};
  if (!priority_class.empty())
    spec["priorityClassName"] = priority_class;
  if (!node_name.empty())
    spec["nodeName"] = node_name;
  return boost::json::object{
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", {{"name", name}, {"namespace", ns}, {"labels", std::move(labels)}}},
      {"spec", std::move(spec)}};
}

/// The node a pod is bound to; "" while it is not (or when it cannot be read).
inline std::string nodeOf(kube::RestClient& api, const std::string& ns, const std::string& name) {
  auto p = api.getSync(named(kPods, name, ns));
  return p ? str(*p, {"spec", "nodeName"}) : "";
}

/// Blocks until the default service account of `ns` has its token (the token controller's work):
/// the apiserver refuses pods in the namespace until then. Fails the test after 60 s.
inline void waitForServiceAccount(kube::RestClient& api, const std::string& ns) {
  REQUIRE(eventually(std::chrono::seconds(60), [&] {
    auto sa = api.getSync(named(kServiceAccounts, "default", ns));
    if (!sa)
      return false;
    const auto* secrets = sa->as_object().if_contains("secrets");
    return secrets != nullptr && secrets->is_array() && !secrets->as_array().empty();
  }));
}

/// Deletes pod `name` with grace 0: no kubelet would ever confirm the deletion of a pod on an
/// API-only node (or one not scheduled at all).
inline kube::ApiResult<boost::json::value> removePodNow(kube::RestClient& api,
                                                        const std::string& ns,
                                                        const std::string& name) {
  kube::DeleteOptions now;
  now.grace_period_seconds = 0;
  return api.removeSync(named(kPods, name, ns), now);
}

/// Deletes every pod in `ns` with grace 0, as removePodNow; errors are ignored (a cleanup).
inline void removeAllPodsNow(kube::RestClient& api, const std::string& ns) {
  if (auto list = api.listSync(named(kPods, "", ns))) {
    for (const auto& p : list->at("items").as_array())
      (void)removePodNow(api, ns, str(p, {"metadata", "name"}));
  }
}

/// A namespace for one test, deleted at the end (the namespace controller removes its content).
class TestNamespace {
 public:
  TestNamespace(kube::RestClient& client, const std::string& prefix)
      : client_(client), name_(uniqueName(prefix)) {
    ok(client_.createSync(kNamespaces, boost::json::object{{"apiVersion", "v1"},
                                                           {"kind", "Namespace"},
                                                           {"metadata", {{"name", name_}}}}),
       "create namespace");
  }
  ~TestNamespace() {
    auto r = client_.removeSync(named(kNamespaces, name_));
    if (!r)
      WARN("deleting namespace " << name_ << ": " << r.error().message);
  }
  TestNamespace(const TestNamespace&) = delete;
  TestNamespace& operator=(const TestNamespace&) = delete;
  const std::string& name() const { return name_; }

 private:
  kube::RestClient& client_;
  std::string name_;
};

/// A TestNamespace pods can be created in as soon as it is constructed: it waits for the
/// default service account's token, as waitForServiceAccount.
class PodNamespace : public TestNamespace {
 public:
  PodNamespace(kube::RestClient& client, const std::string& prefix)
      : TestNamespace(client, prefix) {
    waitForServiceAccount(client, name());
  }
};

}  // namespace koord::testing
