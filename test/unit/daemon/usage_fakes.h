// Test doubles for the daemon's usage sources: metrics.k8s.io LIST bodies, a client over the
// scripted transport (test/unit/kube/fakes.h) on a fake clock, and the metric values as scraped.
#pragma once

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "pkg/daemon/metrics_server_collector.h"
#include "pkg/metrics/metrics.h"
#include "test/unit/kube/fakes.h"

namespace kdesched::testing {

using kube::testing::FakeTransport;
using kube::testing::Scripted;

struct NodeMetric {
  std::string node;
  std::string cpu;
  std::string memory;
  std::string timestamp = "2026-01-01T00:00:00Z";
};

inline std::string nodeMetricsList(const std::vector<NodeMetric>& items, const std::string& continueToken = "") {
  std::string out = R"({"kind":"NodeMetricsList","apiVersion":"metrics.k8s.io/v1beta1","metadata":{)";
  if (!continueToken.empty()) out += R"("continue":")" + continueToken + "\"";
  out += R"(},"items":[)";
  for (std::size_t i = 0; i < items.size(); ++i)
    out += std::string(i ? "," : "") + R"({"metadata":{"name":")" + items[i].node + R"("},"timestamp":")" +
           items[i].timestamp + R"(","window":"20s","usage":{"cpu":")" + items[i].cpu + R"(","memory":")" +
           items[i].memory + R"("}})";
  return out + "]}";
}

struct PodMetric {
  std::string name;
  std::string cpu;
  std::string memory;
  std::string ns = "default";
};

inline std::string podMetricsList(const std::vector<PodMetric>& items) {
  std::string out = R"({"kind":"PodMetricsList","apiVersion":"metrics.k8s.io/v1beta1","metadata":{},"items":[)";
  for (std::size_t i = 0; i < items.size(); ++i)
    out += std::string(i ? "," : "") + R"({"metadata":{"name":")" + items[i].name + R"(","namespace":")" + items[i].ns +
           R"("},"timestamp":"2026-01-01T00:00:00Z","window":"20s","containers":[{"name":"c",)" +
           R"("usage":{"cpu":")" + items[i].cpu + R"(","memory":")" + items[i].memory + R"("}}]})";
  return out + "]}";
}

inline std::string apiStatus(int code, const std::string& reason) {
  return R"({"kind":"Status","apiVersion":"v1","status":"Failure","message":"test","reason":")" + reason +
         R"(","code":)" + std::to_string(code) + "}";
}

// A kube::Client over a scripted transport; no rate limit and no request timer (both would sleep
// on the fake clock, whose sleeps return at once and move time).
struct FakeApi {
  std::shared_ptr<FakeClock> clock = std::make_shared<FakeClock>();
  FakeTransport* transport = nullptr;
  std::unique_ptr<kube::Client> client;

  FakeApi() {
    auto t = std::make_unique<FakeTransport>();
    transport = t.get();
    kube::ClientConfig c;
    c.server = "https://127.0.0.1:6443";
    c.qps = -1;
    c.requestTimeout = {};
    client = std::make_unique<kube::Client>(c, std::move(t), clock);
  }
  // Requests whose target starts with `prefix`.
  std::size_t sentTo(const std::string& prefix) {
    std::size_t n = 0;
    for (const auto& s : transport->sent()) n += s.target.rfind(prefix, 0) == 0;
    return n;
  }
};

// The value of one series in the text exposition ("kdesched_usage_source_up{source=\"X\"}"), or -1.
inline double metricValue(const metrics::Metrics& m, const std::string& series) {
  const std::string text = m.serialize();
  const std::size_t at = text.find("\n" + series + " ");
  if (at == std::string::npos) return -1;
  return std::stod(text.substr(at + series.size() + 2));
}

}  // namespace kdesched::testing
