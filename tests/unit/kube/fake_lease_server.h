// One coordination.k8s.io Lease as the apiserver keeps it, for the kube unit tests that run
// leader election against an HttpPeer: create, read and conflict-checked update, nothing else.
#pragma once

#include <boost/json/object.hpp>

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "http_peer.h"

namespace koord::kube::testing {

/// A Status answer, as the apiserver sends with an error code.
koord::testing::PeerReply statusReply(int code, const char* reason);

/// The Lease `name` in `lease_namespace`, with the apiserver's optimistic concurrency: a create
/// when it exists gets 409 AlreadyExists, an update naming a stale resourceVersion 409 Conflict,
/// an update before any create 404. Safe to call from the peer's connection threads.
class FakeLeaseServer {
 public:
  FakeLeaseServer(const std::string& lease_namespace, const std::string& name);

  /// The answer to a request for the Lease (GET, PUT) or its collection (POST); nullopt when
  /// the request is for another path, so that a test's peer can answer it.
  std::optional<koord::testing::PeerReply> serve(const koord::testing::PeerRequest& r);

  /// Another holder takes the Lease (it must exist), as a successor would once it had expired.
  void intrude(const std::string& holder);

  /// spec.holderIdentity of every write, in order ("" for a release).
  std::vector<std::string> holders() const;

 private:
  koord::testing::PeerReply write(boost::json::object body, int code);

  const std::string collection_;
  const std::string path_;
  mutable std::mutex mu_;
  std::optional<boost::json::object> lease_;
  std::uint64_t rv_ = 1;
  std::vector<std::string> holders_;
};

}  // namespace koord::kube::testing
