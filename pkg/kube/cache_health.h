// The cache's health as the reflectors report it: a relist request (410 Gone, or a watch line that
// could not be decoded) means events were lost, so that resource's cache is out of sync until the
// relist has replaced it. Thread-safe.
#pragma once

#include <cstdint>
#include <mutex>
#include <set>
#include <string>

#include "pkg/evictor/live_conditions.h"
#include "pkg/kube/reflector.h"

namespace kdesched::kube {

class CacheHealth : public ReflectorObserver, public evictor::CacheFreshness {
 public:
  void relistRequested(api::Kind kind);
  void listed(api::Kind kind);
  void onList(api::Kind kind, std::size_t, double) override { listed(kind); }
  void onRelist(api::Kind kind, const std::string&) override { relistRequested(kind); }

  std::string relisting() const override;
  std::uint64_t relistRequests() const override;

 private:
  mutable std::mutex mu_;
  std::set<api::Kind> pending_;
  std::uint64_t requests_ = 0;
};

}  // namespace kdesched::kube
