#include "pkg/metrics/tls.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <filesystem>
#include <fstream>

#include "pkg/metrics/server.h"
#include "test/unit/metrics/serving.h"

namespace kdesched::metrics {
namespace {

using testing::freePort;
using testing::get;
using ::testing::HasSubstr;
using testing::kNow;

TlsOptions tls(std::string certFile, std::string keyFile, std::string minVersion = "") {
  TlsOptions t;
  t.certFile = std::move(certFile);
  t.keyFile = std::move(keyFile);
  t.minVersion = std::move(minVersion);
  return t;
}

X509* parse(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  return cert;
}

std::string commonName(X509* cert) {
  char buf[256] = {};
  X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, buf, sizeof buf);
  return buf;
}

class TempDir : public ::testing::Test {
 protected:
  std::filesystem::path dir_ =
      std::filesystem::temp_directory_path() / ("kdesched-tls-" + std::to_string(::getpid()) + "-" +
                                                ::testing::UnitTest::GetInstance()->current_test_info()->name());
  void SetUp() override { std::filesystem::create_directories(dir_); }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  }
};

// As client-go's self-signed serving certificate: CN "<host>@<unix time>", the loopback names as
// SANs, valid now.
TEST(SelfSigned, NamesTheHostAndLoopbackAndIsValidNow) {
  auto pair = selfSignedCertificate("descheduler.kube-system.svc", kNow);
  ASSERT_TRUE(pair.isOk()) << pair.error();
  X509* cert = parse(pair->certificatePem);
  ASSERT_NE(cert, nullptr);
  EXPECT_EQ(commonName(cert), "descheduler.kube-system.svc@1796000000");
  EXPECT_EQ(X509_check_host(cert, "descheduler.kube-system.svc", 0, 0, nullptr), 1);
  EXPECT_EQ(X509_check_host(cert, "localhost", 0, 0, nullptr), 1);
  EXPECT_EQ(X509_check_ip_asc(cert, "127.0.0.1", 0), 1);
  const time_t at = 1796000000;
  EXPECT_LT(X509_cmp_time(X509_get0_notBefore(cert), const_cast<time_t*>(&at)), 0);
  EXPECT_GT(X509_cmp_time(X509_get0_notAfter(cert), const_cast<time_t*>(&at)), 0);
  X509_free(cert);
}

TEST(TlsMinVersion, UpstreamNamesOnly) {
  EXPECT_EQ(*tlsMinVersion(""), TLS1_2_VERSION);
  EXPECT_EQ(*tlsMinVersion("VersionTLS10"), TLS1_VERSION);
  EXPECT_EQ(*tlsMinVersion("VersionTLS13"), TLS1_3_VERSION);
  auto bad = tlsMinVersion("TLS1.2");
  ASSERT_FALSE(bad.isOk());
  EXPECT_EQ(bad.error(),
            "--tls-min-version: \"TLS1.2\" is not one of VersionTLS10, VersionTLS11, VersionTLS12, VersionTLS13");
}

TEST_F(TempDir, CertificateFilesAreCheckedAtStart) {
  auto a = selfSignedCertificate("a", kNow);
  auto b = selfSignedCertificate("b", kNow);
  ASSERT_TRUE(a.isOk() && b.isOk());
  const std::string cert = write("tls.crt", a->certificatePem), key = write("tls.key", a->privateKeyPem);
  const std::string otherKey = write("other.key", b->privateKeyPem), junk = write("junk", "not pem");
  auto ok = loadCertificateFiles(cert, key);
  ASSERT_TRUE(ok.isOk()) << ok.error();
  EXPECT_EQ(ok->certificatePem, a->certificatePem);
  EXPECT_THAT(loadCertificateFiles(cert, otherKey).error(), HasSubstr("does not match the certificate"));
  EXPECT_THAT(loadCertificateFiles(junk, key).error(), HasSubstr("--tls-cert-file: " + junk + " holds no PEM"));
  EXPECT_THAT(loadCertificateFiles(cert, junk).error(), HasSubstr("--tls-private-key-file: " + junk));
  EXPECT_THAT(loadCertificateFiles(cert, (dir_ / "missing").string()).error(), HasSubstr("cannot read"));
  EXPECT_THAT(servingCertificate(tls(cert, ""), "h", kNow).error(), HasSubstr("give both or neither"));
}

// Upstream's probes and ServiceMonitor speak HTTPS to this port: it answers there, not over HTTP.
TEST(Server, ServesHttpsWithASelfSignedCertificateByDefault) {
  Metrics m("0.1.0", {});
  Server s(&m, nullptr);
  int port = freePort();
  ASSERT_TRUE(s.start("127.0.0.1", port, TlsOptions{}, kNow).isOk());
  EXPECT_EQ(get("https", port, "/healthz"), (std::pair<int, std::string>{200, "ok"}));
  auto metrics = get("https", port, "/metrics");
  EXPECT_EQ(metrics.first, 200);
  EXPECT_THAT(metrics.second, HasSubstr("descheduler_build_info"));
  EXPECT_ANY_THROW(get("http", port, "/healthz"));
  s.stop();
}

TEST(Server, TheMinimumTlsVersionIsEnforced) {
  Metrics m("0.1.0", {});
  Server s(&m, nullptr);
  int port = freePort();
  ASSERT_TRUE(s.start("127.0.0.1", port, tls("", "", "VersionTLS13"), kNow).isOk());
  EXPECT_EQ(get("https", port, "/healthz").first, 200);
  auto tls12Only = [](boost::asio::ssl::context& ctx) {
    SSL_CTX_set_max_proto_version(ctx.native_handle(), TLS1_2_VERSION);
  };
  EXPECT_ANY_THROW(get("https", port, "/healthz", tls12Only));
  s.stop();
}

TEST_F(TempDir, AnUnusableCertificateIsAStartError) {
  Metrics m("0.1.0", {});
  Server s(&m, nullptr);
  const std::string junk = write("junk", "x");
  Status st = s.start("127.0.0.1", freePort(), tls(junk, junk), kNow);
  ASSERT_FALSE(st.isOk());
  EXPECT_THAT(st.message(), HasSubstr("cannot serve metrics on 127.0.0.1:"));
  EXPECT_THAT(st.message(), HasSubstr("holds no PEM certificate"));
  st = s.start("127.0.0.1", freePort(), tls("", "", "TLS9"), kNow);
  EXPECT_THAT(st.message(), HasSubstr("--tls-min-version"));
}

}  // namespace
}  // namespace kdesched::metrics
