// API discovery: which versions of a group and which resources of a group version the API server
// serves, so a component uses the version its cluster has (policy/v1 from 1.21, policy/v1beta1
// up to 1.24) instead of one that some supported release no longer or not yet serves.
#pragma once

#include <boost/json/fwd.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "koord/kube/error.h"
#include "koord/kube/rest_client.h"

namespace boost::asio {
class io_context;
}

namespace koord::kube {

/// An APIGroup (GET /apis/<group>): the versions served, preferred first when the server says
/// which it prefers. Empty when the server does not serve the group at all.
struct ServedGroup {
  std::string name;
  std::vector<std::string> versions;  // "v1", "v1beta1"
  std::string preferred_version;
  bool serves(std::string_view version) const;
};

/// One entry of an APIResourceList. Subresources are "pods/eviction"; their group and version
/// are set when they differ from the list's (pods/eviction is a policy Eviction).
struct ServedResource {
  std::string name;
  std::string kind;
  std::string group;
  std::string version;
  bool namespaced = false;
};

/// An APIResourceList (GET /api/v1, /apis/<group>/<version>). Empty when the server does not
/// serve the group version.
struct ServedResources {
  std::string group_version;
  std::vector<ServedResource> resources;
  const ServedResource* find(std::string_view name) const;
};

/// Discovery documents are small (/api/v1, the biggest, is tens of KiB); an answer far beyond
/// that is not one, and is refused rather than buffered.
inline constexpr std::size_t kMaxDiscoveryBytes = 1u << 20;

/// Parse the documents; errors name the field.
Expected<ServedGroup> parseApiGroup(const boost::json::value& v);
Expected<ServedResources> parseApiResourceList(const boost::json::value& v);

/// "policy/v1", or "v1" for the core group.
std::string groupVersion(std::string_view group, std::string_view version);

// The calls below answer on the io_context, once. `client` must outlive that answer: a
// servedVersionOf() between two of its GETs still uses it.
using GroupCallback = std::function<void(ApiResult<ServedGroup>)>;
using ResourcesCallback = std::function<void(ApiResult<ServedResources>)>;
/// A group version ("policy/v1"), or nullopt when none of those asked for is served.
using VersionCallback = std::function<void(ApiResult<std::optional<std::string>>)>;

/// GET /apis/<group>. A 404 is an answer: the group is not served (an empty ServedGroup).
void discoverGroup(RestClient& client, std::string group, GroupCallback done);
/// GET /api/<version> for the core group (""), else /apis/<group>/<version>. A 404 is an
/// answer: the group version is not served (an empty ServedResources).
void discoverResources(RestClient& client, std::string group, std::string version,
                       ResourcesCallback done);

/// The first of `versions` (most preferred first) whose group version lists `resource`, as
/// "group/version"; nullopt when none does. Asks one group version after the other.
void servedVersionOf(RestClient& client, std::string group, std::string resource,
                     std::vector<std::string> versions, VersionCallback done);

/// The group version the pods/eviction subresource takes an Eviction body in, as /api/v1 lists
/// it ("policy/v1" from 1.22, "policy/v1beta1" before; kubectl drain asks the same way); nullopt
/// when the server lists no pods/eviction.
void evictionVersion(RestClient& client, VersionCallback done);

/// The Eviction POSTed to pods/{name}/eviction, in the group version evictionVersion answered;
/// `delete_options` (preconditions, grace period; may be empty) goes in as the API has it.
boost::json::value evictionBody(std::string_view api_version, std::string_view namespace_,
                                std::string_view name, boost::json::object delete_options);

/// Runs a discovery until the API server answers: a failed try (no connection, 5xx, 403) is
/// logged and tried again after WatchBackoff's jittered delay, so a component started before
/// its API server waits for it instead of acting on a guess. `done` runs once, on the
/// io_context, with the answer; never after stop() has returned. stop() must not be called from
/// `done` itself.
class DiscoveryRetry {
 public:
  using Probe = std::function<void(RestClient&, VersionCallback)>;

  /// `what` names the discovery in the log lines.
  DiscoveryRetry(RestClient& client, boost::asio::io_context& io, std::string what, Probe probe);
  ~DiscoveryRetry();
  DiscoveryRetry(const DiscoveryRetry&) = delete;
  DiscoveryRetry& operator=(const DiscoveryRetry&) = delete;

  void start(std::function<void(std::optional<std::string>)> done);
  void stop();

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace koord::kube
