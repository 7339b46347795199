#include "koord/http/cert.h"

#include <openssl/asn1.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <ctime>
#include <memory>
#include <stdexcept>

#include <fmt/format.h>

#include "openssl_errors.h"

namespace koord::http {

namespace {

template <auto Fn>
struct Deleter {
  template <typename T>
  void operator()(T* p) const {
    Fn(p);
  }
};
using PkeyPtr = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY_free>>;
using X509Ptr = std::unique_ptr<X509, Deleter<X509_free>>;
using BioPtr = std::unique_ptr<BIO, Deleter<BIO_free_all>>;
using BnPtr = std::unique_ptr<BIGNUM, Deleter<BN_free>>;
using NamesPtr = std::unique_ptr<GENERAL_NAMES, Deleter<GENERAL_NAMES_free>>;
using GenNamePtr = std::unique_ptr<GENERAL_NAME, Deleter<GENERAL_NAME_free>>;
using OctetPtr = std::unique_ptr<ASN1_OCTET_STRING, Deleter<ASN1_OCTET_STRING_free>>;
using ExtPtr = std::unique_ptr<X509_EXTENSION, Deleter<X509_EXTENSION_free>>;

// Certificates start this far in the past so that a node whose clock lags still accepts them.
constexpr std::chrono::minutes kBackdate{5};

// Drains OpenSSL's thread-local error queue into the exception text, so a failure names the
// real cause and the queue does not leak into the next, unrelated OpenSSL call.
[[noreturn]] void fail(std::string_view what) {
  throw std::runtime_error(fmt::format("{}: {}", what, detail::drainOpensslErrors()));
}

void check(bool ok, std::string_view what) {
  if (!ok)
    fail(what);
}

PkeyPtr generateKey() {
  PkeyPtr key(EVP_RSA_gen(2048));
  check(key != nullptr, "generating RSA-2048 key");
  return key;
}

PkeyPtr parseKey(const std::string& pem) {
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  check(bio != nullptr, "allocating BIO");
  PkeyPtr key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  check(key != nullptr, "parsing CA private key");
  return key;
}

X509Ptr parseCert(std::string_view pem, std::string_view what) {
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  check(bio != nullptr, "allocating BIO");
  X509Ptr cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  check(cert != nullptr, what);
  return cert;
}

std::string bioString(BIO* bio) {
  char* data = nullptr;
  long len = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<std::size_t>(len));
}

std::string certPem(X509* cert) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  check(bio && PEM_write_bio_X509(bio.get(), cert) == 1, "encoding certificate");
  return bioString(bio.get());
}

std::string keyPem(EVP_PKEY* key) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  check(bio && PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr) == 1,
        "encoding private key");
  return bioString(bio.get());
}

void addExtension(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  ExtPtr ext(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value));
  check(ext != nullptr, fmt::format("building extension {}={}", OBJ_nid2sn(nid), value));
  check(X509_add_ext(cert, ext.get(), -1) == 1, "adding extension");
}

void addName(X509_NAME* name, const char* field, std::string_view value) {
  check(X509_NAME_add_entry_by_txt(name, field, MBSTRING_UTF8,
                                   reinterpret_cast<const unsigned char*>(value.data()),
                                   static_cast<int>(value.size()), -1, 0) == 1,
        fmt::format("setting subject {}={}", field, value));
}

// The fields every certificate shares; `issuer` is null for a self-signed CA.
X509Ptr newCert(EVP_PKEY* key, std::string_view common_name,
                const std::vector<std::string>& organizations, std::chrono::hours validity,
                X509* issuer) {
  X509Ptr cert(X509_new());
  check(cert != nullptr, "allocating certificate");
  check(X509_set_version(cert.get(), 2) == 1, "setting version");  // 2 means v3

  BnPtr serial(BN_new());
  check(serial && BN_rand(serial.get(), 128, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) == 1,
        "generating serial");
  if (BN_is_zero(serial.get()))
    BN_one(serial.get());  // RFC 5280 wants a positive serial
  check(BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(cert.get())) != nullptr,
        "setting serial");

  auto backdate = std::chrono::duration_cast<std::chrono::seconds>(kBackdate).count();
  auto lifetime = std::chrono::duration_cast<std::chrono::seconds>(validity).count();
  check(X509_gmtime_adj(X509_getm_notBefore(cert.get()), -backdate) != nullptr,
        "setting notBefore");
  check(X509_gmtime_adj(X509_getm_notAfter(cert.get()), lifetime) != nullptr, "setting notAfter");

  X509_NAME* name = X509_get_subject_name(cert.get());
  for (const auto& org : organizations)
    addName(name, "O", org);
  addName(name, "CN", common_name);
  check(X509_set_issuer_name(cert.get(), issuer ? X509_get_subject_name(issuer) : name) == 1,
        "setting issuer");
  check(X509_set_pubkey(cert.get(), key) == 1, "setting public key");
  return cert;
}

void sign(X509* cert, EVP_PKEY* key) {
  check(X509_sign(cert, key, EVP_sha256()) > 0, "signing certificate");
}

void addSubjectAltNames(X509* cert, const std::vector<std::string>& dns_names,
                        const std::vector<std::string>& ip_addresses) {
  if (dns_names.empty() && ip_addresses.empty())
    return;
  // Built from GENERAL_NAMEs rather than an "DNS:a,IP:b" config string, so that a name with a
  // comma cannot smuggle in another entry.
  NamesPtr names(GENERAL_NAMES_new());
  check(names != nullptr, "allocating subjectAltName");
  for (const auto& dns : dns_names) {
    GenNamePtr gen(GENERAL_NAME_new());
    ASN1_IA5STRING* ia5 = ASN1_IA5STRING_new();
    check(gen && ia5, "allocating DNS name");
    if (ASN1_STRING_set(ia5, dns.data(), static_cast<int>(dns.size())) != 1) {
      ASN1_IA5STRING_free(ia5);
      fail("setting DNS name");
    }
    GENERAL_NAME_set0_value(gen.get(), GEN_DNS, ia5);
    check(sk_GENERAL_NAME_push(names.get(), gen.get()) > 0, "adding DNS name");
    gen.release();
  }
  for (const auto& ip : ip_addresses) {
    OctetPtr octets(a2i_IPADDRESS(ip.c_str()));
    if (!octets) {
      ERR_clear_error();
      throw std::runtime_error(fmt::format("invalid IP address for subjectAltName: '{}'", ip));
    }
    GenNamePtr gen(GENERAL_NAME_new());
    check(gen != nullptr, "allocating IP name");
    GENERAL_NAME_set0_value(gen.get(), GEN_IPADD, octets.release());
    check(sk_GENERAL_NAME_push(names.get(), gen.get()) > 0, "adding IP name");
    gen.release();
  }
  check(X509_add1_ext_i2d(cert, NID_subject_alt_name, names.get(), 0, X509V3_ADD_DEFAULT) == 1,
        "adding subjectAltName");
}

KeyPair issueLeaf(const KeyPair& ca, std::string_view common_name,
                  const std::vector<std::string>& organizations,
                  const std::vector<std::string>& dns_names,
                  const std::vector<std::string>& ip_addresses, std::chrono::hours validity,
                  const char* eku) {
  X509Ptr ca_cert = parseCert(ca.cert_pem, "parsing CA certificate");
  PkeyPtr ca_key = parseKey(ca.key_pem);
  PkeyPtr key = generateKey();
  X509Ptr cert = newCert(key.get(), common_name, organizations, validity, ca_cert.get());
  addExtension(cert.get(), ca_cert.get(), NID_basic_constraints, "critical,CA:FALSE");
  addExtension(cert.get(), ca_cert.get(), NID_key_usage,
               "critical,digitalSignature,keyEncipherment");
  addExtension(cert.get(), ca_cert.get(), NID_ext_key_usage, eku);
  addExtension(cert.get(), ca_cert.get(), NID_subject_key_identifier, "hash");
  addExtension(cert.get(), ca_cert.get(), NID_authority_key_identifier, "keyid:always");
  addSubjectAltNames(cert.get(), dns_names, ip_addresses);
  sign(cert.get(), ca_key.get());
  return {certPem(cert.get()), keyPem(key.get())};
}

}  // namespace

KeyPair generateCA(std::string_view common_name, std::chrono::hours validity) {
  PkeyPtr key = generateKey();
  X509Ptr cert = newCert(key.get(), common_name, {}, validity, nullptr);
  addExtension(cert.get(), cert.get(), NID_basic_constraints, "critical,CA:TRUE");
  addExtension(cert.get(), cert.get(), NID_key_usage,
               "critical,digitalSignature,keyEncipherment,keyCertSign,cRLSign");
  addExtension(cert.get(), cert.get(), NID_subject_key_identifier, "hash");
  sign(cert.get(), key.get());
  return {certPem(cert.get()), keyPem(key.get())};
}

KeyPair generateServingCert(const KeyPair& ca, std::string_view common_name,
                            const std::vector<std::string>& dns_names,
                            const std::vector<std::string>& ip_addresses,
                            std::chrono::hours validity) {
  return issueLeaf(ca, common_name, {}, dns_names, ip_addresses, validity, "serverAuth");
}

KeyPair generateClientCert(const KeyPair& ca, std::string_view common_name,
                           const std::vector<std::string>& organizations,
                           std::chrono::hours validity) {
  return issueLeaf(ca, common_name, organizations, {}, {}, validity, "clientAuth");
}

std::chrono::system_clock::time_point certNotAfter(std::string_view cert_pem) {
  X509Ptr cert = parseCert(cert_pem, "parsing certificate");
  std::tm tm{};
  check(ASN1_TIME_to_tm(X509_get0_notAfter(cert.get()), &tm) == 1, "reading notAfter");
  return std::chrono::system_clock::from_time_t(timegm(&tm));
}

bool servingCertUsable(std::string_view cert_pem, std::string_view key_pem, std::string_view ca_pem,
                       std::string_view name) {
  try {
    X509Ptr cert = parseCert(cert_pem, "parsing certificate");
    X509Ptr ca = parseCert(ca_pem, "parsing CA certificate");
    BioPtr key_bio(BIO_new_mem_buf(key_pem.data(), static_cast<int>(key_pem.size())));
    PkeyPtr key(key_bio ? PEM_read_bio_PrivateKey(key_bio.get(), nullptr, nullptr, nullptr)
                        : nullptr);
    EVP_PKEY* ca_key = X509_get0_pubkey(ca.get());
    bool ok = key != nullptr && ca_key != nullptr && X509_verify(cert.get(), ca_key) == 1 &&
              X509_check_private_key(cert.get(), key.get()) == 1;
    if (ok) {
      std::string n(name);
      ok = X509_check_ip_asc(cert.get(), n.c_str(), 0) == 1 ||
           X509_check_host(cert.get(), n.data(), n.size(), 0, nullptr) == 1;
    }
    // A refused certificate leaves reasons on the thread's queue; they must not surface in
    // the next, unrelated OpenSSL call.
    detail::drainOpensslErrors();
    return ok;
  } catch (const std::runtime_error&) {
    return false;
  }
}

}  // namespace koord::http
