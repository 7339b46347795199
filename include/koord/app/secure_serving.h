// Kubernetes' secure-serving flags (--bind-address, --secure-port, --cert-dir, --tls-cert-file,
// --tls-private-key-file, ...) as Koordinator's descheduler takes them, and the HTTPS server for
// /healthz, /readyz and /metrics they describe, with a self-signed certificate when none is given.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "koord/core/flags.h"

namespace koord::app {

class RoleApp;

struct SecureServingOptions {
  std::string bind_address = "0.0.0.0";
  int secure_port = 0;  // 0: no secure serving
  /// Where a generated self-signed pair is kept (and reused); "": in memory only.
  std::string cert_dir;
  std::string tls_cert_file;
  std::string tls_private_key_file;
  // Accepted for compatibility; each one set is named at startup as having no effect.
  std::vector<std::string> tls_cipher_suites;
  std::string tls_min_version;
  std::vector<std::string> tls_sni_cert_key;
  int http2_max_streams_per_connection = 0;
  bool permit_port_sharing = false;
  bool permit_address_sharing = false;
};

/// Registers the flags with `default_port` as --secure-port's default.
void addSecureServingFlags(FlagSet& flags, SecureServingOptions& options, int default_port);

/// Throws FlagError for a port out of range or only one of the cert and key files.
void validateSecureServing(const SecureServingOptions& options);

/// One warning line for each accepted flag that has no effect and was set.
void warnSecureServingWithoutEffect(const FlagSet& flags, std::string_view role);

/// Serves the ops endpoints over TLS on bind-address:secure-port (nothing for port 0): the
/// given pair, else the self-signed pair in cert-dir (generated when absent or unusable). Throws
/// ConfigError when it cannot. Returns the bound port.
uint16_t serveSecureOps(RoleApp& role, const SecureServingOptions& options);

}  // namespace koord::app
