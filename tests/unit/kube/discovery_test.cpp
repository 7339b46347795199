// Discovery documents as the API servers of the supported releases write them, and the retry
// that waits for an API server that does not answer yet.
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <thread>

#include "koord/kube/discovery.h"

namespace json = boost::json;
using namespace koord::kube;

TEST_CASE("discovery: APIGroup of policy on 1.20 and on 1.25") {
  // 1.20: only v1beta1.
  auto v120 = parseApiGroup(json::parse(R"({
    "kind": "APIGroup", "apiVersion": "v1", "name": "policy",
    "versions": [{"groupVersion": "policy/v1beta1", "version": "v1beta1"}],
    "preferredVersion": {"groupVersion": "policy/v1beta1", "version": "v1beta1"}})"));
  REQUIRE(v120.has_value());
  CHECK(v120->name == "policy");
  CHECK(v120->versions == std::vector<std::string>{"v1beta1"});
  CHECK(v120->preferred_version == "v1beta1");
  CHECK(v120->serves("v1beta1"));
  CHECK_FALSE(v120->serves("v1"));

  // 1.21 to 1.24 serve both, v1 preferred; 1.25 on only v1.
  auto v125 = parseApiGroup(json::parse(R"({
    "kind": "APIGroup", "apiVersion": "v1", "name": "policy",
    "versions": [{"groupVersion": "policy/v1", "version": "v1"}],
    "preferredVersion": {"groupVersion": "policy/v1", "version": "v1"}})"));
  REQUIRE(v125.has_value());
  CHECK(v125->serves("v1"));
  CHECK_FALSE(v125->serves("v1beta1"));

  // A group with no versions listed is a group not served.
  auto empty = parseApiGroup(json::parse(R"({"kind": "APIGroup", "name": "policy"})"));
  REQUIRE(empty.has_value());
  CHECK(empty->versions.empty());
  CHECK(empty->preferred_version.empty());
}

TEST_CASE("discovery: APIGroup errors name the field") {
  auto not_object = parseApiGroup(json::parse("[]"));
  REQUIRE_FALSE(not_object.has_value());
  CHECK(not_object.error().message == "expected object, got array");

  auto bad_versions = parseApiGroup(json::parse(R"({"name": "policy", "versions": {}})"));
  REQUIRE_FALSE(bad_versions.has_value());
  CHECK(bad_versions.error().message == "versions: expected array, got object");

  auto bad_version =
      parseApiGroup(json::parse(R"({"name": "policy", "versions": [{"version": 1}]})"));
  REQUIRE_FALSE(bad_version.has_value());
  CHECK(bad_version.error().message == "versions[0].version: expected string, got number");

  auto empty_version =
      parseApiGroup(json::parse(R"({"name": "policy", "versions": [{"version": ""}]})"));
  REQUIRE_FALSE(empty_version.has_value());
  CHECK(empty_version.error().message == "versions[0].version: must not be empty");

  auto bad_preferred = parseApiGroup(json::parse(R"({"name": "x", "preferredVersion": "v1"})"));
  REQUIRE_FALSE(bad_preferred.has_value());
  CHECK(bad_preferred.error().message == "preferredVersion: expected object, got string");
}

TEST_CASE("discovery: APIResourceList with subresources in another group") {
  // /api/v1 of a 1.20 server (abridged): pods/eviction takes a policy/v1beta1 Eviction.
  auto core = parseApiResourceList(json::parse(R"({
    "kind": "APIResourceList", "groupVersion": "v1",
    "resources": [
      {"name": "namespaces", "singularName": "", "namespaced": false, "kind": "Namespace",
       "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"],
       "shortNames": ["ns"], "storageVersionHash": "Q3oi5N2YM8M="},
      {"name": "pods", "singularName": "", "namespaced": true, "kind": "Pod",
       "verbs": ["create", "delete", "get"], "categories": ["all"]},
      {"name": "pods/eviction", "singularName": "", "namespaced": true, "group": "policy",
       "version": "v1beta1", "kind": "Eviction", "verbs": ["create"]}]})"));
  REQUIRE(core.has_value());
  CHECK(core->group_version == "v1");
  REQUIRE(core->resources.size() == 3);
  CHECK_FALSE(core->resources[0].namespaced);
  const auto* pods = core->find("pods");
  REQUIRE(pods != nullptr);
  CHECK(pods->kind == "Pod");
  CHECK(pods->namespaced);
  CHECK(pods->group.empty());
  const auto* eviction = core->find("pods/eviction");
  REQUIRE(eviction != nullptr);
  CHECK(eviction->kind == "Eviction");
  CHECK(groupVersion(eviction->group, eviction->version) == "policy/v1beta1");
  CHECK(core->find("pods/binding") == nullptr);

  // /apis/policy/v1 of a 1.25 server.
  auto policy = parseApiResourceList(json::parse(R"({
    "kind": "APIResourceList", "apiVersion": "v1", "groupVersion": "policy/v1",
    "resources": [
      {"name": "poddisruptionbudgets", "singularName": "", "namespaced": true,
       "kind": "PodDisruptionBudget", "verbs": ["list", "watch"], "shortNames": ["pdb"]},
      {"name": "poddisruptionbudgets/status", "singularName": "", "namespaced": true,
       "kind": "PodDisruptionBudget", "verbs": ["get", "patch", "update"]}]})"));
  REQUIRE(policy.has_value());
  CHECK(policy->group_version == "policy/v1");
  CHECK(policy->find("poddisruptionbudgets") != nullptr);
  CHECK(policy->find("podsecuritypolicies") == nullptr);

  auto no_resources = parseApiResourceList(json::parse(R"({"groupVersion": "policy/v1"})"));
  REQUIRE(no_resources.has_value());
  CHECK(no_resources->resources.empty());
}

TEST_CASE("discovery: APIResourceList errors name the field") {
  auto bad_name = parseApiResourceList(
      json::parse(R"({"groupVersion": "v1", "resources": [{"name": "pods"}, {"name": 3}]})"));
  REQUIRE_FALSE(bad_name.has_value());
  CHECK(bad_name.error().message == "resources[1].name: expected string, got number");

  auto no_name = parseApiResourceList(
      json::parse(R"({"groupVersion": "v1", "resources": [{"kind": "Pod"}]})"));
  REQUIRE_FALSE(no_name.has_value());
  CHECK(no_name.error().message == "resources[0].name: must not be empty");

  auto bad_namespaced = parseApiResourceList(json::parse(
      R"({"groupVersion": "v1", "resources": [{"name": "pods", "namespaced": "yes"}]})"));
  REQUIRE_FALSE(bad_namespaced.has_value());
  CHECK(bad_namespaced.error().message == "resources[0].namespaced: expected boolean, got string");

  auto bad_list = parseApiResourceList(json::parse(R"({"groupVersion": "v1", "resources": 1})"));
  REQUIRE_FALSE(bad_list.has_value());
  CHECK(bad_list.error().message == "resources: expected array, got number");
}

TEST_CASE("discovery: groupVersion of the core group is the bare version") {
  CHECK(groupVersion("", "v1") == "v1");
  CHECK(groupVersion("policy", "v1") == "policy/v1");
}

TEST_CASE("discovery: an API server that does not answer is tried again, never guessed") {
  boost::asio::io_context io;
  auto guard = boost::asio::make_work_guard(io);
  std::thread runner([&] { io.run(); });
  RestConfig config;
  config.host = "https://127.0.0.1:1";  // nothing listens: connection refused
  config.timeout = std::chrono::milliseconds(2000);
  {
    RestClient client(io, config);
    std::atomic<int> tries{0};
    std::atomic<bool> answered{false};
    DiscoveryRetry retry(client, io, "test discovery", [&](RestClient& c, VersionCallback done) {
      ++tries;
      evictionVersion(c, std::move(done));
    });
    retry.start([&](std::optional<std::string>) { answered = true; });
    // The first retry comes after WatchBackoff's first delay (under a second with jitter).
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (tries < 2 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    CHECK(tries >= 2);
    CHECK_FALSE(answered);
    retry.stop();
    const int after_stop = tries;
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    // A try already under way may finish; no new one starts.
    CHECK(tries <= after_stop + 1);
    CHECK_FALSE(answered);
  }
  guard.reset();
  io.stop();
  runner.join();
}

TEST_CASE("discovery: the Eviction body carries the discovered apiVersion and the options") {
  for (const char* version : {"policy/v1", "policy/v1beta1"}) {
    auto body = evictionBody(version, "ns", "be-0",
                             json::object{{"preconditions", json::object{{"uid", "uid-0"}}}});
    CHECK(body.at("apiVersion").as_string() == version);
    CHECK(body.at("kind").as_string() == "Eviction");
    CHECK(body.at("metadata").at("name").as_string() == "be-0");
    CHECK(body.at("metadata").at("namespace").as_string() == "ns");
    CHECK(body.at("deleteOptions").at("preconditions").at("uid").as_string() == "uid-0");
  }
  // No options: no deleteOptions at all, which the API server reads as the defaults.
  CHECK_FALSE(evictionBody("policy/v1", "ns", "be-0", {}).as_object().contains("deleteOptions"));
}
