// TLS for the /metrics and probe endpoint, as upstream's secure serving: the certificate and key
// from --tls-cert-file/--tls-private-key-file, or a self-signed pair made at start (kept in
// memory), and --tls-min-version as the protocol floor.
#pragma once

#include <string>

#include "pkg/base/clock.h"
#include "pkg/base/status.h"

namespace kdesched::metrics {

struct CertificatePair {
  std::string certificatePem;  // the leaf first, then any chain
  std::string privateKeyPem;
};

struct TlsOptions {
  bool plainHttp = false;  // kdesched's --plain-http: no TLS at all
  std::string certFile;    // --tls-cert-file
  std::string keyFile;     // --tls-private-key-file
  std::string minVersion;  // --tls-min-version: VersionTLS10..VersionTLS13, "" = TLS 1.2 (Go's server default)
};

// A self-signed certificate for `host` (CN "<host>@<unix time>", as client-go's cert util names
// it; SANs: host, localhost, 127.0.0.1, ::1), ECDSA P-256, valid from an hour before `now` for a year.
Result<CertificatePair> selfSignedCertificate(const std::string& host, Clock::WallTime now);

// The pair from the two files; an error names the file and what is wrong (unreadable, not PEM, the
// key does not match the certificate).
Result<CertificatePair> loadCertificateFiles(const std::string& certFile, const std::string& keyFile);

// The OpenSSL protocol version for a --tls-min-version value, or an error listing the valid ones.
Result<int> tlsMinVersion(const std::string& name);

// The pair the server will use: the files when both are given (one alone is an error, as
// upstream's), otherwise a self-signed one for `host`.
Result<CertificatePair> servingCertificate(const TlsOptions& options, const std::string& host, Clock::WallTime now);

}  // namespace kdesched::metrics
