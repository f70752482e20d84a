#include "pkg/kube/config.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <filesystem>

#include "pkg/kube/proxy.h"
#include "pkg/kube/token_source.h"

#ifndef KDESCHED_VERSION
#define KDESCHED_VERSION "dev"
#endif

namespace kdesched::kube {

std::string defaultUserAgent() { return std::string("kdesched/") + KDESCHED_VERSION; }

namespace fs = std::filesystem;

Result<std::string> decodeBase64(std::string_view text) {
  static constexpr auto kTable = [] {
    std::array<int, 256> t{};
    t.fill(-1);
    constexpr std::string_view kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (std::size_t i = 0; i < kAlphabet.size(); ++i)
      t[static_cast<unsigned char>(kAlphabet[i])] = static_cast<int>(i);
    return t;
  }();
  std::string clean;
  clean.reserve(text.size());
  for (char ch : text) {
    if (ch != '\r' && ch != '\n') clean.push_back(ch);
  }
  if (clean.size() % 4 != 0) return Status::error("invalid base64: length is not a multiple of 4");
  std::string out;
  out.reserve(clean.size() / 4 * 3);
  for (std::size_t i = 0; i < clean.size(); i += 4) {
    int v[4];
    int pad = 0;
    for (int j = 0; j < 4; ++j) {
      const char ch = clean[i + j];
      if (ch == '=') {
        // Padding only at the very end, and at most two characters of it.
        if (i + 4 != clean.size() || j < 2) return Status::error("invalid base64: misplaced '='");
        ++pad;
        v[j] = 0;
        continue;
      }
      if (pad) return Status::error("invalid base64: data after '='");
      v[j] = kTable[static_cast<unsigned char>(ch)];
      if (v[j] < 0) {
        return Status::error("invalid base64: unexpected character at offset " + std::to_string(i + j));
      }
    }
    const unsigned triple = (v[0] << 18) | (v[1] << 12) | (v[2] << 6) | v[3];
    out.push_back(static_cast<char>((triple >> 16) & 0xFF));
    if (pad < 2) out.push_back(static_cast<char>((triple >> 8) & 0xFF));
    if (pad < 1) out.push_back(static_cast<char>(triple & 0xFF));
  }
  return out;
}

namespace {

struct BioDeleter {
  void operator()(BIO* b) const { BIO_free(b); }
};
using BioPtr = std::unique_ptr<BIO, BioDeleter>;

BioPtr memoryBio(const std::string& pem) { return BioPtr(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()))); }

}  // namespace

Status checkPemCertificates(const std::string& pem) {
  BioPtr bio = memoryBio(pem);
  if (!bio) return Status::error("out of memory reading a certificate");
  X509* cert = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr);
  ERR_clear_error();
  if (!cert) return Status::error("no PEM certificate found (expected \"-----BEGIN CERTIFICATE-----\")");
  X509_free(cert);
  return Status::ok();
}

Status checkPemPrivateKey(const std::string& pem) {
  BioPtr bio = memoryBio(pem);
  if (!bio) return Status::error("out of memory reading a private key");
  EVP_PKEY* key = PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr);
  ERR_clear_error();
  if (!key) return Status::error("no PEM private key found (an unencrypted PEM key is required)");
  EVP_PKEY_free(key);
  return Status::ok();
}

namespace {

Result<std::string> readFile(const fs::path& path) {
  auto text = readBoundedFile(path.string());
  if (!text.isOk()) return Status::error("cannot read " + path.string() + ": " + text.error());
  return text;
}

// The parts of a kubeconfig we read. yaml-cpp nodes are only accessed through const references
// (its non-const operator[] inserts missing keys).
class KubeconfigReader {
 public:
  KubeconfigReader(const YAML::Node& root, fs::path dir) : root_(root), dir_(std::move(dir)) {}

  Result<ClientConfig> read(const std::string& contextOverride) {
    std::string contextName = contextOverride;
    if (contextName.empty()) {
      auto cc = scalar(root_, "current-context", "current-context");
      if (!cc.isOk()) return cc.status();
      contextName = *cc;
      if (contextName.empty()) {
        return Status::error(
            "current-context is not set: select a context (kubectl config use-context NAME) or name one explicitly");
      }
    }
    auto context = findNamed("contexts", contextName);
    if (!context.isOk()) return context.status();
    const std::string ctxPath = "contexts[\"" + contextName + "\"].context";
    const YAML::Node& contextEntry = *context;
    const YAML::Node ctx = contextEntry["context"];
    if (!ctx.IsDefined() || !ctx.IsMap()) return Status::error(ctxPath + ": missing or not a mapping");

    auto clusterName = scalar(ctx, "cluster", ctxPath + ".cluster");
    if (!clusterName.isOk()) return clusterName.status();
    if (clusterName->empty()) return Status::error(ctxPath + ".cluster: not set");
    auto userName = scalar(ctx, "user", ctxPath + ".user");
    if (!userName.isOk()) return userName.status();

    ClientConfig out;
    if (Status s = readCluster(*clusterName, out); !s.isOk()) return s;
    if (!userName->empty()) {
      if (Status s = readUser(*userName, out); !s.isOk()) return s;
    }
    return out;
  }

 private:
  // A scalar string field; "" when absent.
  static Result<std::string> scalar(const YAML::Node& map, const char* key, const std::string& path) {
    const YAML::Node n = map[key];
    if (!n.IsDefined() || n.IsNull()) return std::string();
    if (!n.IsScalar()) return Status::error(path + ": must be a string");
    return n.Scalar();
  }

  static Result<bool> boolean(const YAML::Node& map, const char* key, const std::string& path) {
    const YAML::Node n = map[key];
    if (!n.IsDefined() || n.IsNull()) return false;
    bool v = false;
    if (!n.IsScalar() || !YAML::convert<bool>::decode(n, v)) return Status::error(path + ": must be true or false");
    return v;
  }

  Result<YAML::Node> findNamed(const char* list, const std::string& name) const {
    const YAML::Node items = root_[list];
    std::string known;
    if (items.IsDefined() && !items.IsNull()) {
      if (!items.IsSequence()) return Status::error(std::string(list) + ": must be a list");
      for (std::size_t i = 0; i < items.size(); ++i) {
        const YAML::Node item = items[i];
        if (!item.IsMap()) continue;
        const YAML::Node n = item["name"];
        if (!n.IsDefined() || !n.IsScalar()) continue;
        if (n.Scalar() == name) return item;
        known += (known.empty() ? "" : ", ") + n.Scalar();
      }
    }
    return Status::error(std::string(list) + ": no entry named \"" + name + "\"" +
                         (known.empty() ? std::string(" (the list is empty)") : " (have: " + known + ")"));
  }

  // A "<field>-data" (base64 inline) or "<field>" (file path) pair; the inline form wins, as in
  // kubectl. Returns "" when neither is set.
  Result<std::string> dataOrFile(const YAML::Node& map, const std::string& field, const std::string& path) const {
    auto data = scalar(map, (field + "-data").c_str(), path + "." + field + "-data");
    if (!data.isOk()) return data.status();
    if (!data->empty()) {
      auto decoded = decodeBase64(*data);
      if (!decoded.isOk()) return Status::error(path + "." + field + "-data: " + decoded.error());
      return decoded;
    }
    auto file = scalar(map, field.c_str(), path + "." + field);
    if (!file.isOk()) return file.status();
    if (file->empty()) return std::string();
    auto text = readFile(resolve(*file));
    if (!text.isOk()) return Status::error(path + "." + field + ": " + text.error());
    return text;
  }

  fs::path resolve(const std::string& p) const {
    fs::path path(p);
    return path.is_relative() ? dir_ / path : path;
  }

  Status readCluster(const std::string& name, ClientConfig& out) const {
    auto entry = findNamed("clusters", name);
    if (!entry.isOk()) return entry.status();
    const std::string path = "clusters[\"" + name + "\"].cluster";
    const YAML::Node& clusterEntry = *entry;
    const YAML::Node c = clusterEntry["cluster"];
    if (!c.IsDefined() || !c.IsMap()) return Status::error(path + ": missing or not a mapping");

    auto server = scalar(c, "server", path + ".server");
    if (!server.isOk()) return server.status();
    if (server->empty()) return Status::error(path + ".server: not set");
    if (server->rfind("https://", 0) != 0 && server->rfind("http://", 0) != 0) {
      return Status::error(path + ".server: \"" + *server + "\" must start with https:// or http://");
    }
    out.server = *server;

    auto insecure = boolean(c, "insecure-skip-tls-verify", path + ".insecure-skip-tls-verify");
    if (!insecure.isOk()) return insecure.status();
    out.insecureSkipTlsVerify = *insecure;

    auto serverName = scalar(c, "tls-server-name", path + ".tls-server-name");
    if (!serverName.isOk()) return serverName.status();
    out.tlsServerName = *serverName;
    if (Status s = readProxyUrl(c, path + ".proxy-url", out); !s.isOk()) return s;

    auto ca = dataOrFile(c, "certificate-authority", path);
    if (!ca.isOk()) return ca.status();
    if (!ca->empty()) {
      if (out.insecureSkipTlsVerify) {
        return Status::error(path + ": insecure-skip-tls-verify and a certificate authority are both set; keep one");
      }
      if (Status s = checkPemCertificates(*ca); !s.isOk())
        return Status::error(path + ".certificate-authority: " + s.message());
      out.caData = std::move(*ca);
    }
    return Status::ok();
  }

  // client-go takes http, https and socks5 proxies; kdesched only what cpprestsdk can speak, and
  // says so here, at start, rather than connecting directly.
  static Status readProxyUrl(const YAML::Node& cluster, const std::string& path, ClientConfig& out) {
    auto proxy = scalar(cluster, "proxy-url", path);
    if (!proxy.isOk()) return proxy.status();
    if (proxy->empty()) return Status::ok();
    auto parsed = parseProxyUrl(*proxy, false);
    if (!parsed.isOk()) return Status::error(path + ": " + parsed.error());
    if (Status s = checkProxySupported(*parsed, path); !s.isOk()) return s;
    out.proxyUrl = *proxy;
    return Status::ok();
  }

  Status readUser(const std::string& name, ClientConfig& out) const {
    auto entry = findNamed("users", name);
    if (!entry.isOk()) return entry.status();
    const std::string path = "users[\"" + name + "\"].user";
    const YAML::Node& userEntry = *entry;
    const YAML::Node u = userEntry["user"];
    if (!u.IsDefined() || u.IsNull()) return Status::ok();  // an anonymous user
    if (!u.IsMap()) return Status::error(path + ": must be a mapping");

    auto token = scalar(u, "token", path + ".token");
    if (!token.isOk()) return token.status();
    out.bearerToken = *token;
    auto tokenFile = scalar(u, "tokenFile", path + ".tokenFile");
    if (!tokenFile.isOk()) return tokenFile.status();
    if (!tokenFile->empty()) {
      out.tokenFile = resolve(*tokenFile).string();
      if (auto t = readTokenFile(out.tokenFile); !t.isOk()) return Status::error(path + ".tokenFile: " + t.error());
    }

    auto cert = dataOrFile(u, "client-certificate", path);
    if (!cert.isOk()) return cert.status();
    auto key = dataOrFile(u, "client-key", path);
    if (!key.isOk()) return key.status();
    if (cert->empty() != key->empty()) {
      return Status::error(path + ": client-certificate and client-key must be set together");
    }
    if (!cert->empty()) {
      if (Status s = checkPemCertificates(*cert); !s.isOk())
        return Status::error(path + ".client-certificate: " + s.message());
      if (Status s = checkPemPrivateKey(*key); !s.isOk()) return Status::error(path + ".client-key: " + s.message());
      out.clientCertData = std::move(*cert);
      out.clientKeyData = std::move(*key);
    }

    const bool hasCredentials = !out.bearerToken.empty() || !out.tokenFile.empty() || !out.clientCertData.empty();
    if (!hasCredentials) {
      // Silently connecting as anonymous would only fail later with a confusing 401/403.
      if (u["exec"].IsDefined()) {
        return Status::error(path +
                             ".exec: credential plugins are not supported; use a token or client certificate, "
                             "or run in the cluster with a service account");
      }
      if (u["auth-provider"].IsDefined()) {
        return Status::error(path +
                             ".auth-provider: auth providers are not supported; use a token or client certificate");
      }
      if (u["username"].IsDefined() || u["password"].IsDefined()) {
        return Status::error(path +
                             ".username: basic authentication is not supported; use a token or client certificate");
      }
    }
    return Status::ok();
  }

  const YAML::Node& root_;
  fs::path dir_;
};

std::string envOr(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

}  // namespace

Result<ClientConfig> loadKubeconfig(const std::string& path, const std::string& context) {
  auto text = readFile(path);
  if (!text.isOk()) return Status::error("kubeconfig: " + text.error());
  YAML::Node root;
  try {
    root = YAML::Load(*text);
  } catch (const YAML::Exception& e) {
    return Status::error("kubeconfig " + path + ": not valid YAML at line " + std::to_string(e.mark.line + 1) + ": " +
                         e.msg);
  }
  if (!root.IsMap()) return Status::error("kubeconfig " + path + ": expected a mapping (apiVersion: v1, kind: Config)");
  try {
    const fs::path dir = fs::absolute(fs::path(path)).parent_path();
    auto config = KubeconfigReader(root, dir).read(context);
    if (!config.isOk()) return Status::error("kubeconfig " + path + ": " + config.error());
    return config;
  } catch (const std::exception& e) {
    return Status::error("kubeconfig " + path + ": " + e.what());
  }
}

std::vector<std::string> kubeconfigFiles(const std::string& flag, const char* kubeconfigEnv, const char* home) {
  if (!flag.empty()) return {flag};
  std::vector<std::string> out;
  if (kubeconfigEnv && *kubeconfigEnv) {
    const std::string env = kubeconfigEnv;
    std::size_t start = 0;
    while (start <= env.size()) {
      const std::size_t end = std::min(env.find(':', start), env.size());
      const std::string p = env.substr(start, end - start);
      std::error_code ec;
      if (!p.empty() && fs::is_regular_file(p, ec) && std::find(out.begin(), out.end(), p) == out.end())
        out.push_back(p);
      start = end + 1;
    }
    return out;
  }
  if (home && *home) {
    const std::string p = (fs::path(home) / ".kube" / "config").string();
    std::error_code ec;
    if (fs::is_regular_file(p, ec)) out.push_back(p);
  }
  return out;
}

namespace {

// One kubeconfig file as YAML; errors name the file.
Result<YAML::Node> parseKubeconfig(const std::string& path) {
  auto text = readFile(path);
  if (!text.isOk()) return Status::error("kubeconfig: " + text.error());
  try {
    YAML::Node root = YAML::Load(*text);
    if (root.IsNull()) return YAML::Node(YAML::NodeType::Map);  // an empty file holds nothing, as for kubectl
    if (!root.IsMap())
      return Status::error("kubeconfig " + path + ": expected a mapping (apiVersion: v1, kind: Config)");
    return root;
  } catch (const YAML::Exception& e) {
    return Status::error("kubeconfig " + path + ": not valid YAML at line " + std::to_string(e.mark.line + 1) + ": " +
                         e.msg);
  }
}

// An entry of `list` copied out of its file, with the file paths inside `inner` (cluster, user)
// made absolute against that file's directory: the merged document no longer has one directory.
YAML::Node absoluteEntry(const YAML::Node& item, const char* inner, const fs::path& dir) {
  static constexpr const char* kPathFields[] = {"certificate-authority", "client-certificate", "client-key",
                                                "tokenFile"};
  YAML::Node copy = YAML::Clone(item);
  YAML::Node body = copy[inner];
  if (!body.IsMap()) return copy;
  for (const char* field : kPathFields) {
    const YAML::Node v = body[field];
    if (v.IsDefined() && v.IsScalar() && !v.Scalar().empty() && fs::path(v.Scalar()).is_relative())
      body[field] = (dir / v.Scalar()).string();
  }
  return copy;
}

// kubectl's merge: per list, the first file that holds a name gives its entry.
YAML::Node mergeKubeconfigs(const std::vector<std::pair<YAML::Node, fs::path>>& files) {
  YAML::Node merged(YAML::NodeType::Map);
  for (const auto& [root, dir] : files) {
    const YAML::Node cc = root["current-context"];
    if (cc.IsDefined() && cc.IsScalar() && !cc.Scalar().empty()) {
      merged["current-context"] = cc.Scalar();
      break;
    }
  }
  for (const auto& [list, inner] : {std::pair{"contexts", "context"}, {"clusters", "cluster"}, {"users", "user"}}) {
    YAML::Node out(YAML::NodeType::Sequence);
    std::vector<std::string> seen;
    for (const auto& [root, dir] : files) {
      const YAML::Node items = root[list];
      if (!items.IsDefined() || !items.IsSequence()) continue;
      for (const YAML::Node& item : items) {
        const YAML::Node n = item.IsMap() ? item["name"] : YAML::Node();
        if (!n.IsDefined() || !n.IsScalar()) continue;
        if (std::find(seen.begin(), seen.end(), n.Scalar()) != seen.end()) continue;
        seen.push_back(n.Scalar());
        out.push_back(absoluteEntry(item, inner, dir));
      }
    }
    merged[list] = out;
  }
  return merged;
}

std::string contextNamespace(const YAML::Node& merged, const std::string& context) {
  for (const YAML::Node& item : merged["contexts"]) {
    const YAML::Node n = item["name"];
    if (n.Scalar() != context) continue;
    const YAML::Node ns = item["context"].IsMap() ? item["context"]["namespace"] : YAML::Node();
    return ns.IsDefined() && ns.IsScalar() ? ns.Scalar() : std::string();
  }
  return "";
}

}  // namespace

Result<KubeconfigContext> loadKubeconfigFiles(const std::vector<std::string>& paths, const std::string& context) {
  if (paths.empty())
    return Status::error(
        "no kubeconfig: --kubeconfig is not given, $KUBECONFIG names no file that exists, and ~/.kube/config does "
        "not exist");
  KubeconfigContext out;
  std::vector<std::pair<YAML::Node, fs::path>> files;
  for (const std::string& p : paths) {
    auto root = parseKubeconfig(p);
    if (!root.isOk()) return root.status();
    files.emplace_back(std::move(*root), fs::absolute(fs::path(p)).parent_path());
    out.source += (out.source.empty() ? "" : ":") + p;
  }
  try {
    const YAML::Node merged = mergeKubeconfigs(files);
    out.context = context;
    const YAML::Node current = merged["current-context"];
    if (out.context.empty() && current.IsDefined() && current.IsScalar()) out.context = current.Scalar();
    auto config = KubeconfigReader(merged, fs::path("/")).read(out.context);
    if (!config.isOk()) return Status::error("kubeconfig " + out.source + ": " + config.error());
    out.config = std::move(*config);
    out.ns = contextNamespace(merged, out.context);
    return out;
  } catch (const std::exception& e) {
    return Status::error("kubeconfig " + out.source + ": " + e.what());
  }
}

Result<ClientConfig> loadInClusterConfig(const std::string& root) {
  const std::string host = envOr("KUBERNETES_SERVICE_HOST");
  const std::string port = envOr("KUBERNETES_SERVICE_PORT");
  if (host.empty() || port.empty()) {
    return Status::error("not running in a cluster (KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are unset)");
  }
  ClientConfig out;
  // An IPv6 service address needs brackets in a URL.
  out.server = "https://" + (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + port;
  const fs::path dir(root);
  out.tokenFile = (dir / "token").string();
  if (auto t = readTokenFile(out.tokenFile); !t.isOk()) {
    return Status::error("in-cluster config: " + t.error() + " (is a service account token mounted?)");
  }
  auto ca = readFile(dir / "ca.crt");
  if (!ca.isOk()) return Status::error("in-cluster config: " + ca.error() + " (the service account's CA bundle)");
  if (Status s = checkPemCertificates(*ca); !s.isOk()) {
    return Status::error("in-cluster config: " + (dir / "ca.crt").string() + ": " + s.message());
  }
  out.caData = std::move(*ca);
  return out;
}

Result<ClientConfig> resolveConfig(const std::string& kubeconfigFlag) {
  if (!kubeconfigFlag.empty()) return loadKubeconfig(kubeconfigFlag);
  std::string env = envOr("KUBECONFIG");
  if (!env.empty()) {
    // kubectl merges a colon-separated list; we use its first file, which holds the
    // current-context in the common single-file case.
    const std::string first = env.substr(0, env.find(':'));
    if (!first.empty()) return loadKubeconfig(first);
  }
  auto inCluster = loadInClusterConfig();
  if (!inCluster.isOk()) {
    return Status::error(inCluster.error() + "; outside a cluster pass --kubeconfig PATH or set KUBECONFIG");
  }
  return inCluster;
}

}  // namespace kdesched::kube
