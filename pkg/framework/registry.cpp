#include "pkg/framework/registry.h"

namespace kdesched::framework {
namespace {

class PinnedWallClock final : public Clock {
 public:
  explicit PinnedWallClock(WallTime at) : at_(at) {}
  TimePoint now() override { return systemClock()->now(); }
  WallTime wallNow() override { return at_; }
  bool sleepFor(Duration d, Cancellation* cancel) override { return systemClock()->sleepFor(d, cancel); }

 private:
  WallTime at_;
};

}  // namespace

WallSeconds WallSeconds::pinned(api::Timestamp at) {
  return WallSeconds(std::make_shared<PinnedWallClock>(Clock::WallTime{} + std::chrono::seconds(at)));
}

api::Timestamp WallSeconds::operator()() const {
  return std::chrono::floor<std::chrono::seconds>(clock_->wallNow().time_since_epoch()).count();
}

Status Registry::add(PluginRegistration r) {
  if (r.name.empty()) return Status::error("a plugin registration has no name");
  if (!r.factory) return Status::error("plugin \"" + r.name + "\" is registered without a factory");
  std::string name = r.name;
  // try_emplace leaves `r` alone when the name is taken: the first registration stays.
  if (!plugins_.try_emplace(name, std::move(r)).second)
    return Status::error("plugin \"" + name + "\" is registered twice");
  return Status::ok();
}

const PluginRegistration* Registry::find(const std::string& name) const {
  auto it = plugins_.find(name);
  return it == plugins_.end() ? nullptr : &it->second;
}

std::vector<std::string> Registry::names() const {
  std::vector<std::string> out;
  for (const auto& [n, r] : plugins_) out.push_back(n);
  return out;
}

std::string_view toString(Refusal r) {
  switch (r) {
    case Refusal::None: return "none";
    case Refusal::Filter: return "filter";
    case Refusal::PreEvictionFilter: return "preEvictionFilter";
    case Refusal::TotalLimit: return "limit-total";
    case Refusal::NodeLimit: return "limit-node";
    case Refusal::NamespaceLimit: return "limit-namespace";
    case Refusal::Pdb: return "pdb";
    case Refusal::AntiFlapping: return "anti-flapping";
    case Refusal::Budget: return "budget";
    case Refusal::Shutdown: return "shutdown";
    case Refusal::StaleCache: return "stale-cache";
    case Refusal::NotLeader: return "not-leader";
    case Refusal::ApiError: return "api";
  }
  return "unknown";
}

std::string_view toString(Suppression s) {
  switch (s) {
    case Suppression::None: return "none";
    case Suppression::Backoff: return "backoff";
    case Suppression::Cooldown: return "cooldown";
    case Suppression::RateLimit: return "rate-limit";
  }
  return "?";
}

std::string_view toString(ApiFailure f) {
  switch (f) {
    case ApiFailure::None: return "none";
    case ApiFailure::NotFound: return "not-found";
    case ApiFailure::Conflict: return "conflict";
    case ApiFailure::TooManyRequests: return "too-many-requests";
    case ApiFailure::Unauthorized: return "unauthorized";
    case ApiFailure::Forbidden: return "forbidden";
    case ApiFailure::Rejected: return "rejected";
    case ApiFailure::ServerError: return "server-error";
    case ApiFailure::Unreachable: return "unreachable";
    case ApiFailure::Cancelled: return "cancelled";
  }
  return "unknown";
}

}  // namespace kdesched::framework
