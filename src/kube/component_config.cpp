#include "koord/kube/component_config.h"

#include <arpa/inet.h>

#include <boost/json.hpp>

#include <fmt/format.h>

#include <charconv>
#include <utility>

#include "koord/kube/json_fields.h"
#include "koord/kube/strict_fields.h"

namespace koord::kube {

using namespace strict;

namespace {

namespace json = boost::json;
namespace jf = kube::jsonfields;

constexpr std::string_view kInsecureSchedulerPort = "10251";

// Go's net.SplitHostPort: "[v6]:port" or "host:port" with exactly one colon.
std::optional<std::pair<std::string, std::string>> splitHostPort(std::string_view s) {
  if (s.starts_with('[')) {
    const std::size_t close = s.find(']');
    if (close == std::string_view::npos || close + 1 >= s.size() || s[close + 1] != ':')
      return std::nullopt;
    const std::string_view port = s.substr(close + 2);
    if (port.find_first_of("[]:") != std::string_view::npos)
      return std::nullopt;
    return std::pair{std::string(s.substr(1, close - 1)), std::string(port)};
  }
  const std::size_t colon = s.rfind(':');
  if (colon == std::string_view::npos || s.find(':') != colon ||
      s.find_first_of("[]") != std::string_view::npos) {
    return std::nullopt;
  }
  return std::pair{std::string(s.substr(0, colon)), std::string(s.substr(colon + 1))};
}

bool isIP(const std::string& host) {
  unsigned char buf[16];
  return inet_pton(AF_INET, host.c_str(), buf) == 1 || inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

std::string joinHostPort(const std::string& host, std::string_view port) {
  if (host.find(':') != std::string::npos)
    return fmt::format("[{}]:{}", host, port);
  return fmt::format("{}:{}", host, port);
}

std::optional<int> portNumber(std::string_view port) {
  int n = 0;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), n);
  if (ec != std::errc() || end != port.data() + port.size())
    return std::nullopt;
  return n;
}

constexpr std::string_view kNoServing =
    "has no effect in koord, which serves /healthz and /metrics on --address/--port";
constexpr std::string_view kNoProfiling =
    "has no effect in koord, which serves no profiling endpoints";

Expected<void> parseBindAddresses(const json::object& root, BindAddresses addresses,
                                  ComponentBase& out) {
  if (addresses == BindAddresses::kAbsent)
    return {};
  const std::string fallback = joinHostPort("0.0.0.0", kInsecureSchedulerPort);
  for (auto [name, target] : {std::pair{"healthzBindAddress", &out.healthz_bind_address},
                              std::pair{"metricsBindAddress", &out.metrics_bind_address}}) {
    auto written = stringField(root, name, "");
    if (!written)
      return written.error();
    // v1beta2's only values mean "off", which is what upstream did with them too.
    if (addresses == BindAddresses::kV1beta2) {
      if (auto r = v1beta2BindAddress(*written, name); !r)
        return r.error();
      continue;
    }
    auto address = v1beta1BindAddress(*written, name);
    if (!address)
      return address.error();
    *target = std::move(*address);
    if (*target != fallback)
      out.inert_fields.push_back(fmt::format("{}: {:?} {}", name, **written, kNoServing));
  }
  return {};
}

Expected<void> parseProfiling(const json::object& root, ComponentBase& out) {
  auto profiling = boolField(root, "enableProfiling", "");
  if (!profiling)
    return profiling.error();
  out.enable_profiling = profiling->value_or(true);
  auto contention = boolField(root, "enableContentionProfiling", "");
  if (!contention)
    return contention.error();
  // Unset, contention profiling follows profiling (component-base's defaulting).
  out.enable_contention_profiling = contention->value_or(out.enable_profiling);
  if (!out.enable_profiling)
    out.inert_fields.push_back(fmt::format("enableProfiling: false {}", kNoProfiling));
  if (*contention && **contention != out.enable_profiling) {
    out.inert_fields.push_back(
        fmt::format("enableContentionProfiling: {} {}", **contention, kNoProfiling));
  }
  return {};
}

}  // namespace

Expected<void> parseComponentBase(const json::object& root, BindAddresses addresses,
                                  ComponentBase& out) {
  if (auto r = parseLeaderElection(root, out.leader_election); !r)
    return r.error();
  if (auto r = parseClientConnection(root, out.client_connection); !r)
    return r.error();
  if (auto r = parseBindAddresses(root, addresses, out); !r)
    return r.error();
  return parseProfiling(root, out);
}

Expected<std::string> v1beta1BindAddress(const std::optional<std::string>& v,
                                         std::string_view path) {
  const std::string fallback = joinHostPort("0.0.0.0", kInsecureSchedulerPort);
  if (!v || v->empty())
    return fallback;
  std::string host;
  std::string port;
  if (auto hp = splitHostPort(*v)) {
    host = hp->first.empty() ? "0.0.0.0" : hp->first;
    port = hp->second;
  } else if (isIP(*v)) {
    host = *v;
    port = kInsecureSchedulerPort;
  } else {
    return fieldError(path,
                      fmt::format("expected an IP address with an optional port, got {:?}", *v));
  }
  if (!isIP(host)) {
    return fieldError(path, fmt::format("{:?}: host must be a valid IP address (e.g. 10.9.8.7 or "
                                        "2001:db8::ffff)",
                                        *v));
  }
  const auto n = portNumber(port);
  if (!n || *n < 1 || *n > 65535)
    return fieldError(path, fmt::format("{:?}: port must be between 1 and 65535, inclusive", *v));
  return joinHostPort(host, port);
}

Expected<void> v1beta2BindAddress(const std::optional<std::string>& v, std::string_view path) {
  if (!v || v->empty())
    return {};
  const auto hp = splitHostPort(*v);
  if (!hp || portNumber(hp->second) != 0)
    return fieldError(path, fmt::format("{:?}: must be empty or with an explicit 0 port", *v));
  return {};
}

Expected<void> parseClientConnection(const json::object& root, ClientConnection& out) {
  constexpr std::string_view kPath = "clientConnection";
  auto obj = objectField(root, "clientConnection", "");
  if (!obj)
    return obj.error();
  if (*obj == nullptr)
    return {};
  const json::object& o = **obj;
  if (auto r = rejectUnknownFields(
          o, {"kubeconfig", "acceptContentTypes", "contentType", "qps", "burst"}, kPath);
      !r) {
    return r.error();
  }
  auto kubeconfig = stringField(o, "kubeconfig", kPath);
  if (!kubeconfig)
    return kubeconfig.error();
  auto accept = stringField(o, "acceptContentTypes", kPath);
  if (!accept)
    return accept.error();
  auto content = stringField(o, "contentType", kPath);
  if (!content)
    return content.error();
  auto qps = numberField(o, "qps", kPath);
  if (!qps)
    return qps.error();
  auto burst = int32Field(o, "burst", kPath);
  if (!burst)
    return burst.error();
  out.kubeconfig = kubeconfig->value_or("");
  out.accept_content_types = accept->value_or("");
  if (*content && !(*content)->empty())
    out.content_type = **content;
  if (*qps && **qps != 0)
    out.qps = **qps;
  if (*burst && **burst != 0)
    out.burst = **burst;
  if (out.burst < 0)
    return fieldError("clientConnection.burst",
                      fmt::format("must be non-negative, got {}", out.burst));
  return {};
}

Expected<void> parseLeaderElection(const json::object& root, LeaderElection& out) {
  constexpr std::string_view kPath = "leaderElection";
  auto obj = objectField(root, "leaderElection", "");
  if (!obj)
    return obj.error();
  if (*obj != nullptr) {
    const json::object& o = **obj;
    if (auto r =
            rejectUnknownFields(o,
                                {"leaderElect", "leaseDuration", "renewDeadline", "retryPeriod",
                                 "resourceLock", "resourceName", "resourceNamespace"},
                                kPath);
        !r) {
      return r.error();
    }
    auto elect = boolField(o, "leaderElect", kPath);
    if (!elect)
      return elect.error();
    if (*elect)
      out.leader_elect = **elect;
    // A zero duration is unset, as component-base's defaulting reads it.
    const std::pair<std::string_view, std::chrono::nanoseconds*> durations[] = {
        {"leaseDuration", &out.lease_duration},
        {"renewDeadline", &out.renew_deadline},
        {"retryPeriod", &out.retry_period},
    };
    for (const auto& [name, target] : durations) {
      auto d = durationField(o, name, kPath);
      if (!d)
        return d.error();
      if (*d && (*d)->count() != 0)
        *target = **d;
    }
    const std::pair<std::string_view, std::string*> strings[] = {
        {"resourceLock", &out.resource_lock},
        {"resourceName", &out.resource_name},
        {"resourceNamespace", &out.resource_namespace},
    };
    for (const auto& [name, target] : strings) {
      auto s = stringField(o, name, kPath);
      if (!s)
        return s.error();
      if (*s && !(*s)->empty())
        *target = **s;
    }
  }
  if (!out.leader_elect)
    return {};
  const std::pair<std::string_view, std::chrono::nanoseconds> positive[] = {
      {"leaseDuration", out.lease_duration},
      {"renewDeadline", out.renew_deadline},
      {"retryPeriod", out.retry_period},
  };
  for (const auto& [name, d] : positive) {
    if (d.count() <= 0)
      return fieldError(jf::childPath(kPath, name), "must be greater than zero");
  }
  if (out.lease_duration <= out.renew_deadline)
    return fieldError("leaderElection.leaseDuration", "must be greater than renewDeadline");
  // client-go's NewLeaderElector refuses a renew deadline within the retry period's jitter.
  if (static_cast<double>(out.renew_deadline.count()) <=
      1.2 * static_cast<double>(out.retry_period.count())) {
    return fieldError("leaderElection.renewDeadline", "must be greater than 1.2 x retryPeriod");
  }
  if (out.resource_lock != "leases") {
    return fieldError("leaderElection.resourceLock",
                      fmt::format("must be \"leases\", got {:?}", out.resource_lock));
  }
  return {};
}

}  // namespace koord::kube
