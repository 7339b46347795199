#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>

#include <catch2/catch.hpp>

#include <filesystem>
#include <memory>
#include <set>

#include "koord/http/cert.h"
#include "koord/http/file_util.h"
#include "test_util.h"

using namespace koord::http;
using namespace koord::http::testing;

namespace {

struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
using X509Ptr = std::unique_ptr<X509, X509Free>;

X509Ptr parse(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  X509Ptr cert(PEM_read_bio_X509(bio, nullptr, nullptr, nullptr));
  BIO_free(bio);
  REQUIRE(cert);
  return cert;
}

EVP_PKEY* parseKey(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  EVP_PKEY* key = PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  REQUIRE(key);
  return key;
}

std::string subjectField(X509* cert, int nid) {
  char buf[256] = {};
  X509_NAME_get_text_by_NID(X509_get_subject_name(cert), nid, buf, sizeof buf);
  return buf;
}

bool chainsTo(X509* leaf, X509* ca) {
  X509_STORE* store = X509_STORE_new();
  X509_STORE_add_cert(store, ca);
  X509_STORE_CTX* ctx = X509_STORE_CTX_new();
  X509_STORE_CTX_init(ctx, store, leaf, nullptr);
  bool ok = X509_verify_cert(ctx) == 1;
  X509_STORE_CTX_free(ctx);
  X509_STORE_free(store);
  return ok;
}

int serialBits(X509* cert) {
  BIGNUM* bn = ASN1_INTEGER_to_BN(X509_get0_serialNumber(cert), nullptr);
  int bits = BN_num_bits(bn);
  BN_free(bn);
  return bits;
}

void checkNotAfter(const KeyPair& pair, std::chrono::hours validity) {
  auto expected = std::chrono::system_clock::now() + validity;
  auto not_after = certNotAfter(pair.cert_pem);
  CHECK(not_after > expected - std::chrono::minutes(2));
  CHECK(not_after < expected + std::chrono::minutes(2));
}

}  // namespace

TEST_CASE("cert: generateCA makes a self-signed CA valid for the given time") {
  auto ca = generateCA("koord-root", std::chrono::hours(48));
  auto cert = parse(ca.cert_pem);
  CHECK(X509_check_ca(cert.get()) >= 1);
  CHECK(subjectField(cert.get(), NID_commonName) == "koord-root");
  CHECK(chainsTo(cert.get(), cert.get()));
  EVP_PKEY* key = parseKey(ca.key_pem);
  CHECK(X509_check_private_key(cert.get(), key) == 1);
  CHECK(EVP_PKEY_get_bits(key) == 2048);
  EVP_PKEY_free(key);
  CHECK(X509_get_signature_nid(cert.get()) == NID_sha256WithRSAEncryption);
  checkNotAfter(ca, std::chrono::hours(48));
  // Backdated a little for clock skew, but not by hours.
  CHECK(X509_cmp_current_time(X509_get0_notBefore(cert.get())) < 0);
}

TEST_CASE("cert: serving certificates carry SANs and serverAuth and chain to the CA") {
  auto ca = generateCA("koord-root", std::chrono::hours(24));
  auto serving =
      generateServingCert(ca, "koord-webhook", {"koord-webhook.koord-system.svc", "localhost"},
                          {"10.96.0.10", "::1"}, std::chrono::hours(12));
  auto cert = parse(serving.cert_pem);
  auto ca_cert = parse(ca.cert_pem);
  CHECK(chainsTo(cert.get(), ca_cert.get()));
  CHECK(X509_check_ca(cert.get()) == 0);

  CHECK(X509_check_host(cert.get(), "koord-webhook.koord-system.svc", 0, 0, nullptr) == 1);
  CHECK(X509_check_host(cert.get(), "localhost", 0, 0, nullptr) == 1);
  CHECK(X509_check_host(cert.get(), "other.svc", 0, 0, nullptr) == 0);
  CHECK(X509_check_ip_asc(cert.get(), "10.96.0.10", 0) == 1);
  CHECK(X509_check_ip_asc(cert.get(), "::1", 0) == 1);
  CHECK(X509_check_ip_asc(cert.get(), "10.96.0.11", 0) == 0);

  auto* names = static_cast<GENERAL_NAMES*>(
      X509_get_ext_d2i(cert.get(), NID_subject_alt_name, nullptr, nullptr));
  REQUIRE(names);
  CHECK(sk_GENERAL_NAME_num(names) == 4);
  GENERAL_NAMES_free(names);

  uint32_t eku = X509_get_extended_key_usage(cert.get());
  CHECK((eku & XKU_SSL_SERVER) != 0);
  CHECK((eku & XKU_SSL_CLIENT) == 0);
  CHECK(X509_check_purpose(cert.get(), X509_PURPOSE_SSL_SERVER, 0) == 1);

  EVP_PKEY* key = parseKey(serving.key_pem);
  CHECK(X509_check_private_key(cert.get(), key) == 1);
  EVP_PKEY_free(key);
  checkNotAfter(serving, std::chrono::hours(12));
}

TEST_CASE("cert: client certificates carry organizations and clientAuth") {
  auto ca = generateCA("koord-root", std::chrono::hours(24));
  auto client =
      generateClientCert(ca, "system:koordlet", {"system:nodes", "koord"}, std::chrono::hours(6));
  auto cert = parse(client.cert_pem);
  CHECK(chainsTo(cert.get(), parse(ca.cert_pem).get()));
  CHECK(subjectField(cert.get(), NID_commonName) == "system:koordlet");
  std::set<std::string> orgs;
  X509_NAME* name = X509_get_subject_name(cert.get());
  for (int i = -1; (i = X509_NAME_get_index_by_NID(name, NID_organizationName, i)) >= 0;) {
    ASN1_STRING* data = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(name, i));
    orgs.emplace(reinterpret_cast<const char*>(ASN1_STRING_get0_data(data)),
                 static_cast<std::size_t>(ASN1_STRING_length(data)));
  }
  CHECK(orgs == std::set<std::string>{"system:nodes", "koord"});
  uint32_t eku = X509_get_extended_key_usage(cert.get());
  CHECK((eku & XKU_SSL_CLIENT) != 0);
  CHECK((eku & XKU_SSL_SERVER) == 0);
  checkNotAfter(client, std::chrono::hours(6));
}

TEST_CASE("cert: serials are random and 128 bits wide") {
  const auto& ca = sharedPki("koord-test-ca-1").ca;
  std::set<std::string> serials;
  int widest = 0;
  for (int i = 0; i < 3; ++i) {
    auto cert = parse(generateClientCert(ca, "c", {}, std::chrono::hours(1)).cert_pem);
    BIGNUM* bn = ASN1_INTEGER_to_BN(X509_get0_serialNumber(cert.get()), nullptr);
    char* hex = BN_bn2hex(bn);
    serials.insert(hex);
    OPENSSL_free(hex);
    BN_free(bn);
    widest = std::max(widest, serialBits(cert.get()));
  }
  CHECK(serials.size() == 3);
  CHECK(widest > 96);
  CHECK(widest <= 128);
}

TEST_CASE("cert: bad input throws runtime_error") {
  const auto& ca = sharedPki("koord-test-ca-1").ca;
  CHECK_THROWS_WITH(generateServingCert(ca, "x", {}, {"not-an-ip"}, std::chrono::hours(1)),
                    Catch::Contains("not-an-ip"));
  CHECK_THROWS_AS(
      generateServingCert({"garbage", ca.key_pem}, "x", {"a"}, {}, std::chrono::hours(1)),
      std::runtime_error);
  CHECK_THROWS_AS(certNotAfter("not a certificate"), std::runtime_error);
}

TEST_CASE("cert: servingCertUsable checks signer, key and every name") {
  auto ca = generateCA("usable-ca", std::chrono::hours(24));
  auto other_ca = generateCA("other-ca", std::chrono::hours(24));
  auto leaf = generateServingCert(ca, "svc.ns.svc", {"svc.ns.svc", "svc"}, {"127.0.0.1"},
                                  std::chrono::hours(24));
  CHECK(servingCertUsable(leaf.cert_pem, leaf.key_pem, ca.cert_pem, "svc.ns.svc"));
  CHECK(servingCertUsable(leaf.cert_pem, leaf.key_pem, ca.cert_pem, "svc"));
  CHECK(servingCertUsable(leaf.cert_pem, leaf.key_pem, ca.cert_pem, "127.0.0.1"));
  // A name it was not issued for, an IP only present as text, another CA, another key.
  CHECK_FALSE(servingCertUsable(leaf.cert_pem, leaf.key_pem, ca.cert_pem, "other.ns.svc"));
  CHECK_FALSE(servingCertUsable(leaf.cert_pem, leaf.key_pem, ca.cert_pem, "127.0.0.2"));
  CHECK_FALSE(servingCertUsable(leaf.cert_pem, leaf.key_pem, other_ca.cert_pem, "svc"));
  auto second = generateServingCert(ca, "svc", {"svc"}, {}, std::chrono::hours(24));
  CHECK_FALSE(servingCertUsable(leaf.cert_pem, second.key_pem, ca.cert_pem, "svc"));
  // Garbage is "not usable", never an exception: the caller then issues a new certificate.
  CHECK_FALSE(servingCertUsable("not a cert", leaf.key_pem, ca.cert_pem, "svc"));
  CHECK_FALSE(servingCertUsable(leaf.cert_pem, "not a key", ca.cert_pem, "svc"));
  CHECK_FALSE(servingCertUsable(leaf.cert_pem, leaf.key_pem, "", "svc"));
}

TEST_CASE("file_util: writeFileAtomic replaces the file whole and sets its mode") {
  koord::testing::TempTree dir{"koord-http"};
  auto path = dir.path("secret.key").string();
  REQUIRE(writeFileAtomic(path, "first", 0600));
  auto content = readFile(path);
  REQUIRE(content);
  CHECK(*content == "first");
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);

  std::string big(100000, 'z');
  REQUIRE(writeFileAtomic(path, big, 0644));
  CHECK(readFile(path).value() == big);
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0644);

  // No temporary files left behind.
  auto parent = std::filesystem::path(path).parent_path();
  CHECK(std::distance(std::filesystem::directory_iterator(parent),
                      std::filesystem::directory_iterator()) == 1);

  auto missing = writeFileAtomic(dir.path("no/such/dir/file").string(), "x");
  REQUIRE_FALSE(missing);
  CHECK(missing.error().value() == ENOENT);
  auto unreadable = readFile(dir.path("absent").string());
  REQUIRE_FALSE(unreadable);
  CHECK(unreadable.error().value() == ENOENT);
}
