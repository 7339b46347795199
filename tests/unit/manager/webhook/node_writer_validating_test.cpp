// /validate-node-writes: a koordlet changes only its own node's Node, NodeMetric and Device, by
// the node its bound token names (directly, or through the pod it was issued to).
#include "webhook/node_writer_validating.h"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include <string>

#include "webhook_test_util.h"

using namespace koord::manager::webhook;
using namespace koord::manager::webhook::testing;

namespace {

constexpr std::string_view kKoordlet = "system:serviceaccount:koordinator-system:koordlet";

// A review of `resource` (with `sub_resource`) named `name`, from `username` with `extra`.
std::string nodeReview(std::string_view resource, std::string_view kind, std::string_view name,
                       std::string_view username, std::string_view extra,
                       std::string_view sub_resource = "status",
                       std::string_view operation = "UPDATE") {
  std::string object = std::string(R"({"kind":")") + std::string(kind) +
                       R"(","metadata":{"name":")" + std::string(name) + R"("}})";
  return std::string(R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":)") +
         R"({"uid":"u-1","operation":")" + std::string(operation) + R"(","name":")" +
         std::string(name) + R"(","resource":{"group":"","version":"v1","resource":")" +
         std::string(resource) + R"("},"subResource":")" + std::string(sub_resource) +
         R"(","userInfo":{"username":")" + std::string(username) + R"(","extra":)" +
         std::string(extra) + R"(},"object":)" + object + R"(,"oldObject":)" + object + "}}";
}

Handler handler() {
  NodeWriterOptions o;
  o.koordlet_usernames = {std::string(kKoordlet)};
  o.pod = [](std::string_view ns, std::string_view name) -> std::optional<PodPlacement> {
    if (ns == "koordinator-system" && name == "koordlet-abc")
      return PodPlacement{"uid-abc", "node-a"};
    return std::nullopt;
  };
  return nodeWriterHandler(std::move(o));
}

constexpr std::string_view kBoundToPod =
    R"({"authentication.kubernetes.io/pod-name":["koordlet-abc"],)"
    R"("authentication.kubernetes.io/pod-uid":["uid-abc"]})";

}  // namespace

TEST_CASE("a koordlet writes its own node's objects only", "[webhook][nodewrites]") {
  Handler h = handler();
  // Before: nothing checked which node a koordlet wrote for; RBAC cannot say "your own".
  for (auto [resource, kind] : {std::pair{"nodemetrics", "NodeMetric"},
                                std::pair{"devices", "Device"}, std::pair{"nodes", "Node"}}) {
    INFO(resource);
    CHECK(serve(nodeReview(resource, kind, "node-a", kKoordlet, kBoundToPod), h).outcome ==
          "allowed");
    auto denied = serve(nodeReview(resource, kind, "node-b", kKoordlet, kBoundToPod), h);
    CHECK(denied.outcome == "denied");
    auto status = parse(denied.body).at("response").at("status");
    CHECK(status.at("code") == 403);
    CHECK_THAT(std::string(status.at("message").as_string()),
               Catch::Contains("the koordlet on node \"node-a\"") && Catch::Contains("\"node-b\""));
    // The main resource too (labels on the Node, a Device's spec).
    CHECK(serve(nodeReview(resource, kind, "node-b", kKoordlet, kBoundToPod, ""), h).outcome ==
          "denied");
  }
  // Kubernetes 1.30+ names the node itself.
  CHECK(serve(nodeReview("nodemetrics", "NodeMetric", "node-c", kKoordlet,
                         R"({"authentication.kubernetes.io/node-name":["node-c"]})"),
              h)
            .outcome == "allowed");
  CHECK(serve(nodeReview("nodemetrics", "NodeMetric", "node-a", kKoordlet,
                         R"({"authentication.kubernetes.io/node-name":["node-c"]})"),
              h)
            .outcome == "denied");
  CHECK(serve(nodeReview("nodes", "Node", "node-b", kKoordlet, kBoundToPod, "", "DELETE"), h)
            .outcome == "denied");
}

TEST_CASE("writes by others, or by a koordlet whose node cannot be told, pass",
          "[webhook][nodewrites]") {
  Handler h = handler();
  // The kubelet's own node status updates are not this webhook's business.
  CHECK(serve(nodeReview("nodes", "Node", "node-b", "system:node:node-b", "{}"), h).outcome ==
        "allowed");
  // A legacy token names no pod: allowed (and logged once), or no koordlet would work there.
  CHECK(serve(nodeReview("nodemetrics", "NodeMetric", "node-b", kKoordlet, "{}"), h).outcome ==
        "allowed");
  // A pod the manager does not know, or one whose UID differs (deleted and recreated), proves
  // nothing either.
  CHECK(serve(nodeReview("nodemetrics", "NodeMetric", "node-b", kKoordlet,
                         R"({"authentication.kubernetes.io/pod-name":["koordlet-abc"],)"
                         R"("authentication.kubernetes.io/pod-uid":["uid-old"]})"),
              h)
            .outcome == "allowed");
  // Malformed extra is a bad review, not a crash.
  CHECK(serve(nodeReview("nodemetrics", "NodeMetric", "node-b", kKoordlet, R"({"x":"y"})"), h)
            .outcome == "bad_request");
  // Other resources are not judged here.
  CHECK(serve(nodeReview("pods", "Pod", "p", kKoordlet, kBoundToPod, ""), h).outcome == "allowed");
}
