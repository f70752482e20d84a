// The production Transport: cpprestsdk's http_client over TLS (OpenSSL through Boost.Asio).
#pragma once

#include <memory>

#include "pkg/kube/config.h"
#include "pkg/kube/proxy.h"
#include "pkg/kube/transport.h"

namespace kdesched::kube {

// Checks the TLS material first, so a bad CA or key fails here, at startup, and not at the first
// handshake. Certificate verification is on unless insecureSkipTlsVerify; with caData set, only
// that CA is trusted (not the system roots), as client-go does. Requests go through the proxy
// chooseProxy() picks (config.proxyUrl, else `env`); one kdesched cannot speak is an error here.
Result<std::unique_ptr<Transport>> makeCpprestTransport(const ClientConfig& config);  // the process's environment
Result<std::unique_ptr<Transport>> makeCpprestTransport(const ClientConfig& config, const ProxyEnvironment& env);

}  // namespace kdesched::kube
