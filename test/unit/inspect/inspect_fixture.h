// A kube::Client over the scripted fake transport (test/unit/kube/fakes.h), for pkg/inspect.
#pragma once

#include <gtest/gtest.h>

#include <memory>

#include "pkg/kube/client.h"
#include "test/unit/kube/fakes.h"

namespace kdesched::inspect {

class InspectFixture : public ::testing::Test {
 protected:
  InspectFixture() {
    kube::ClientConfig cfg;
    cfg.server = "https://api:6443";
    cfg.bearerToken = "tok";
    cfg.qps = -1;
    cfg.requestTimeout = {};
    auto t = std::make_unique<kube::testing::FakeTransport>();
    transport_ = t.get();
    client_ = std::make_unique<kube::Client>(std::move(cfg), std::move(t), clock_);
  }

  std::shared_ptr<kube::testing::FakeClock> clock_ = std::make_shared<kube::testing::FakeClock>();
  kube::testing::FakeTransport* transport_ = nullptr;
  std::unique_ptr<kube::Client> client_;
};

}  // namespace kdesched::inspect
