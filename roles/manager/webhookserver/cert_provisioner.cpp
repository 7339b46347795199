#include "cert_provisioner.h"

#include <boost/json.hpp>

#include <filesystem>
#include <map>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "koord/core/log.h"
#include "koord/http/cert.h"
#include "koord/http/file_util.h"
#include "koord/kube/kubeconfig.h"
#include "koord/kube/rest_client.h"

namespace koord::roles::manager {

namespace json = boost::json;

namespace {

constexpr const char* kCACert = "ca-cert.pem";
constexpr const char* kCAKey = "ca-key.pem";
constexpr const char* kCert = "cert.pem";
constexpr const char* kKey = "key.pem";
// A create or update that loses a race with another replica is retried after re-reading.
constexpr int kAttempts = 4;

using SecretData = std::map<std::string, std::string>;

struct Secret {
  bool exists = false;
  std::string resource_version;
  SecretData data;
};

kube::ResourceRef secretRef(const std::string& ns, const std::string& name) {
  return {"", "v1", "secrets", ns, name, ""};
}

kube::Error apiFailure(const std::string& what, const kube::ApiError& e) {
  return kube::makeKubeError(fmt::format("{}: {} {}: {}", what, e.code, e.reason, e.message));
}

kube::Expected<Secret> readSecret(kube::RestClient& client, const std::string& ns,
                                  const std::string& name) {
  auto r = client.getSync(secretRef(ns, name));
  if (!r) {
    if (kube::isNotFound(r.error()))
      return Secret{};
    return apiFailure(fmt::format("reading Secret {}/{}", ns, name), r.error());
  }
  Secret s;
  s.exists = true;
  const json::object* obj = r->if_object();
  if (obj == nullptr)
    return kube::makeKubeError(fmt::format("Secret {}/{}: not an object", ns, name));
  if (auto* meta = obj->if_contains("metadata"); meta && meta->is_object()) {
    if (auto* rv = meta->as_object().if_contains("resourceVersion"); rv && rv->is_string())
      s.resource_version = std::string(rv->as_string());
  }
  if (auto* data = obj->if_contains("data"); data && data->is_object()) {
    for (const auto& [k, v] : data->as_object()) {
      if (!v.is_string())
        continue;
      // An undecodable value is treated as missing: the certificate is then issued anew.
      if (auto bytes = kube::decodeBase64(v.as_string()))
        s.data[std::string(k)] = std::move(*bytes);
    }
  }
  return s;
}

json::object secretBody(const std::string& ns, const std::string& name, const Secret& s) {
  json::object data;
  for (const auto& [k, v] : s.data)
    data[k] = kube::encodeBase64(v);
  json::object meta{{"name", name}, {"namespace", ns}};
  meta["labels"] = json::object{{"app.kubernetes.io/managed-by", "koord-manager"}};
  if (!s.resource_version.empty())
    meta["resourceVersion"] = s.resource_version;
  return json::object{{"apiVersion", "v1"},
                      {"kind", "Secret"},
                      {"type", "Opaque"},
                      {"metadata", std::move(meta)},
                      {"data", std::move(data)}};
}

enum class WriteOutcome { kWritten, kLostRace };

kube::Expected<WriteOutcome> writeSecret(kube::RestClient& client, const std::string& ns,
                                         const std::string& name, const Secret& s) {
  auto body = secretBody(ns, name, s);
  auto r = s.exists ? client.updateSync(secretRef(ns, name), std::move(body))
                    : client.createSync(secretRef(ns, ""), std::move(body));
  if (r)
    return WriteOutcome::kWritten;
  if (kube::isConflict(r.error()) || kube::isAlreadyExists(r.error()))
    return WriteOutcome::kLostRace;
  return apiFailure(fmt::format("writing Secret {}/{}", ns, name), r.error());
}

bool expiresSoon(const std::string& cert_pem, std::chrono::system_clock::time_point now,
                 std::chrono::hours renew_before) {
  try {
    return http::certNotAfter(cert_pem) - now < renew_before;
  } catch (const std::exception&) {
    return true;
  }
}

const std::string* find(const SecretData& d, const char* key) {
  auto it = d.find(key);
  return it == d.end() || it->second.empty() ? nullptr : &it->second;
}

}  // namespace

std::string caSecretName(const CertProvisionerConfig& config) {
  return config.secret_name + "-ca";
}

std::vector<std::string> servingNames(const CertProvisionerConfig& c) {
  std::vector<std::string> names{c.service_name, c.service_name + "." + c.namespace_,
                                 c.service_name + "." + c.namespace_ + ".svc",
                                 c.service_name + "." + c.namespace_ + ".svc.cluster.local"};
  if (!c.host.empty())
    names.push_back(c.host);
  return names;
}

CertProvisioner::CertProvisioner(kube::RestClient& client, CertProvisionerConfig config,
                                 Clock& clock)
    : client_(client), config_(std::move(config)), clock_(clock) {}

std::string CertProvisioner::certFile() const {
  return (std::filesystem::path(config_.cert_dir) / kCert).string();
}
std::string CertProvisioner::keyFile() const {
  return (std::filesystem::path(config_.cert_dir) / kKey).string();
}
std::string CertProvisioner::caFile() const {
  return (std::filesystem::path(config_.cert_dir) / kCACert).string();
}

kube::Expected<ProvisionedCerts> CertProvisioner::ensure() {
  const auto& ns = config_.namespace_;
  const std::string ca_name = caSecretName(config_);
  ProvisionedCerts out;
  const auto now = clock_.now();

  // 1. The CA.
  Secret ca;
  for (int attempt = 0;; ++attempt) {
    auto read = readSecret(client_, ns, ca_name);
    if (!read)
      return read.error();
    ca = std::move(*read);
    const std::string* cert = find(ca.data, kCACert);
    const std::string* key = find(ca.data, kCAKey);
    if (cert && key && !expiresSoon(*cert, now, config_.renew_before))
      break;
    if (attempt + 1 >= kAttempts)
      return kube::makeKubeError(fmt::format("Secret {}/{}: lost {} races", ns, ca_name, attempt));
    KOORD_LOG_INFO("webhook certs: issuing a new CA in Secret {}/{} ({})", ns, ca_name,
                   ca.exists ? "the old one is unusable or expiring" : "none yet");
    http::KeyPair pair;
    try {
      pair = http::generateCA("koord-webhook-ca", config_.ca_validity);
    } catch (const std::exception& e) {
      return kube::makeKubeError(fmt::format("issuing the webhook CA: {}", e.what()));
    }
    ca.data = {{kCACert, pair.cert_pem}, {kCAKey, pair.key_pem}};
    auto wrote = writeSecret(client_, ns, ca_name, ca);
    if (!wrote)
      return wrote.error();
    out.changed = true;
  }
  const std::string ca_cert = *find(ca.data, kCACert);
  const http::KeyPair ca_pair{ca_cert, *find(ca.data, kCAKey)};

  // 2. The serving certificate, signed by that CA and valid for every name the apiserver may
  // use to reach us.
  const auto names = servingNames(config_);
  Secret serving;
  for (int attempt = 0;; ++attempt) {
    auto read = readSecret(client_, ns, config_.secret_name);
    if (!read)
      return read.error();
    serving = std::move(*read);
    const std::string* cert = find(serving.data, kCert);
    const std::string* key = find(serving.data, kKey);
    const std::string* bundle = find(serving.data, kCACert);
    bool usable = cert && key && bundle && *bundle == ca_cert &&
                  !expiresSoon(*cert, now, config_.renew_before);
    for (std::size_t i = 0; usable && i < names.size(); ++i)
      usable = http::servingCertUsable(*cert, *key, ca_cert, names[i]);
    // A Secret written by Koordinator carries the CA key beside the serving pair; koord moves
    // it out of reach of the serving Secret's readers.
    const bool leaks_ca_key = serving.data.count(kCAKey) > 0;
    if (usable && !leaks_ca_key)
      break;
    if (attempt + 1 >= kAttempts)
      return kube::makeKubeError(
          fmt::format("Secret {}/{}: lost {} races", ns, config_.secret_name, attempt));
    if (!usable) {
      KOORD_LOG_INFO("webhook certs: issuing a serving certificate for {} in Secret {}/{}",
                     fmt::join(names, ","), ns, config_.secret_name);
      std::vector<std::string> dns;
      std::vector<std::string> ips;
      for (const auto& n : names) {
        // An IP address goes into an IP SAN: Go's and OpenSSL's verifiers never match an IP
        // against a DNS SAN.
        bool is_ip = n.find_first_not_of("0123456789.") == std::string::npos ||
                     n.find(':') != std::string::npos;
        (is_ip ? ips : dns).push_back(n);
      }
      http::KeyPair pair;
      try {
        pair = http::generateServingCert(ca_pair, config_.service_name + "." + ns + ".svc", dns,
                                         ips, config_.serving_validity);
      } catch (const std::exception& e) {
        return kube::makeKubeError(
            fmt::format("issuing the webhook serving certificate: {}", e.what()));
      }
      serving.data[kCert] = pair.cert_pem;
      serving.data[kKey] = pair.key_pem;
      serving.data[kCACert] = ca_cert;
    }
    serving.data.erase(kCAKey);
    auto wrote = writeSecret(client_, ns, config_.secret_name, serving);
    if (!wrote)
      return wrote.error();
    out.changed = true;
  }

  // 3. The files the TLS server reads: the key before the certificate, since the server reloads
  // when the certificate changes and must then find the matching key.
  std::error_code ec;
  std::filesystem::create_directories(config_.cert_dir, ec);
  if (ec)
    return kube::makeKubeError(
        fmt::format("creating the cert dir {}: {}", config_.cert_dir, ec.message()));
  struct File {
    std::string path;
    const std::string& content;
    mode_t mode;
  };
  const File files[] = {{keyFile(), *find(serving.data, kKey), 0600},
                        {caFile(), ca_cert, 0644},
                        {certFile(), *find(serving.data, kCert), 0644}};
  for (const auto& f : files) {
    auto current = http::readFile(f.path);
    if (current && *current == f.content)
      continue;
    if (auto w = http::writeFileAtomic(f.path, f.content, f.mode); !w)
      return kube::makeKubeError(fmt::format("writing {}: {}", f.path, w.error().message()));
    out.changed = true;
  }
  out.ca_pem = ca_cert;
  return out;
}

}  // namespace koord::roles::manager
