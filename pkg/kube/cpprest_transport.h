// The production Transport: cpprestsdk's http_client over TLS (OpenSSL through Boost.Asio).
#pragma once

#include <memory>

#include "pkg/kube/config.h"
#include "pkg/kube/transport.h"

namespace kdesched::kube {

// Checks the TLS material first, so a bad CA or key fails here, at startup, and not at the first
// handshake. Certificate verification is on unless insecureSkipTlsVerify; with caData set, only
// that CA is trusted (not the system roots), as client-go does.
Result<std::unique_ptr<Transport>> makeCpprestTransport(const ClientConfig& config);

}  // namespace kdesched::kube
