// TLS for the /metrics and probe endpoint, as upstream's secure serving: the certificate and key
// from --tls-cert-file/--tls-private-key-file, or a self-signed pair made at start (kept in
// memory), --tls-min-version as the protocol floor and --tls-cipher-suites for TLS 1.0-1.2.
#pragma once

#include <string>
#include <vector>

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
  std::vector<std::string> cipherSuites;  // --tls-cipher-suites: Go's (IANA) names; empty = OpenSSL's defaults
};

// A self-signed certificate for `host` (CN "<host>@<unix time>", as client-go's cert util names
// it; SANs: host, localhost, 127.0.0.1, ::1), ECDSA P-256, valid from an hour before `now` for a year.
Result<CertificatePair> selfSignedCertificate(const std::string& host, Clock::WallTime now);

// The pair from the two files; an error names the file and what is wrong (unreadable, not PEM, the
// key does not match the certificate).
Result<CertificatePair> loadCertificateFiles(const std::string& certFile, const std::string& keyFile);

// The OpenSSL protocol version for a --tls-min-version value, or an error listing the valid ones.
Result<int> tlsMinVersion(const std::string& name);

// What --tls-cipher-suites means for OpenSSL. As Go's crypto/tls: the list restricts TLS 1.0-1.2
// only (TLS 1.3 suites are always on, so their names are accepted and change nothing), and any name
// Go knows is accepted, secure or not. Names this OpenSSL cannot offer at its security level (RC4,
// 3DES) are skipped and reported; a name Go does not know is an error with upstream's message.
struct CipherSelection {
  std::string openssl;                   // for SSL_CTX_set_cipher_list; "" = keep OpenSSL's defaults
  std::vector<std::string> unavailable;  // accepted names skipped here
  bool tls12Possible = true;             // false: the list left no TLS 1.0-1.2 suite, so only TLS 1.3 can connect
};
Result<CipherSelection> tlsCipherSuites(const std::vector<std::string>& names);

}  // namespace kdesched::metrics
