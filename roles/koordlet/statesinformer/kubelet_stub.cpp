#include "statesinformer/kubelet_stub.h"

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "koord/kube/kubeconfig.h"

namespace koord::roles::koordlet {

namespace fs = std::filesystem;

kube::Expected<KubeletTls> resolveKubeletTls(const std::string& ca_flag,
                                             const std::string& kubelet_config_file,
                                             const std::string& var_lib_kubelet_dir,
                                             const kube::RestConfig& rest) {
  KubeletTls tls;
  if (!ca_flag.empty()) {
    tls.ca_file = ca_flag;
    tls.source = "-kubelet-ca-file " + ca_flag;
    return tls;
  }
  bool bootstrap = false;
  std::string cert_file;
  std::error_code ec;
  const bool have_config = !kubelet_config_file.empty() && fs::exists(kubelet_config_file, ec);
  if (have_config) {
    std::ifstream in(kubelet_config_file, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    if (!in)
      return kube::makeKubeError(
          fmt::format("cannot read the kubelet config {}", kubelet_config_file));
    try {
      const YAML::Node root = YAML::Load(text.str());
      if (!root.IsMap())
        return kube::makeKubeError(
            fmt::format("kubelet config {}: not a KubeletConfiguration", kubelet_config_file));
      if (const auto b = root["serverTLSBootstrap"])
        bootstrap = b.as<bool>();
      if (const auto c = root["tlsCertFile"])
        cert_file = c.as<std::string>();
    } catch (const YAML::Exception& e) {
      return kube::makeKubeError(
          fmt::format("kubelet config {}: {}", kubelet_config_file, e.what()));
    }
  }
  if (bootstrap) {
    if (rest.ca_file.empty() && rest.ca_pem.empty())
      return kube::makeKubeError(fmt::format(
          "kubelet config {}: serverTLSBootstrap, but the API server config names no CA to check "
          "the kubelet's certificate with: set -kubelet-ca-file",
          kubelet_config_file));
    tls.ca_file = rest.ca_file;
    tls.ca_pem = rest.ca_pem;
    tls.source = fmt::format("the cluster CA (serverTLSBootstrap in {})", kubelet_config_file);
    return tls;
  }
  if (!cert_file.empty()) {
    // The kubelet resolves relative paths in its config file against the file's directory.
    fs::path p(cert_file);
    if (p.is_relative())
      p = fs::path(kubelet_config_file).parent_path() / p;
    tls.ca_file = p.string();
    tls.source =
        fmt::format("the kubelet's tlsCertFile {} (from {})", tls.ca_file, kubelet_config_file);
    return tls;
  }
  tls.ca_file = (fs::path(var_lib_kubelet_dir) / "pki" / "kubelet.crt").string();
  tls.expect_hostname = true;
  tls.source =
      fmt::format("the kubelet's self-signed {} ({}), for the Node's Hostname address", tls.ca_file,
                  have_config ? "no tlsCertFile in " + kubelet_config_file
                              : "no kubelet config at " + kubelet_config_file);
  return tls;
}

http::ClientOptions kubeletClientOptions(const KubeletTls& tls, const kube::RestConfig& rest,
                                         const std::string& server_name,
                                         std::chrono::milliseconds timeout) {
  http::ClientOptions co;
  co.ca_file = tls.ca_file;
  co.ca_pem = tls.ca_pem;
  co.insecure_skip_verify = false;
  co.server_name = server_name;
  // The kubelet's x509 authenticator accepts the API server credentials' client certificate;
  // the bearer token goes with each request (re-read from its file as the RestClient does).
  co.client_cert_file = rest.client_cert_file;
  co.client_key_file = rest.client_key_file;
  co.client_cert_pem = rest.client_cert_pem;
  co.client_key_pem = rest.client_key_pem;
  co.request_timeout = timeout;
  co.connect_timeout = timeout;
  co.max_idle_per_host = 1;
  co.user_agent = "koordlet";
  return co;
}

std::string kubeletServerName(const KubeletTls& tls, const NodeInfo& node) {
  if (!tls.expect_hostname)
    return "";
  for (const auto& [type, address] : node.addresses) {
    if (type == "Hostname")
      return address;
  }
  return "";
}

}  // namespace koord::roles::koordlet
