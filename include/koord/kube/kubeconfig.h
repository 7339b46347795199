// Where the Kubernetes API server is and how to authenticate to it: kubeconfig files, the
// in-cluster service account, and the flag -> $KUBECONFIG -> in-cluster resolution order.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "koord/kube/error.h"

namespace koord::kube {

/// client-go's rest.Config, reduced to what koord uses. File paths are absolute (relative ones in
/// a kubeconfig are resolved against its directory); PEM fields hold decoded *-data values.
struct RestConfig {
  /// "https://host:port", possibly with a path prefix (an API proxy); no trailing slash.
  std::string host;
  std::string ca_file, ca_pem;
  std::string client_cert_file, client_key_file;
  std::string client_cert_pem, client_key_pem;
  std::string bearer_token;
  /// Re-read about once a minute, as client-go does, so projected (rotating) service-account
  /// tokens keep working; bearer_token is the value to use until the first re-read.
  std::string bearer_token_file;
  bool insecure_skip_verify = false;
  std::string tls_server_name;
  /// The kubeconfig context's namespace ("" when it names none); in-cluster, the pod's own.
  std::string default_namespace;
  /// Client-side rate limit, client-go's defaults. qps <= 0 disables the limiter.
  double qps = 5;
  int burst = 10;
  std::string user_agent;
  /// Whole-request deadline, connect included.
  std::chrono::milliseconds timeout{30000};
};

/// Reads a kubeconfig and builds the config of `context` (the file's current-context when
/// empty). Errors name the file and the key at fault. exec and auth-provider users are refused:
/// koord does not run credential plugins.
Expected<RestConfig> loadKubeconfig(const std::string& path, const std::string& context = "");

inline constexpr const char* kServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount";

/// client-go's InClusterConfig: KUBERNETES_SERVICE_HOST/PORT plus the service account's token,
/// ca.crt and namespace under `root` (a parameter so tests can use a temporary directory).
Expected<RestConfig> inClusterConfig(const std::string& root = kServiceAccountDir);

/// The order koord's roles look for the API server, as controller-runtime does: the
/// --kubeconfig flag, then the first path in $KUBECONFIG, then the in-cluster service account,
/// then ~/.kube/config when it exists.
Expected<RestConfig> resolveConfig(const std::string& kubeconfig_flag);

/// Strict standard base64 (padding required; line breaks and spaces ignored), as Go decodes a
/// kubeconfig's *-data fields. Exposed for tests.
Expected<std::string> decodeBase64(std::string_view in);
/// Standard base64 with padding: how []byte fields (Secret data, caBundle, an admission patch)
/// travel in JSON.
std::string encodeBase64(std::string_view in);

}  // namespace koord::kube
