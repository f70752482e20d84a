// --tls-cert-file/--tls-private-key-file re-read when they change, and --tls-cipher-suites, as
// upstream's secure serving (k8s.io/apiserver dynamiccertificates, component-base cipher flags).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <openssl/bio.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <filesystem>
#include <fstream>

#include "pkg/metrics/cert_reloader.h"
#include "pkg/metrics/server.h"
#include "pkg/metrics/tls.h"
#include "test/unit/metrics/serving.h"

namespace kdesched::metrics {
namespace {

using testing::freePort;
using ::testing::HasSubstr;
using testing::kNow;
using testing::testClock;

class CertFiles : public ::testing::Test {
 protected:
  std::filesystem::path dir_ =
      std::filesystem::temp_directory_path() / ("kdesched-reload-" + std::to_string(::getpid()) + "-" +
                                                ::testing::UnitTest::GetInstance()->current_test_info()->name());
  std::string cert_ = (dir_ / "tls.crt").string();
  std::string key_ = (dir_ / "tls.key").string();
  void SetUp() override { std::filesystem::create_directories(dir_); }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void write(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::trunc) << text; }
  CertificatePair install(const std::string& host) {
    auto pair = selfSignedCertificate(host, kNow);
    EXPECT_TRUE(pair.isOk());
    write(cert_, pair->certificatePem);
    write(key_, pair->privateKeyPem);
    return *pair;
  }
};

TEST_F(CertFiles, ANewPairIsServedOnceTheIntervalHasPassed) {
  const CertificatePair a = install("a");
  auto clock = testClock();
  auto reloader = CertificateReloader::fromFiles(cert_, key_, clock, std::chrono::seconds(1));
  ASSERT_TRUE(reloader.isOk()) << reloader.error();
  EXPECT_EQ((*reloader)->current()->certificatePem, a.certificatePem);
  const CertificatePair b = install("b");
  EXPECT_EQ((*reloader)->current()->certificatePem, a.certificatePem) << "checked at most once per interval";
  clock->advanceSeconds(1);
  EXPECT_EQ((*reloader)->current()->certificatePem, b.certificatePem);
  EXPECT_EQ((*reloader)->current()->privateKeyPem, b.privateKeyPem);
}

// A renewal is two writes; between them (or when a file is broken) the previous pair stays.
TEST_F(CertFiles, APairThatDoesNotLoadKeepsThePreviousOne) {
  const CertificatePair a = install("a");
  auto clock = testClock();
  auto reloader = CertificateReloader::fromFiles(cert_, key_, clock, std::chrono::seconds(1));
  ASSERT_TRUE(reloader.isOk());
  auto other = selfSignedCertificate("other", kNow);
  write(cert_, other->certificatePem);  // the key not yet written: they do not match
  clock->advanceSeconds(1);
  EXPECT_EQ((*reloader)->current()->certificatePem, a.certificatePem);
  write(cert_, "not pem");
  clock->advanceSeconds(1);
  EXPECT_EQ((*reloader)->current()->certificatePem, a.certificatePem);
  std::filesystem::remove(cert_);
  clock->advanceSeconds(1);
  EXPECT_EQ((*reloader)->current()->certificatePem, a.certificatePem);
  write(cert_, other->certificatePem);
  write(key_, other->privateKeyPem);
  clock->advanceSeconds(1);
  EXPECT_EQ((*reloader)->current()->certificatePem, other->certificatePem);
}

// The common name of the certificate the server presents, over a raw OpenSSL connection.
std::string servedCommonName(int port) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  BIO* bio = BIO_new_ssl_connect(ctx);
  const std::string target = "127.0.0.1:" + std::to_string(port);
  BIO_set_conn_hostname(bio, target.c_str());
  std::string cn;
  if (BIO_do_connect(bio) == 1 && BIO_do_handshake(bio) == 1) {
    SSL* ssl = nullptr;
    BIO_get_ssl(bio, &ssl);
    if (X509* cert = SSL_get1_peer_certificate(ssl)) {
      char buf[256] = {};
      X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, buf, sizeof buf);
      cn = buf;
      X509_free(cert);
    }
  }
  BIO_free_all(bio);
  SSL_CTX_free(ctx);
  return cn;
}

TEST_F(CertFiles, TheServerPresentsTheRenewedCertificateWithoutARestart) {
  install("first");
  auto clock = testClock();
  Metrics m("0.1.0", {});
  Server s(&m, nullptr);
  const int port = freePort();
  TlsOptions tls;
  tls.certFile = cert_;
  tls.keyFile = key_;
  ASSERT_TRUE(s.start("127.0.0.1", port, tls, clock).isOk());
  EXPECT_THAT(servedCommonName(port), HasSubstr("first@"));
  install("second");
  clock->advanceSeconds(1);
  EXPECT_THAT(servedCommonName(port), HasSubstr("second@"));
  EXPECT_EQ(testing::get("https", port, "/healthz").first, 200);
  s.stop();
}

TEST(TlsCipherSuites, GoNamesBecomeOpenSslNames) {
  auto none = tlsCipherSuites({});
  ASSERT_TRUE(none.isOk());
  EXPECT_EQ(none->openssl, "");
  EXPECT_TRUE(none->tls12Possible);
  auto two = tlsCipherSuites({"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305"});
  ASSERT_TRUE(two.isOk()) << two.error();
  EXPECT_EQ(two->openssl, "ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-CHACHA20-POLY1305");
  EXPECT_TRUE(two->unavailable.empty());
}

TEST(TlsCipherSuites, AsGoTls13NamesChangeNothingAndUnknownNamesAreErrors) {
  auto only13 = tlsCipherSuites({"TLS_AES_128_GCM_SHA256"});
  ASSERT_TRUE(only13.isOk());
  EXPECT_FALSE(only13->tls12Possible) << "Go then offers no TLS 1.2 suite";
  auto rc4 = tlsCipherSuites({"TLS_RSA_WITH_RC4_128_SHA", "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"});
  ASSERT_TRUE(rc4.isOk()) << "Go accepts its insecure suites";
  EXPECT_EQ(rc4->unavailable, std::vector<std::string>{"TLS_RSA_WITH_RC4_128_SHA"});
  EXPECT_EQ(rc4->openssl, "ECDHE-RSA-AES256-GCM-SHA384");
  auto bad = tlsCipherSuites({"ECDHE-RSA-AES128-GCM-SHA256"});
  ASSERT_FALSE(bad.isOk());
  EXPECT_EQ(bad.error(),
            "--tls-cipher-suites: Cipher suite ECDHE-RSA-AES128-GCM-SHA256 not supported or doesn't exist");
}

TEST(Server, OnlyTheListedCipherSuitesAreServedOverTls12) {
  Metrics m("0.1.0", {});
  Server s(&m, nullptr);
  const int port = freePort();
  TlsOptions tls;
  tls.cipherSuites = {"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"};  // the self-signed key is ECDSA
  ASSERT_TRUE(s.start("127.0.0.1", port, tls, testClock()).isOk());
  auto tls12With = [](const char* list) {
    return [list](boost::asio::ssl::context& ctx) {
      SSL_CTX_set_max_proto_version(ctx.native_handle(), TLS1_2_VERSION);
      SSL_CTX_set_cipher_list(ctx.native_handle(), list);
    };
  };
  EXPECT_EQ(testing::get("https", port, "/healthz", tls12With("ECDHE-ECDSA-AES256-GCM-SHA384")).first, 200);
  EXPECT_ANY_THROW(testing::get("https", port, "/healthz", tls12With("ECDHE-ECDSA-AES128-GCM-SHA256")));
  EXPECT_EQ(testing::get("https", port, "/healthz").first, 200) << "TLS 1.3 is not restricted, as Go";
  tls.cipherSuites = {"nope"};
  EXPECT_THAT(Server(&m, nullptr).start("127.0.0.1", freePort(), tls, testClock()).message(),
              HasSubstr("Cipher suite nope not supported"));
  s.stop();
}

}  // namespace
}  // namespace kdesched::metrics
