#include "koord/kube/discovery.h"

#include <fmt/format.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/json.hpp>

#include <algorithm>
#include <mutex>
#include <utility>

#include "koord/core/log.h"
#include "koord/http/client.h"
#include "koord/kube/json_fields.h"
#include "koord/kube/watch.h"

namespace koord::kube {

namespace json = boost::json;

bool ServedGroup::serves(std::string_view version) const {
  return std::find(versions.begin(), versions.end(), version) != versions.end();
}

const ServedResource* ServedResources::find(std::string_view name) const {
  for (const auto& r : resources) {
    if (r.name == name)
      return &r;
  }
  return nullptr;
}

std::string groupVersion(std::string_view group, std::string_view version) {
  return group.empty() ? std::string(version) : fmt::format("{}/{}", group, version);
}

using namespace jsonfields;

Expected<ServedGroup> parseApiGroup(const json::value& v) {
  if (!v.is_object())
    return typeError("", "object", v);
  const auto& root = v.get_object();
  ServedGroup out;
  auto name = stringField(root, "name", "");
  if (!name)
    return name.error();
  out.name = std::move(*name);
  auto versions = objectList(root, "versions", "");
  if (!versions)
    return versions.error();
  for (std::size_t i = 0; i < versions->size(); ++i) {
    const auto path = indexPath("versions", i);
    auto version = stringField(*(*versions)[i], "version", path);
    if (!version)
      return version.error();
    if (version->empty())
      return makeKubeError(childPath(path, "version") + ": must not be empty");
    out.versions.push_back(std::move(*version));
  }
  auto preferred = objectField(root, "preferredVersion", "");
  if (!preferred)
    return preferred.error();
  if (*preferred != nullptr) {
    auto version = stringField(**preferred, "version", "preferredVersion");
    if (!version)
      return version.error();
    out.preferred_version = std::move(*version);
  }
  return out;
}

Expected<ServedResources> parseApiResourceList(const json::value& v) {
  if (!v.is_object())
    return typeError("", "object", v);
  const auto& root = v.get_object();
  ServedResources out;
  auto gv = stringField(root, "groupVersion", "");
  if (!gv)
    return gv.error();
  out.group_version = std::move(*gv);
  auto resources = objectList(root, "resources", "");
  if (!resources)
    return resources.error();
  for (std::size_t i = 0; i < resources->size(); ++i) {
    const auto path = indexPath("resources", i);
    const auto& o = *(*resources)[i];
    ServedResource r;
    for (auto [key, dest] : {std::pair{"name", &r.name}, std::pair{"kind", &r.kind},
                             std::pair{"group", &r.group}, std::pair{"version", &r.version}}) {
      auto s = stringField(o, key, path);
      if (!s)
        return s.error();
      *dest = std::move(*s);
    }
    if (r.name.empty())
      return makeKubeError(childPath(path, "name") + ": must not be empty");
    auto namespaced = boolField(o, "namespaced", path);
    if (!namespaced)
      return namespaced.error();
    r.namespaced = *namespaced;
    out.resources.push_back(std::move(r));
  }
  return out;
}

namespace {

ApiError discoveryError(std::string message) {
  ApiError e;
  e.message = std::move(message);
  return e;
}

// One discovery GET. Through stream() rather than the pooled verbs so that the answer is
// refused once it outgrows kMaxDiscoveryBytes instead of being buffered up to the client's
// general body limit. Not rate limited: discovery is a few GETs at startup and after failures,
// which back off on their own. `done` gets the JSON, or null for a 404 (not served).
void fetchDocument(RestClient& client, const std::string& path,
                   std::function<void(ApiResult<json::value>)> done) {
  std::string what = "GET " + path;
  auto req = client.prepareRequest("GET", path);
  if (!req) {
    done(req.error());
    return;
  }
  struct Answer {
    http::Response response;
    bool too_large = false;
  };
  auto answer = std::make_shared<Answer>();
  // Without an idle limit a server that stops mid-body would hold the discovery forever.
  const auto idle = client.config().timeout.count() > 0 ? client.config().timeout
                                                        : std::chrono::milliseconds(30000);
  client.httpClient().stream(
      std::move(*req),
      [answer](int status, const http::Headers& headers) {
        answer->response.status = status;
        answer->response.headers = headers;
        return true;
      },
      [answer](std::string_view chunk) {
        if (answer->response.body.size() + chunk.size() > kMaxDiscoveryBytes) {
          answer->too_large = true;
          return false;
        }
        answer->response.body.append(chunk);
        return true;
      },
      [answer, what = std::move(what), done = std::move(done)](boost::system::error_code ec) {
        if (answer->too_large) {
          done(discoveryError(
              fmt::format("{}: the answer is over {} bytes", what, kMaxDiscoveryBytes)));
          return;
        }
        if (ec) {
          done(discoveryError(fmt::format("{}: {}", what, ec.message())));
          return;
        }
        if (answer->response.status == 404) {
          done(json::value(nullptr));
          return;
        }
        auto r = decodeApiResponse(what, answer->response);
        if (r && r->is_null()) {
          done(discoveryError(what + ": empty answer"));
          return;
        }
        done(std::move(r));
      },
      idle);
}

ApiError parseError(const std::string& path, const Error& e) {
  return discoveryError(fmt::format("GET {}: {}", path, e.message));
}

}  // namespace

void discoverGroup(RestClient& client, std::string group, GroupCallback done) {
  std::string path = "/apis/" + group;
  fetchDocument(client, path, [path, done = std::move(done)](ApiResult<json::value> r) {
    if (!r) {
      done(r.error());
      return;
    }
    if (r->is_null()) {
      done(ServedGroup{});
      return;
    }
    auto parsed = parseApiGroup(*r);
    if (!parsed) {
      done(parseError(path, parsed.error()));
      return;
    }
    done(std::move(*parsed));
  });
}

void discoverResources(RestClient& client, std::string group, std::string version,
                       ResourcesCallback done) {
  std::string path = group.empty() ? "/api/" + version : "/apis/" + group + "/" + version;
  fetchDocument(client, path, [path, done = std::move(done)](ApiResult<json::value> r) {
    if (!r) {
      done(r.error());
      return;
    }
    if (r->is_null()) {
      done(ServedResources{});
      return;
    }
    auto parsed = parseApiResourceList(*r);
    if (!parsed) {
      done(parseError(path, parsed.error()));
      return;
    }
    done(std::move(*parsed));
  });
}

namespace {

void tryVersion(RestClient& client, std::shared_ptr<const std::vector<std::string>> versions,
                std::size_t i, std::string group, std::string resource, VersionCallback done) {
  if (i >= versions->size()) {
    done(std::optional<std::string>());
    return;
  }
  const std::string version = (*versions)[i];
  discoverResources(client, group, version,
                    [&client, versions, i, group, resource, version,
                     done = std::move(done)](ApiResult<ServedResources> r) mutable {
                      if (!r) {
                        done(r.error());
                        return;
                      }
                      if (r->find(resource) != nullptr) {
                        done(std::optional<std::string>(groupVersion(group, version)));
                        return;
                      }
                      tryVersion(client, std::move(versions), i + 1, std::move(group),
                                 std::move(resource), std::move(done));
                    });
}

}  // namespace

void servedVersionOf(RestClient& client, std::string group, std::string resource,
                     std::vector<std::string> versions, VersionCallback done) {
  tryVersion(client, std::make_shared<const std::vector<std::string>>(std::move(versions)), 0,
             std::move(group), std::move(resource), std::move(done));
}

void evictionVersion(RestClient& client, VersionCallback done) {
  discoverResources(client, "", "v1", [done = std::move(done)](ApiResult<ServedResources> r) {
    if (!r) {
      done(r.error());
      return;
    }
    if (r->group_version.empty()) {
      // /api/v1 itself missing is no answer to act on: something between us and the API
      // server answered, not the API server.
      done(discoveryError("GET /api/v1: not found"));
      return;
    }
    const auto* eviction = r->find("pods/eviction");
    if (eviction == nullptr) {
      done(std::optional<std::string>());
      return;
    }
    // Servers before 1.8 did not say; they took policy/v1beta1.
    if (eviction->group.empty() || eviction->version.empty()) {
      done(std::optional<std::string>("policy/v1beta1"));
      return;
    }
    done(std::optional<std::string>(groupVersion(eviction->group, eviction->version)));
  });
}

boost::json::value evictionBody(std::string_view api_version, std::string_view namespace_,
                                std::string_view name, boost::json::object delete_options) {
  boost::json::object body{
      {"apiVersion", api_version},
      {"kind", "Eviction"},
      {"metadata", boost::json::object{{"name", name}, {"namespace", namespace_}}}};
  if (!delete_options.empty())
    body.emplace("deleteOptions", std::move(delete_options));
  return body;
}

struct DiscoveryRetry::State : std::enable_shared_from_this<State> {
  State(RestClient& c, boost::asio::io_context& io, std::string w, Probe p)
      : client(c), timer(io), what(std::move(w)), probe(std::move(p)) {}

  void attempt() {
    probe(client, [self = shared_from_this()](ApiResult<std::optional<std::string>> r) {
      self->answer(std::move(r));
    });
  }

  // Under `mu` throughout, so stop() waits for a `done` under way and none starts after it.
  void answer(ApiResult<std::optional<std::string>> r) {
    std::lock_guard lock(mu);
    if (stopped)
      return;
    if (r) {
      stopped = true;
      if (failures > 0)
        KOORD_LOG_INFO("{}: the API server answered after {} failed tries", what, failures);
      auto d = std::move(done);
      d(std::move(*r));
      return;
    }
    ++failures;
    const auto delay = backoff.next();
    const std::string error = r.error().code != 0 ? fmt::format("{} {}: {}", r.error().code,
                                                                r.error().reason, r.error().message)
                                                  : r.error().message;
    // The same error again is the same news: logged once, then only at -v=2.
    if (error != last_error) {
      KOORD_LOG_WARNING("{}: discovery failed, retrying until the API server answers: {}", what,
                        error);
      last_error = error;
    } else {
      KOORD_VLOG(2, "{}: discovery failed again (try {}), next in {} ms: {}", what, failures,
                 delay.count(), error);
    }
    timer.expires_after(delay);
    timer.async_wait([self = shared_from_this()](boost::system::error_code ec) {
      if (ec)
        return;
      {
        std::lock_guard lock(self->mu);
        if (self->stopped)
          return;
      }
      self->attempt();
    });
  }

  RestClient& client;
  boost::asio::steady_timer timer;  // under mu
  const std::string what;
  const Probe probe;
  std::mutex mu;
  bool stopped = false;
  std::function<void(std::optional<std::string>)> done;
  WatchBackoff backoff;
  int failures = 0;
  std::string last_error;
};

DiscoveryRetry::DiscoveryRetry(RestClient& client, boost::asio::io_context& io, std::string what,
                               Probe probe)
    : state_(std::make_shared<State>(client, io, std::move(what), std::move(probe))) {}

DiscoveryRetry::~DiscoveryRetry() {
  stop();
}

void DiscoveryRetry::start(std::function<void(std::optional<std::string>)> done) {
  {
    std::lock_guard lock(state_->mu);
    if (state_->stopped)
      return;
    state_->done = std::move(done);
  }
  state_->attempt();
}

void DiscoveryRetry::stop() {
  std::lock_guard lock(state_->mu);
  state_->stopped = true;
  state_->timer.cancel();
}

}  // namespace koord::kube
