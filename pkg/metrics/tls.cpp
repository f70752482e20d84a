#include "pkg/metrics/tls.h"

#include <openssl/bio.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/tls1.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <functional>
#include <map>
#include <memory>

#include "pkg/kube/token_source.h"

namespace kdesched::metrics {
namespace {

template <typename T, void (*F)(T*)>
struct Deleter {
  void operator()(T* p) const { F(p); }
};
using Key = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY, EVP_PKEY_free>>;
using Cert = std::unique_ptr<X509, Deleter<X509, X509_free>>;
void freeBio(BIO* b) { BIO_free(b); }
using Bio = std::unique_ptr<BIO, Deleter<BIO, freeBio>>;

std::string pemOf(const std::function<int(BIO*)>& write) {
  Bio bio(BIO_new(BIO_s_mem()));
  if (!bio || write(bio.get()) != 1) return "";
  char* data = nullptr;
  long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<std::size_t>(n));
}

bool addExtension(X509* cert, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  if (!ext) return false;
  const bool ok = X509_add_ext(cert, ext, -1) == 1;
  X509_EXTENSION_free(ext);
  return ok;
}

// Bounded as the kubeconfig and the files it names are: a flag pointing at /dev/zero or a disk
// must fail at start with the flag and the file named, not read until memory runs out.
Result<std::string> readFile(const std::string& path, const std::string& flag) {
  auto text = kube::readBoundedFile(path, kube::kMaxCredentialFileBytes);
  if (!text.isOk()) return Status::error(flag + ": cannot read " + path + ": " + text.error());
  return text;
}

}  // namespace

Result<CertificatePair> selfSignedCertificate(const std::string& host, Clock::WallTime now) {
  Key key(EVP_EC_gen("P-256"));
  Cert cert(X509_new());
  if (!key || !cert) return Status::error("cannot generate a self-signed serving certificate: key generation failed");
  time_t unixNow =
      static_cast<time_t>(std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count());
  X509_set_version(cert.get(), 2);
  ASN1_INTEGER_set_int64(X509_get_serialNumber(cert.get()), unixNow);
  X509_time_adj_ex(X509_getm_notBefore(cert.get()), 0, -3600, &unixNow);
  X509_time_adj_ex(X509_getm_notAfter(cert.get()), 365, 0, &unixNow);
  X509_set_pubkey(cert.get(), key.get());
  const std::string cn = host + "@" + std::to_string(unixNow);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
  X509_set_issuer_name(cert.get(), name);
  std::string sans = "DNS:localhost,IP:127.0.0.1,IP:::1";
  if (!host.empty() && host != "localhost") sans = "DNS:" + host + "," + sans;
  if (!addExtension(cert.get(), NID_subject_alt_name, sans) ||
      !addExtension(cert.get(), NID_key_usage, "critical,digitalSignature,keyEncipherment,keyCertSign") ||
      !addExtension(cert.get(), NID_ext_key_usage, "serverAuth") ||
      !addExtension(cert.get(), NID_basic_constraints, "critical,CA:TRUE") ||
      X509_sign(cert.get(), key.get(), EVP_sha256()) == 0)
    return Status::error("cannot generate a self-signed serving certificate for \"" + host + "\"");
  CertificatePair pair;
  pair.certificatePem = pemOf([&](BIO* b) { return PEM_write_bio_X509(b, cert.get()); });
  pair.privateKeyPem =
      pemOf([&](BIO* b) { return PEM_write_bio_PrivateKey(b, key.get(), nullptr, nullptr, 0, nullptr, nullptr); });
  if (pair.certificatePem.empty() || pair.privateKeyPem.empty())
    return Status::error("cannot encode the self-signed serving certificate");
  return pair;
}

Result<CertificatePair> loadCertificateFiles(const std::string& certFile, const std::string& keyFile) {
  auto certPem = readFile(certFile, "--tls-cert-file");
  if (!certPem) return certPem.status();
  auto keyPem = readFile(keyFile, "--tls-private-key-file");
  if (!keyPem) return keyPem.status();
  Bio certBio(BIO_new_mem_buf(certPem->data(), static_cast<int>(certPem->size())));
  Cert cert(PEM_read_bio_X509(certBio.get(), nullptr, nullptr, nullptr));
  if (!cert) return Status::error("--tls-cert-file: " + certFile + " holds no PEM certificate");
  Bio keyBio(BIO_new_mem_buf(keyPem->data(), static_cast<int>(keyPem->size())));
  Key key(PEM_read_bio_PrivateKey(keyBio.get(), nullptr, nullptr, nullptr));
  if (!key) return Status::error("--tls-private-key-file: " + keyFile + " holds no unencrypted PEM private key");
  if (X509_check_private_key(cert.get(), key.get()) != 1)
    return Status::error("--tls-private-key-file: the key in " + keyFile + " does not match the certificate in " +
                         certFile);
  return CertificatePair{std::move(*certPem), std::move(*keyPem)};
}

Result<int> tlsMinVersion(const std::string& name) {
  if (name.empty() || name == "VersionTLS12") return TLS1_2_VERSION;
  if (name == "VersionTLS10") return TLS1_VERSION;
  if (name == "VersionTLS11") return TLS1_1_VERSION;
  if (name == "VersionTLS13") return TLS1_3_VERSION;
  return Status::error("--tls-min-version: \"" + name +
                       "\" is not one of VersionTLS10, VersionTLS11, VersionTLS12, VersionTLS13");
}

namespace {

// Go 1.26's tls.CipherSuites() and tls.InsecureCipherSuites() for TLS 1.0-1.2, plus the two legacy
// aliases k8s.io/component-base/cli/flag keeps; the TLS 1.3 names are accepted and have no effect.
constexpr std::array<const char*, 22> kGoTls12Suites = {"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA",
                                                        "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA",
                                                        "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA",
                                                        "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA",
                                                        "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
                                                        "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
                                                        "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
                                                        "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
                                                        "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
                                                        "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
                                                        "TLS_RSA_WITH_RC4_128_SHA",
                                                        "TLS_RSA_WITH_3DES_EDE_CBC_SHA",
                                                        "TLS_RSA_WITH_AES_128_CBC_SHA",
                                                        "TLS_RSA_WITH_AES_256_CBC_SHA",
                                                        "TLS_RSA_WITH_AES_128_CBC_SHA256",
                                                        "TLS_RSA_WITH_AES_128_GCM_SHA256",
                                                        "TLS_RSA_WITH_AES_256_GCM_SHA384",
                                                        "TLS_ECDHE_ECDSA_WITH_RC4_128_SHA",
                                                        "TLS_ECDHE_RSA_WITH_RC4_128_SHA",
                                                        "TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA",
                                                        "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256",
                                                        "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256"};
constexpr std::array<const char*, 3> kGoTls13Suites = {"TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384",
                                                       "TLS_CHACHA20_POLY1305_SHA256"};

std::string goCanonicalName(const std::string& name) {
  if (name == "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305") return "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256";
  if (name == "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305") return "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256";
  return name;
}

// IANA name -> OpenSSL name of every TLS 1.0-1.2 suite a server context offers at the default
// security level.
std::map<std::string, std::string> opensslSuites() {
  std::map<std::string, std::string> out;
  std::unique_ptr<SSL_CTX, Deleter<SSL_CTX, SSL_CTX_free>> ctx(SSL_CTX_new(TLS_server_method()));
  if (!ctx || SSL_CTX_set_cipher_list(ctx.get(), "ALL") != 1) return out;
  STACK_OF(SSL_CIPHER)* ciphers = SSL_CTX_get_ciphers(ctx.get());
  for (int i = 0; i < sk_SSL_CIPHER_num(ciphers); ++i) {
    const SSL_CIPHER* c = sk_SSL_CIPHER_value(ciphers, i);
    if (const char* standard = SSL_CIPHER_standard_name(c)) out[standard] = SSL_CIPHER_get_name(c);
  }
  return out;
}

template <std::size_t N>
bool among(const std::array<const char*, N>& names, const std::string& name) {
  return std::any_of(names.begin(), names.end(), [&](const char* n) { return name == n; });
}

}  // namespace

Result<CipherSelection> tlsCipherSuites(const std::vector<std::string>& names) {
  CipherSelection out;
  if (names.empty()) return out;
  const std::map<std::string, std::string> available = opensslSuites();
  for (const std::string& given : names) {
    const std::string name = goCanonicalName(given);
    if (among(kGoTls13Suites, name)) continue;
    if (!among(kGoTls12Suites, name))
      return Status::error("--tls-cipher-suites: Cipher suite " + given + " not supported or doesn't exist");
    auto it = available.find(name);
    if (it == available.end()) {
      out.unavailable.push_back(given);
      continue;
    }
    if (!out.openssl.empty()) out.openssl += ':';
    out.openssl += it->second;
  }
  // Only TLS 1.3 names (or none this OpenSSL has): Go then offers no TLS 1.2 suite at all.
  out.tls12Possible = !out.openssl.empty();
  if (!out.tls12Possible) out.openssl.clear();
  return out;
}

}  // namespace kdesched::metrics
