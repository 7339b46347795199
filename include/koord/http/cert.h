// X.509 generation for the certificates koord issues itself (webhook serving certs, test PKIs):
// RSA-2048 keys, SHA-256 signatures, 128-bit random serials.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

namespace koord::http {

struct KeyPair {
  std::string cert_pem;
  std::string key_pem;  // PKCS#8
};

/// All generators throw std::runtime_error with OpenSSL's error text on failure. Certificates
/// are valid from a few minutes in the past, to tolerate clock skew between nodes.
KeyPair generateCA(std::string_view common_name, std::chrono::hours validity);

/// A serverAuth leaf signed by `ca`, with DNS and IP subjectAltNames. Throws on an IP address
/// that does not parse.
KeyPair generateServingCert(const KeyPair& ca, std::string_view common_name,
                            const std::vector<std::string>& dns_names,
                            const std::vector<std::string>& ip_addresses,
                            std::chrono::hours validity);

/// A clientAuth leaf signed by `ca`; Kubernetes reads the organizations as groups.
KeyPair generateClientCert(const KeyPair& ca, std::string_view common_name,
                           const std::vector<std::string>& organizations,
                           std::chrono::hours validity);

/// The notAfter of the first certificate in `cert_pem`. Throws std::runtime_error if it does
/// not parse.
std::chrono::system_clock::time_point certNotAfter(std::string_view cert_pem);

/// Whether `cert_pem` is a certificate that `ca_pem` signed, valid for `name` (a DNS name or
/// an IP address, matched against its subjectAltNames), and whose key is `key_pem`. False, never
/// a throw, for anything that does not parse: the caller's answer to false is to issue anew.
bool servingCertUsable(std::string_view cert_pem, std::string_view key_pem, std::string_view ca_pem,
                       std::string_view name);

}  // namespace koord::http
