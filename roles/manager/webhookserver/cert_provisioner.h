// The webhook server's own PKI: a CA and a serving certificate kept in Secrets (the CA's key in
// a Secret of its own), written to the cert dir for the TLS server and renewed before expiry.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "koord/core/clock.h"
#include "koord/kube/error.h"

namespace koord::kube {
class RestClient;
}

namespace koord::roles::manager {

struct CertProvisionerConfig {
  std::string namespace_ = "koordinator-system";
  /// Serving Secret: ca-cert.pem, cert.pem, key.pem (Koordinator's keys, less ca-key.pem).
  std::string secret_name = "koordinator-webhook-certs";
  /// The Service in front of the webhook; the certificate is valid for <svc>.<ns>.svc.
  std::string service_name = "koordinator-webhook-service";
  /// WEBHOOK_HOST: when set, the apiserver calls https://<host>:<port> and the certificate
  /// must be valid for it too (an IP address or a DNS name).
  std::string host;
  std::string cert_dir = "/tmp/koordinator-webhook-certs";
  std::chrono::hours ca_validity{24 * 365 * 10};
  std::chrono::hours serving_validity{24 * 365};
  /// Certificates closer than this to notAfter are replaced; a month of warning is more than
  /// any operator needs to notice a broken renewal.
  std::chrono::hours renew_before{24 * 90};
};

/// The CA Secret's name: the serving Secret's name plus "-ca". Readers of the serving Secret
/// (anything that mounts it) never see the key that could mint certificates.
std::string caSecretName(const CertProvisionerConfig& config);

/// The names the serving certificate must cover: <svc>, <svc>.<ns>, <svc>.<ns>.svc,
/// <svc>.<ns>.svc.cluster.local, and the host when one is set.
std::vector<std::string> servingNames(const CertProvisionerConfig& config);

struct ProvisionedCerts {
  std::string ca_pem;
  /// True when this call issued or replaced a certificate or rewrote a file.
  bool changed = false;
};

/// Ensures both Secrets hold a usable CA and serving certificate and the cert dir holds the
/// same serving pair (atomic writes, so the TLS server's reload never reads half a file).
/// Every replica runs it: creates race on AlreadyExists and updates on resourceVersion, and the
/// loser re-reads what the winner wrote. Blocking (RestClient sync calls): never call it on an
/// io thread.
class CertProvisioner {
 public:
  CertProvisioner(kube::RestClient& client, CertProvisionerConfig config,
                  Clock& clock = Clock::real());

  /// Errors name the Secret or file at fault; nothing is half-written on failure.
  kube::Expected<ProvisionedCerts> ensure();

  const CertProvisionerConfig& config() const { return config_; }
  std::string certFile() const;
  std::string keyFile() const;
  std::string caFile() const;

 private:
  kube::RestClient& client_;
  CertProvisionerConfig config_;
  Clock& clock_;
};

}  // namespace koord::roles::manager
