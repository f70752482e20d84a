// Where the API server is and how to authenticate: kubeconfig files, the in-cluster service
// account, and the order kdesched tries them in.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "pkg/base/status.h"

namespace kdesched::kube {

std::string defaultUserAgent();  // "kdesched/<version>"

struct ClientConfig {
  std::string server;  // "https://host:port", optionally with a path prefix
  std::string caData;  // PEM; empty: the system trust store
  bool insecureSkipTlsVerify = false;
  // The name the server's certificate is verified against and sent as SNI, instead of the host in
  // `server` (kubeconfig tls-server-name; client-go's TLSClientConfig.ServerName).
  std::string tlsServerName;
  // The kubeconfig's proxy-url: every request goes through it. Empty: the environment decides
  // (HTTPS_PROXY, HTTP_PROXY, NO_PROXY; see proxy.h), in a pod too, as client-go does.
  std::string proxyUrl;
  std::string clientCertData, clientKeyData;  // PEM
  std::string bearerToken;
  // Re-read periodically (projected service-account tokens rotate); wins over bearerToken.
  std::string tokenFile;
  double qps = 5;  // 0: 5; negative: no client-side limit
  int burst = 10;  // 0: 10
  // The longest one request may take, from sending it to the last byte of the answer (a watch: to
  // its response headers), counted on the client's clock; zero: only the HTTP client's own
  // inactivity timer. Retries and rate-limit waits are outside it: each attempt gets its own.
  std::chrono::milliseconds requestTimeout{30000};
  std::string userAgent = defaultUserAgent();
  // Ask for protobuf (JSON the server's alternative) where kdesched decodes it (api::decodesProto:
  // pods and nodes) on the reflectors' LIST and WATCH, as client-go's typed clients do for built-in types; a
  // server that refuses it (406, 415) is asked in JSON from then on. False: JSON only
  // (--kube-api-content-type application/json).
  bool protobuf = true;
};

// Reads a kubeconfig. `context` empty: the file's current-context. Relative file paths inside it
// resolve against the kubeconfig's directory, as kubectl does. Errors name the file and the field.
Result<ClientConfig> loadKubeconfig(const std::string& path, const std::string& context = "");

inline constexpr const char* kServiceAccountRoot = "/var/run/secrets/kubernetes.io/serviceaccount";

// The pod's service account: KUBERNETES_SERVICE_HOST/PORT, <root>/ca.crt and <root>/token.
Result<ClientConfig> loadInClusterConfig(const std::string& root = kServiceAccountRoot);

// kubectl's choice of kubeconfig files: the --kubeconfig flag alone (read even when missing, so
// the error names it); else $KUBECONFIG's colon-separated list, the files that exist, each once,
// in order; else `home`/.kube/config when it exists. Empty when there is nothing to read.
std::vector<std::string> kubeconfigFiles(const std::string& flag, const char* kubeconfigEnv, const char* home);

// A context chosen from one or more kubeconfig files merged as kubectl merges them: the first file
// that sets current-context names it, and the first file holding a context, cluster or user of a
// name gives that entry (relative paths in it resolve against its own file's directory).
struct KubeconfigContext {
  ClientConfig config;
  std::string context;  // the context's name
  std::string ns;       // the context's namespace; "" when it sets none
  std::string source;   // the files read, for messages ("a:b")
};

// `context` empty: the merged current-context. Errors name the files and the field.
Result<KubeconfigContext> loadKubeconfigFiles(const std::vector<std::string>& paths, const std::string& context = "");

// The --kubeconfig flag, else $KUBECONFIG (its first entry), else the in-cluster config.
Result<ClientConfig> resolveConfig(const std::string& kubeconfigFlag);

// Strict standard base64 (padding required; line breaks ignored, as Go's decoder does).
Result<std::string> decodeBase64(std::string_view text);

// Checks that `pem` holds at least one PEM certificate (or, for keys, a private key OpenSSL can
// read), so a bad CA fails at startup with the field's name instead of at the first TLS handshake.
Status checkPemCertificates(const std::string& pem);
Status checkPemPrivateKey(const std::string& pem);

}  // namespace kdesched::kube
