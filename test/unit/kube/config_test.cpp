#include "pkg/kube/config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>

#include "pkg/kube/token_source.h"
#include "test/unit/kube/fakes.h"
#include "test/unit/kube/support.h"

namespace kdesched::kube::testing {
namespace {

using ::testing::HasSubstr;

// Sets (or unsets, for nullptr) an environment variable for one test and restores it afterwards.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

class KubeconfigTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    certs_ = new TempDir();
    tls_ = new TlsMaterial(TlsMaterial::generate(*certs_));
  }
  static void TearDownTestSuite() {
    delete tls_;
    delete certs_;
  }

  static std::string ca() { return readFile(tls_->caCert); }
  static std::string clientCert() { return readFile(tls_->clientCert); }
  static std::string clientKey() { return readFile(tls_->clientKey); }

  std::string kubeconfig(const std::string& cluster, const std::string& user, const std::string& current = "ctx") {
    return dir_.write("kube/config", "apiVersion: v1\nkind: Config\ncurrent-context: " + current +
                                         "\nclusters:\n- name: c1\n  cluster:\n" + cluster +
                                         "\n- name: other\n  cluster:\n    server: https://other:6443\n"
                                         "    insecure-skip-tls-verify: true\n"
                                         "users:\n- name: u1\n  user:\n" +
                                         user +
                                         "\ncontexts:\n- name: ctx\n  context:\n    cluster: c1\n    user: u1\n"
                                         "- name: second\n  context:\n    cluster: other\n    user: u1\n");
  }

  TempDir dir_;
  static TempDir* certs_;
  static TlsMaterial* tls_;
};

TempDir* KubeconfigTest::certs_ = nullptr;
TlsMaterial* KubeconfigTest::tls_ = nullptr;

TEST_F(KubeconfigTest, InlineDataAndToken) {
  auto path = kubeconfig("    server: https://10.0.0.1:6443\n    certificate-authority-data: " + base64(ca()),
                         "    token: abc.def");
  auto cfg = loadKubeconfig(path);
  ASSERT_TRUE(cfg.isOk()) << cfg.error();
  EXPECT_EQ(cfg->server, "https://10.0.0.1:6443");
  EXPECT_EQ(cfg->caData, ca());
  EXPECT_EQ(cfg->bearerToken, "abc.def");
  EXPECT_FALSE(cfg->insecureSkipTlsVerify);
  EXPECT_TRUE(cfg->clientCertData.empty());
  EXPECT_THAT(cfg->userAgent, ::testing::StartsWith("kdesched/"));
}

TEST_F(KubeconfigTest, FilesResolveAgainstTheKubeconfigDirectory) {
  dir_.write("kube/pki/ca.crt", ca());
  dir_.write("kube/pki/client.crt", clientCert());
  dir_.write("kube/pki/client.key", clientKey());
  dir_.write("kube/token", "file-token\n");
  auto path = kubeconfig("    server: https://api:6443\n    certificate-authority: pki/ca.crt",
                         "    client-certificate: pki/client.crt\n    client-key: pki/client.key\n"
                         "    tokenFile: token");
  auto cfg = loadKubeconfig(path);
  ASSERT_TRUE(cfg.isOk()) << cfg.error();
  EXPECT_EQ(cfg->caData, ca());
  EXPECT_EQ(cfg->clientCertData, clientCert());
  EXPECT_EQ(cfg->clientKeyData, clientKey());
  EXPECT_EQ(cfg->tokenFile, dir_.file("kube/token"));
}

TEST_F(KubeconfigTest, InlineClientCertificate) {
  auto path = kubeconfig(
      "    server: https://api:6443\n    certificate-authority-data: " + base64(ca()),
      "    client-certificate-data: " + base64(clientCert()) + "\n    client-key-data: " + base64(clientKey()));
  auto cfg = loadKubeconfig(path);
  ASSERT_TRUE(cfg.isOk()) << cfg.error();
  EXPECT_EQ(cfg->clientCertData, clientCert());
  EXPECT_EQ(cfg->clientKeyData, clientKey());
  EXPECT_TRUE(cfg->bearerToken.empty());
}

TEST_F(KubeconfigTest, InsecureAndExplicitContext) {
  auto path =
      kubeconfig("    server: https://api:6443\n    certificate-authority-data: " + base64(ca()), "    token: t");
  auto cfg = loadKubeconfig(path, "second");
  ASSERT_TRUE(cfg.isOk()) << cfg.error();
  EXPECT_EQ(cfg->server, "https://other:6443");
  EXPECT_TRUE(cfg->insecureSkipTlsVerify);
  EXPECT_TRUE(cfg->caData.empty());

  auto both =
      loadKubeconfig(kubeconfig("    server: https://api:6443\n    insecure-skip-tls-verify: true\n"
                                "    certificate-authority-data: " +
                                    base64(ca()),
                                "    token: t"));
  ASSERT_FALSE(both.isOk());
  EXPECT_THAT(both.error(), HasSubstr("insecure-skip-tls-verify"));
}

TEST_F(KubeconfigTest, MissingCurrentContextIsAClearError) {
  auto path = kubeconfig("    server: https://api:6443", "    token: t", "\"\"");
  auto cfg = loadKubeconfig(path);
  ASSERT_FALSE(cfg.isOk());
  EXPECT_THAT(cfg.error(), HasSubstr(path));
  EXPECT_THAT(cfg.error(), HasSubstr("current-context is not set"));
  EXPECT_THAT(cfg.error(), HasSubstr("kubectl config use-context"));

  auto unknown = loadKubeconfig(path, "nope");
  ASSERT_FALSE(unknown.isOk());
  EXPECT_THAT(unknown.error(), HasSubstr("contexts: no entry named \"nope\" (have: ctx, second)"));
}

TEST_F(KubeconfigTest, BadBase64NamesTheField) {
  auto cfg = loadKubeconfig(
      kubeconfig("    server: https://api:6443\n    certificate-authority-data: bm90!!", "    token: t"));
  ASSERT_FALSE(cfg.isOk());
  EXPECT_THAT(cfg.error(), HasSubstr("clusters[\"c1\"].cluster.certificate-authority-data: invalid base64"));

  auto key =
      loadKubeconfig(kubeconfig("    server: https://api:6443",
                                "    client-certificate-data: " + base64(clientCert()) + "\n    client-key-data: abc"));
  ASSERT_FALSE(key.isOk());
  EXPECT_THAT(key.error(), HasSubstr("users[\"u1\"].user.client-key-data: invalid base64"));
}

TEST_F(KubeconfigTest, ProxyUrlAndTlsServerNameAreRead) {
  auto cfg =
      loadKubeconfig(kubeconfig("    server: https://10.0.0.1:6443\n    certificate-authority-data: " + base64(ca()) +
                                    "\n    proxy-url: http://alice:pw@proxy.corp:3128"
                                    "\n    tls-server-name: api.internal",
                                "    token: t"));
  ASSERT_TRUE(cfg.isOk()) << cfg.error();
  EXPECT_EQ(cfg->proxyUrl, "http://alice:pw@proxy.corp:3128");
  EXPECT_EQ(cfg->tlsServerName, "api.internal");

  auto plain = loadKubeconfig(kubeconfig("    server: https://api:6443", "    token: t"));
  ASSERT_TRUE(plain.isOk()) << plain.error();
  EXPECT_EQ(plain->proxyUrl, "");
  EXPECT_EQ(plain->tlsServerName, "");
}

// client-go takes a socks5:// proxy-url; cpprestsdk cannot, so it is refused at load, naming the
// field (and never the password), rather than connecting directly.
TEST_F(KubeconfigTest, AProxyUrlKdeschedCannotUseIsRefusedNamingTheField) {
  auto socks = loadKubeconfig(
      kubeconfig("    server: https://api:6443\n    proxy-url: socks5://bob:hunter2@gw.corp:1080", "    token: t"));
  ASSERT_FALSE(socks.isOk());
  EXPECT_THAT(socks.error(), HasSubstr("clusters[\"c1\"].cluster.proxy-url=\"socks5://redacted@gw.corp:1080\": "
                                       "SOCKS5 proxies are not supported"));
  EXPECT_THAT(socks.error(), ::testing::Not(HasSubstr("hunter2")));

  auto bare = loadKubeconfig(kubeconfig("    server: https://api:6443\n    proxy-url: gw.corp:3128", "    token: t"));
  ASSERT_FALSE(bare.isOk());
  EXPECT_THAT(bare.error(), HasSubstr("clusters[\"c1\"].cluster.proxy-url: \"gw.corp:3128\" is not a URL"));

  auto other = loadKubeconfig(kubeconfig("    server: https://api:6443\n    proxy-url: ftp://gw.corp", "    token: t"));
  ASSERT_FALSE(other.isOk());
  EXPECT_THAT(other.error(), HasSubstr("unsupported scheme \"ftp\""));
}

// Found by the kubeconfig fuzz target (test/fuzz/regressions/kubeconfig/): a path naming /dev/zero
// read until memory ran out.
TEST_F(KubeconfigTest, FilesWithoutEndAreRefusedNamingTheField) {
  auto ca = loadKubeconfig(kubeconfig("    server: https://api:6443\n    certificate-authority: /dev/zero", ""));
  ASSERT_FALSE(ca.isOk());
  EXPECT_THAT(ca.error(), HasSubstr("certificate-authority: cannot read /dev/zero: larger than 16 MiB"));
  auto token = loadKubeconfig(kubeconfig("    server: https://api:6443", "    tokenFile: /dev/zero"));
  ASSERT_FALSE(token.isOk());
  EXPECT_THAT(token.error(), HasSubstr("tokenFile: cannot read the token file /dev/zero: larger than 16 MiB"));
  auto self = loadKubeconfig("/dev/zero");
  ASSERT_FALSE(self.isOk());
  EXPECT_THAT(self.error(), HasSubstr("cannot read /dev/zero: larger than 16 MiB"));
}

TEST(ReadBoundedFile, ReadsUpToTheLimitAndNoFurther) {
  TempDir dir;
  const std::string path = dir.write("f", std::string(100, 'x'));
  EXPECT_EQ(readBoundedFile(path, 100).value().size(), 100u);
  auto over = readBoundedFile(path, 99);
  ASSERT_FALSE(over.isOk());
  EXPECT_EQ(over.error(), "larger than 99 bytes; is this the right file?");
  EXPECT_EQ(readBoundedFile(dir.file("absent")).error(), "No such file or directory");
}

TEST_F(KubeconfigTest, InvalidMaterialAndUnsupportedAuthNameTheField) {
  auto notPem = loadKubeconfig(
      kubeconfig("    server: https://api:6443\n    certificate-authority-data: " + base64("hello"), "    token: t"));
  ASSERT_FALSE(notPem.isOk());
  EXPECT_THAT(notPem.error(), HasSubstr("certificate-authority: no PEM certificate found"));

  auto missingFile =
      loadKubeconfig(kubeconfig("    server: https://api:6443\n    certificate-authority: nope.crt", "    token: t"));
  ASSERT_FALSE(missingFile.isOk());
  EXPECT_THAT(missingFile.error(), HasSubstr("clusters[\"c1\"].cluster.certificate-authority: cannot read"));

  auto exec =
      loadKubeconfig(kubeconfig("    server: https://api:6443",
                                "    exec:\n      command: aws\n      apiVersion: client.authentication.k8s.io/v1"));
  ASSERT_FALSE(exec.isOk());
  EXPECT_THAT(exec.error(), HasSubstr("users[\"u1\"].user.exec: credential plugins are not supported"));

  auto certOnly = loadKubeconfig(
      kubeconfig("    server: https://api:6443", "    client-certificate-data: " + base64(clientCert())));
  ASSERT_FALSE(certOnly.isOk());
  EXPECT_THAT(certOnly.error(), HasSubstr("client-certificate and client-key must be set together"));

  auto noServer = loadKubeconfig(kubeconfig("    insecure-skip-tls-verify: true", "    token: t"));
  ASSERT_FALSE(noServer.isOk());
  EXPECT_THAT(noServer.error(), HasSubstr("clusters[\"c1\"].cluster.server: not set"));

  auto notYaml = loadKubeconfig(dir_.write("broken", "clusters: [\n  - {"));
  ASSERT_FALSE(notYaml.isOk());
  EXPECT_THAT(notYaml.error(), HasSubstr("not valid YAML"));
}

TEST_F(KubeconfigTest, InClusterConfigFromEnvironmentAndFiles) {
  dir_.write("sa/token", "sa-token\n");
  dir_.write("sa/ca.crt", ca());
  {
    ScopedEnv host("KUBERNETES_SERVICE_HOST", "10.96.0.1");
    ScopedEnv port("KUBERNETES_SERVICE_PORT", "443");
    auto cfg = loadInClusterConfig(dir_.file("sa"));
    ASSERT_TRUE(cfg.isOk()) << cfg.error();
    EXPECT_EQ(cfg->server, "https://10.96.0.1:443");
    EXPECT_EQ(cfg->tokenFile, dir_.file("sa/token"));
    EXPECT_EQ(cfg->caData, ca());
    EXPECT_TRUE(cfg->bearerToken.empty());  // read through the rotating token source instead
  }
  {
    ScopedEnv host("KUBERNETES_SERVICE_HOST", "fd00::1");
    ScopedEnv port("KUBERNETES_SERVICE_PORT", "443");
    auto cfg = loadInClusterConfig(dir_.file("sa"));
    ASSERT_TRUE(cfg.isOk()) << cfg.error();
    EXPECT_EQ(cfg->server, "https://[fd00::1]:443");
    auto noToken = loadInClusterConfig(dir_.file("elsewhere"));
    ASSERT_FALSE(noToken.isOk());
    EXPECT_THAT(noToken.error(), HasSubstr("service account token"));
  }
  ScopedEnv host("KUBERNETES_SERVICE_HOST", nullptr);
  auto outside = loadInClusterConfig(dir_.file("sa"));
  ASSERT_FALSE(outside.isOk());
  EXPECT_THAT(outside.error(), HasSubstr("KUBERNETES_SERVICE_HOST"));
}

TEST_F(KubeconfigTest, ResolveOrderFlagThenEnvThenInCluster) {
  auto flagPath = kubeconfig("    server: https://from-flag:6443", "    token: t");
  const std::string envPath = dir_.write("env-config",
                                         "current-context: c\nclusters:\n- name: k\n  cluster:\n"
                                         "    server: https://from-env:6443\nusers:\n- name: u\n"
                                         "  user:\n    token: t\ncontexts:\n- name: c\n  context:\n"
                                         "    cluster: k\n    user: u\n");
  ScopedEnv env("KUBECONFIG", (envPath + ":/nonexistent").c_str());
  ScopedEnv host("KUBERNETES_SERVICE_HOST", nullptr);
  auto fromFlag = resolveConfig(flagPath);
  ASSERT_TRUE(fromFlag.isOk()) << fromFlag.error();
  EXPECT_EQ(fromFlag->server, "https://from-flag:6443");
  auto fromEnv = resolveConfig("");
  ASSERT_TRUE(fromEnv.isOk()) << fromEnv.error();
  EXPECT_EQ(fromEnv->server, "https://from-env:6443");

  ScopedEnv noEnv("KUBECONFIG", nullptr);
  auto none = resolveConfig("");
  ASSERT_FALSE(none.isOk());
  EXPECT_THAT(none.error(), HasSubstr("pass --kubeconfig PATH or set KUBECONFIG"));
}

TEST(Base64, StrictStandardAlphabet) {
  EXPECT_EQ(*decodeBase64("aGVsbG8="), "hello");
  EXPECT_EQ(*decodeBase64("aGVs\nbG8h"), "hello!");
  EXPECT_EQ(*decodeBase64("aGk="), "hi");
  EXPECT_EQ(*decodeBase64("aA=="), "h");
  EXPECT_EQ(*decodeBase64(""), "");
  EXPECT_FALSE(decodeBase64("aGVsbG8").isOk());   // unpadded
  EXPECT_FALSE(decodeBase64("aG=sbG8=").isOk());  // '=' inside
  EXPECT_FALSE(decodeBase64("aGVs-G8=").isOk());  // URL alphabet
  EXPECT_FALSE(decodeBase64("a===").isOk());
}

TEST(CachedFileTokenSource, RereadsAfterThePeriodAndOnReset) {
  TempDir dir;
  const std::string path = dir.write("token", "first\n");
  auto clock = std::make_shared<FakeClock>();
  CachedFileTokenSource source(path, clock);
  EXPECT_EQ(*source.token(), "first");

  dir.write("token", "second");  // the kubelet rotated the projected token
  clock->advance(30s);
  EXPECT_EQ(*source.token(), "first") << "cached within the period";
  clock->advance(31s);
  EXPECT_EQ(*source.token(), "second") << "re-read once a minute has passed";

  dir.write("token", "third");
  EXPECT_EQ(*source.token(), "second");
  source.reset();  // a 401
  EXPECT_EQ(*source.token(), "third") << "a reset forces a re-read at once";

  std::filesystem::remove(path);
  clock->advance(2min);
  EXPECT_EQ(*source.token(), "third") << "an unreadable file keeps the last good token";

  CachedFileTokenSource missing(dir.file("absent"), clock);
  auto t = missing.token();
  ASSERT_FALSE(t.isOk());
  EXPECT_THAT(t.error(), HasSubstr("cannot read the token file"));
}

TEST_F(KubeconfigTest, KubeconfigFilesFollowKubectlsPrecedence) {
  const std::string a = dir_.write("a", "kind: Config\n");
  const std::string b = dir_.write("b", "kind: Config\n");
  const std::string home = dir_.write("home/.kube/config", "kind: Config\n");
  const std::string homeDir = dir_.file("home");
  EXPECT_EQ(kubeconfigFiles("/flag/only", (a + ":" + b).c_str(), homeDir.c_str()),
            std::vector<std::string>{"/flag/only"});
  EXPECT_EQ(kubeconfigFiles("", (a + "::/missing:" + b + ":" + a).c_str(), homeDir.c_str()),
            (std::vector<std::string>{a, b}));
  EXPECT_EQ(kubeconfigFiles("", nullptr, homeDir.c_str()), std::vector<std::string>{home});
  EXPECT_EQ(kubeconfigFiles("", "", homeDir.c_str()), std::vector<std::string>{home});
  EXPECT_TRUE(kubeconfigFiles("", "/missing", homeDir.c_str()).empty());
  EXPECT_TRUE(kubeconfigFiles("", nullptr, dir_.file("nohome").c_str()).empty());
}

TEST_F(KubeconfigTest, SeveralFilesMergeAsKubectlMergesThem) {
  // The first file sets no current-context and holds only a user whose token file is relative to
  // it; the second names the context, its cluster, and a user of the same name that must lose; the
  // third's current-context comes too late.
  dir_.write("one/token", "from-one\n");
  const std::string one = dir_.write("one/config", "kind: Config\nusers:\n- name: u\n  user:\n    tokenFile: token\n");
  const std::string two = dir_.write("two/config",
                                     "kind: Config\ncurrent-context: shop\nclusters:\n- name: k\n  cluster:\n"
                                     "    server: https://two:6443\n    insecure-skip-tls-verify: true\n"
                                     "users:\n- name: u\n  user:\n    token: from-two\ncontexts:\n"
                                     "- name: shop\n  context:\n    cluster: k\n    user: u\n    namespace: orders\n"
                                     "- name: bare\n  context:\n    cluster: k\n    user: u\n");
  const std::string three = dir_.write("three/config",
                                       "kind: Config\ncurrent-context: bare\ncontexts:\n- name: shop\n  context:\n"
                                       "    cluster: elsewhere\n    user: u\n");
  auto merged = loadKubeconfigFiles({one, two, three});
  ASSERT_TRUE(merged.isOk()) << merged.error();
  EXPECT_EQ(merged->context, "shop");
  EXPECT_EQ(merged->ns, "orders");
  EXPECT_EQ(merged->config.server, "https://two:6443");
  EXPECT_EQ(merged->config.tokenFile, dir_.file("one/token"));
  EXPECT_EQ(merged->config.bearerToken, "");
  EXPECT_EQ(merged->source, one + ":" + two + ":" + three);

  auto bare = loadKubeconfigFiles({one, two, three}, "bare");
  ASSERT_TRUE(bare.isOk()) << bare.error();
  EXPECT_EQ(bare->context, "bare");
  EXPECT_EQ(bare->ns, "");

  auto unknown = loadKubeconfigFiles({one, two, three}, "nope");
  ASSERT_FALSE(unknown.isOk());
  EXPECT_THAT(unknown.error(), HasSubstr("contexts: no entry named \"nope\" (have: shop, bare)"));
  EXPECT_THAT(unknown.error(), HasSubstr(one + ":" + two + ":" + three));
}

TEST_F(KubeconfigTest, NoFileToReadSaysWhereItLooked) {
  auto none = loadKubeconfigFiles({});
  ASSERT_FALSE(none.isOk());
  EXPECT_THAT(none.error(), HasSubstr("$KUBECONFIG"));
  EXPECT_THAT(none.error(), HasSubstr("~/.kube/config"));
  auto missing = loadKubeconfigFiles({dir_.file("absent")});
  ASSERT_FALSE(missing.isOk());
  EXPECT_THAT(missing.error(), HasSubstr(dir_.file("absent")));
}

}  // namespace
}  // namespace kdesched::kube::testing
