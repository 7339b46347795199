// How the koordlet reaches the kubelet's /pods: HTTPS on the kubelet's secure port with the
// koordlet's own credentials and a verified serving certificate (Koordinator's default), or, with
// -kubelet-insecure-tls, plain HTTP on the read-only port.
#pragma once

#include <string>

#include "koord/http/client.h"
#include "koord/kube/error.h"
#include "statesinformer/node_info.h"

namespace koord::kube {
struct RestConfig;
}

namespace koord::roles::koordlet {

/// Where the trust anchors for the kubelet's serving certificate come from and which name the
/// certificate must carry.
struct KubeletTls {
  /// PEM file of the CA(s) the kubelet's serving certificate must chain to.
  std::string ca_file;
  /// PEM text instead of a file (the cluster CA of a kubeconfig's certificate-authority-data).
  std::string ca_pem;
  /// The kubelet's self-signed certificate (no tlsCertFile, no serverTLSBootstrap) names only
  /// the node's hostname, never its IPs: check that name (the Node's Hostname address, which
  /// the kubelet takes from the same --hostname-override) instead of the address dialled.
  bool expect_hostname = false;
  /// For the startup line: where the CA came from.
  std::string source;
};

/// The kubelet's CA, in this order:
///  1. `ca_flag` (-kubelet-ca-file) when set;
///  2. the kubelet's config file (`kubelet_config_file`; a missing file means the kubelet runs
///     on its defaults): `serverTLSBootstrap: true` -> the cluster CA of `rest` (the
///     kubelet-serving signer signs with it unless the controller-manager was told otherwise);
///     `tlsCertFile` -> that file (self-signed, or holding its CA after the leaf);
///  3. otherwise the kubelet's self-signed `<var_lib_kubelet_dir>/pki/kubelet.crt`, which
///     carries the CA that signed it.
/// Errors: a config file that exists but cannot be read or parsed; a bootstrap config without
/// a cluster CA.
kube::Expected<KubeletTls> resolveKubeletTls(const std::string& ca_flag,
                                             const std::string& kubelet_config_file,
                                             const std::string& var_lib_kubelet_dir,
                                             const kube::RestConfig& rest);

/// The http client options for the kubelet's secure port: verification on against `tls`, the
/// API server credentials' client certificate (the kubelet's x509 authenticator), `server_name`
/// as the name to check ("" = the host dialled).
http::ClientOptions kubeletClientOptions(const KubeletTls& tls, const kube::RestConfig& rest,
                                         const std::string& server_name,
                                         std::chrono::milliseconds timeout);

/// The name the kubelet's certificate must carry for `node`: its Hostname address when
/// `tls.expect_hostname`, otherwise "" (the address dialled).
std::string kubeletServerName(const KubeletTls& tls, const NodeInfo& node);

}  // namespace koord::roles::koordlet
