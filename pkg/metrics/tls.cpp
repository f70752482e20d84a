#include "pkg/metrics/tls.h"

#include <openssl/bio.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/tls1.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>

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

Result<std::string> readFile(const std::string& path, const std::string& flag) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::error(flag + ": cannot read " + path);
  std::ostringstream s;
  s << in.rdbuf();
  if (s.str().size() > (1u << 20)) return Status::error(flag + ": " + path + " is larger than 1 MiB");
  return s.str();
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

Result<CertificatePair> servingCertificate(const TlsOptions& options, const std::string& host, Clock::WallTime now) {
  if (options.certFile.empty() != options.keyFile.empty())
    return Status::error("--tls-cert-file and --tls-private-key-file go together: give both or neither");
  if (!options.certFile.empty()) return loadCertificateFiles(options.certFile, options.keyFile);
  return selfSignedCertificate(host, now);
}

}  // namespace kdesched::metrics
