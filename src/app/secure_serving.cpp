#include "koord/app/secure_serving.h"

#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <system_error>

#include "koord/app/leader_election_flags.h"
#include "koord/app/role_app.h"
#include "koord/core/log.h"
#include "koord/http/cert.h"
#include "koord/http/file_util.h"

namespace koord::app {

namespace fs = std::filesystem;

namespace {

// The names Kubernetes' secure serving gives the self-signed pair it keeps in --cert-dir.
constexpr const char* kCertName = "apiserver.crt";
constexpr const char* kKeyName = "apiserver.key";
constexpr std::chrono::hours kSelfSignedValidity{24 * 365};

const char* const kWithoutEffect[] = {
    "tls-cipher-suites",   "tls-min-version",        "tls-sni-cert-key",
    "permit-port-sharing", "permit-address-sharing", "http2-max-streams-per-connection",
};

bool usable(const std::string& cert_file, const std::string& key_file) {
  auto cert = http::readFile(cert_file);
  auto key = http::readFile(key_file);
  if (!cert || !key)
    return false;
  try {
    return http::certNotAfter(*cert) > std::chrono::system_clock::now() + std::chrono::hours(24);
  } catch (const std::exception&) {
    return false;
  }
}

void writeOrThrow(const std::string& path, std::string_view content, mode_t mode) {
  auto written = http::writeFileAtomic(path, content, mode);
  if (!written)
    throw ConfigError(
        fmt::format("--cert-dir: cannot write {}: {}", path, written.error().message()));
}

// A CA and a serving certificate for localhost and this host, as Kubernetes makes one for a
// component started without --tls-cert-file: clients that scrape it skip verification.
http::KeyPair generateSelfSigned(const SecureServingOptions& o) {
  std::vector<std::string> ips{"127.0.0.1"};
  if (o.bind_address != "0.0.0.0" && o.bind_address != "::" && !o.bind_address.empty())
    ips.push_back(o.bind_address);
  std::vector<std::string> names{"localhost"};
  if (const std::string host = hostName(); !host.empty() && host != "localhost")
    names.push_back(host);
  try {
    const auto ca =
        http::generateCA(fmt::format("localhost-ca@{}", std::time(nullptr)), kSelfSignedValidity);
    auto leaf = http::generateServingCert(ca, fmt::format("localhost@{}", std::time(nullptr)),
                                          names, ips, kSelfSignedValidity);
    leaf.cert_pem += ca.cert_pem;
    return leaf;
  } catch (const std::exception& e) {
    throw ConfigError(fmt::format("generating a self-signed serving certificate: {}", e.what()));
  }
}

// The pair kept in --cert-dir, made there when it is missing or about to expire.
RoleApp::TlsFiles selfSignedInDir(const fs::path& dir, const SecureServingOptions& o) {
  RoleApp::TlsFiles files{(dir / kCertName).string(), (dir / kKeyName).string(), "", ""};
  if (usable(files.cert_file, files.key_file))
    return files;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    throw ConfigError(fmt::format("--cert-dir={}: {}", dir.string(), ec.message()));
  const auto pair = generateSelfSigned(o);
  writeOrThrow(files.key_file, pair.key_pem, 0600);
  writeOrThrow(files.cert_file, pair.cert_pem, 0644);
  KOORD_LOG_INFO("generated a self-signed serving certificate in {}", dir.string());
  return files;
}

}  // namespace

void addSecureServingFlags(FlagSet& flags, SecureServingOptions& o, int default_port) {
  flags.addString("bind-address", &o.bind_address, "0.0.0.0",
                  "The IP address on which to listen for the --secure-port port.");
  flags.addInt("secure-port", &o.secure_port, default_port,
               "The port on which to serve HTTPS with authentication and authorization. If 0, "
               "don't serve HTTPS at all.");
  flags.addString("cert-dir", &o.cert_dir, "",
                  "The directory where the TLS certs are located. If --tls-cert-file and "
                  "--tls-private-key-file are provided, this flag will be ignored.");
  flags.addString("tls-cert-file", &o.tls_cert_file, "",
                  "File containing the default x509 Certificate for HTTPS (CA cert, if any, "
                  "concatenated after server cert).");
  flags.addString("tls-private-key-file", &o.tls_private_key_file, "",
                  "File containing the default x509 private key matching --tls-cert-file.");
  flags.addStringList("tls-cipher-suites", &o.tls_cipher_suites, {},
                      "Comma-separated list of cipher suites for the server (accepted; koord "
                      "uses OpenSSL's defaults).");
  flags.addString("tls-min-version", &o.tls_min_version, "",
                  "Minimum TLS version supported (accepted; koord uses OpenSSL's defaults).");
  flags.addStringList("tls-sni-cert-key", &o.tls_sni_cert_key, {},
                      "A pair of x509 certificate and private key file paths for SNI (accepted; "
                      "koord serves one certificate).");
  flags.addInt("http2-max-streams-per-connection", &o.http2_max_streams_per_connection, 0,
               "The limit that the server gives to clients for the maximum number of streams in "
               "an HTTP/2 connection (accepted; koord serves HTTP/1.1).");
  flags.addBool("permit-port-sharing", &o.permit_port_sharing, false,
                "If true, SO_REUSEPORT will be used when binding the port (accepted only).");
  flags.addBool("permit-address-sharing", &o.permit_address_sharing, false,
                "If true, SO_REUSEADDR will be used when binding the port (accepted only).");
}

void validateSecureServing(const SecureServingOptions& o) {
  if (o.secure_port < 0 || o.secure_port > 65535)
    throw FlagError(fmt::format("--secure-port={}: must be between 0 and 65535", o.secure_port));
  if (o.tls_cert_file.empty() != o.tls_private_key_file.empty())
    throw FlagError("--tls-cert-file and --tls-private-key-file must be given together");
}

void warnSecureServingWithoutEffect(const FlagSet& flags, std::string_view role) {
  for (const char* name : kWithoutEffect) {
    if (flags.changed(name))
      KOORD_LOG_WARNING("{}: flag --{} has no effect in koord", role, name);
  }
}

uint16_t serveSecureOps(RoleApp& role, const SecureServingOptions& o) {
  if (o.secure_port == 0)
    return 0;
  RoleApp::TlsFiles files{o.tls_cert_file, o.tls_private_key_file, "", ""};
  if (files.cert_file.empty()) {
    if (!o.cert_dir.empty()) {
      files = selfSignedInDir(o.cert_dir, o);
    } else {
      // Nowhere to keep it (the root filesystem may be read-only): it lives in memory only.
      auto pair = generateSelfSigned(o);
      files.cert_pem = std::move(pair.cert_pem);
      files.key_pem = std::move(pair.key_pem);
    }
  }
  return role.serveOps(joinHostPort(o.bind_address, o.secure_port), OpsEndpoints::kAll, &files);
}

}  // namespace koord::app
