// KubeSchedulerConfiguration `extenders`: the HTTP(S) scheduler extenders of every apiVersion,
// decoded strictly and validated as kube-scheduler's ValidateKubeSchedulerConfiguration does.
#pragma once

#include <boost/json/fwd.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "koord/kube/error.h"

namespace koord::roles::scheduler::config {

/// kube-scheduler's DefaultExtenderTimeout: what an unset (or zero) httpTimeout means.
inline constexpr std::chrono::seconds kDefaultExtenderTimeout{5};

struct ExtenderTlsConfig {
  /// Skip verifying the extender's certificate.
  bool insecure = false;
  std::string server_name;
  std::string cert_file;
  std::string key_file;
  std::string ca_file;
  /// PEM text, decoded from the JSON's base64; each takes precedence over its *File.
  std::string cert_data;
  std::string key_data;
  std::string ca_data;
};

struct ExtenderManagedResource {
  std::string name;
  /// NodeResourcesFit leaves the resource out (its ignoredResources, in every profile).
  bool ignored_by_scheduler = false;
};

struct Extender {
  std::string url_prefix;
  /// Empty: the extender does not serve that call.
  std::string filter_verb;
  std::string preempt_verb;
  std::string prioritize_verb;
  std::string bind_verb;
  /// Multiplies the prioritize scores; positive when prioritize_verb is set.
  std::int64_t weight = 0;
  bool enable_https = false;
  std::optional<ExtenderTlsConfig> tls_config;
  /// The whole HTTP call's deadline; an unset or zero httpTimeout is the default.
  std::chrono::nanoseconds http_timeout = kDefaultExtenderTimeout;
  /// Sends node names instead of whole Node objects.
  bool node_cache_capable = false;
  /// Empty: the extender handles every pod; else only pods requesting (or limiting) one of them.
  std::vector<ExtenderManagedResource> managed_resources;
  /// A failing call is logged and skipped instead of failing the pod's cycle.
  bool ignorable = false;
};

/// `extenders` of the document's top level (absent or null: none). Errors name the field, e.g.
///   extenders[0].weight: must have a positive weight applied to it, got 0
///   extenders[1].managedResources[0].name: duplicate extender managed resource name "a.io/b"
///   extenders: only one extender can implement bind, found 2
kube::Expected<std::vector<Extender>> parseExtenders(const boost::json::object& config);

/// The managed resources with ignoredByScheduler, in order, each once.
std::vector<std::string> ignoredExtenderResources(const std::vector<Extender>& extenders);

}  // namespace koord::roles::scheduler::config
