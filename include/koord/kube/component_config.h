// component-base's ClientConnection, LeaderElection and Debugging sections of a component's
// configuration file (kube-scheduler's defaults, which a caller may change before parsing), their
// validation, and the healthz/metrics bind addresses of v1beta1/v1beta2-style configurations.
#pragma once

#include <boost/json/fwd.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "koord/kube/error.h"

namespace koord::kube {

/// component-base's ClientConnectionConfiguration with kube-scheduler's defaults.
struct ClientConnection {
  std::string kubeconfig;
  std::string accept_content_types;
  std::string content_type = "application/vnd.kubernetes.protobuf";
  double qps = 50;           // 0 in the file also means 50
  std::int32_t burst = 100;  // 0 in the file also means 100
};

/// component-base's LeaderElectionConfiguration with kube-scheduler's defaults; a zero duration
/// in the file means the default.
struct LeaderElection {
  bool leader_elect = true;
  std::chrono::nanoseconds lease_duration = std::chrono::seconds(15);
  std::chrono::nanoseconds renew_deadline = std::chrono::seconds(10);
  std::chrono::nanoseconds retry_period = std::chrono::seconds(2);
  std::string resource_lock = "leases";
  std::string resource_name = "kube-scheduler";
  std::string resource_namespace = "kube-system";
};

/// The top-level fields kube-scheduler's configuration and Koordinator's DeschedulerConfiguration
/// share. A role's configuration derives from it, so each reads them as its own members.
struct ComponentBase {
  ClientConnection client_connection;
  LeaderElection leader_election;
  /// Defaulted host:port where the version has the fields as v1beta1 had them; empty otherwise.
  std::string healthz_bind_address;
  std::string metrics_bind_address;
  bool enable_profiling = true;
  /// Unset in the file: follows enable_profiling.
  bool enable_contention_profiling = true;
  /// One line per field the file sets to a non-default value that koord accepts but does not act
  /// on: it serves /healthz and /metrics on --address/--port and has no profiling endpoints.
  std::vector<std::string> inert_fields;
};

/// How a configuration's apiVersion reads healthzBindAddress and metricsBindAddress.
enum class BindAddresses {
  kV1beta1,  // defaulted and validated by v1beta1BindAddress
  kV1beta2,  // only empty or port 0 (off), as upstream also ignored them
  kAbsent,   // not in the version; the caller refuses them as unknown fields
};

/// Reads root's leaderElection (over the defaults `out` already holds), clientConnection, bind
/// addresses and profiling switches into `out`, listing the inert ones in out.inert_fields.
Expected<void> parseComponentBase(const boost::json::object& root, BindAddresses addresses,
                                  ComponentBase& out);

/// Reads root.clientConnection (absent: the defaults); burst must not be negative.
Expected<void> parseClientConnection(const boost::json::object& root, ClientConnection& out);
/// Reads root.leaderElection, then, when electing: positive durations, lease > renew deadline >
/// 1.2 x retry period (client-go's rule), resourceLock "leases" (the only lock koord has).
Expected<void> parseLeaderElection(const boost::json::object& root, LeaderElection& out);

/// v1beta1's defaulting then validation: unset -> "0.0.0.0:10251", ":port" -> "0.0.0.0:port",
/// a bare IP gets port 10251; the host must be an IP, the port 1-65535. Kubernetes 1.20 replaced
/// an unparsable address with the default; that is an error here.
Expected<std::string> v1beta1BindAddress(const std::optional<std::string>& v,
                                         std::string_view path);
/// v1beta2 kept the fields only to refuse them: empty, or port 0 (off).
Expected<void> v1beta2BindAddress(const std::optional<std::string>& v, std::string_view path);

}  // namespace koord::kube
