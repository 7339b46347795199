#include "fake_lease_server.h"

#include <boost/json.hpp>
#include <catch2/catch.hpp>

namespace koord::kube::testing {

namespace json = boost::json;
using koord::testing::PeerReply;
using koord::testing::PeerRequest;

PeerReply statusReply(int code, const char* reason) {
  return {code,
          json::serialize(json::object{{"kind", "Status"},
                                       {"apiVersion", "v1"},
                                       {"status", "Failure"},
                                       {"reason", reason},
                                       {"code", code}}),
          {}};
}

FakeLeaseServer::FakeLeaseServer(const std::string& lease_namespace, const std::string& name)
    : collection_("/apis/coordination.k8s.io/v1/namespaces/" + lease_namespace + "/leases"),
      path_(collection_ + "/" + name) {}

std::optional<PeerReply> FakeLeaseServer::serve(const PeerRequest& r) {
  if (r.path != path_ && r.path != collection_)
    return std::nullopt;
  std::lock_guard lock(mu_);
  if (r.method == "GET" && r.path == path_)
    return lease_ ? PeerReply{200, json::serialize(*lease_), {}} : statusReply(404, "NotFound");
  const bool create = r.method == "POST" && r.path == collection_;
  const bool update = r.method == "PUT" && r.path == path_;
  if (!create && !update)
    return statusReply(405, "MethodNotAllowed");
  boost::system::error_code ec;
  json::value body = json::parse(r.body, ec);
  if (ec || !body.is_object())
    return statusReply(400, "BadRequest");
  if (create) {
    if (lease_)
      return statusReply(409, "AlreadyExists");
    return write(std::move(body.as_object()), 201);
  }
  if (!lease_)
    return statusReply(404, "NotFound");
  const auto* metadata = body.as_object().if_contains("metadata");
  const auto* rv = metadata != nullptr && metadata->is_object()
                       ? metadata->as_object().if_contains("resourceVersion")
                       : nullptr;
  if (rv == nullptr || !rv->is_string() || rv->as_string() != std::to_string(rv_))
    return statusReply(409, "Conflict");
  return write(std::move(body.as_object()), 200);
}

void FakeLeaseServer::intrude(const std::string& holder) {
  std::lock_guard lock(mu_);
  REQUIRE(lease_);
  json::object lease = *lease_;
  lease["spec"].as_object()["holderIdentity"] = holder;
  write(std::move(lease), 200);
}

std::vector<std::string> FakeLeaseServer::holders() const {
  std::lock_guard lock(mu_);
  return holders_;
}

PeerReply FakeLeaseServer::write(json::object body, int code) {
  body["metadata"].as_object()["resourceVersion"] = std::to_string(++rv_);
  const auto* spec = body.if_contains("spec");
  const auto* holder = spec != nullptr && spec->is_object()
                           ? spec->as_object().if_contains("holderIdentity")
                           : nullptr;
  holders_.push_back(holder != nullptr && holder->is_string() ? std::string(holder->as_string())
                                                              : "");
  lease_ = body;
  return {code, json::serialize(body), {}};
}

}  // namespace koord::kube::testing
