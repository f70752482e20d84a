#include "pkg/kube/leader_election.h"

#include <unistd.h>
#include <nlohmann/json.hpp>

#include <random>

#include "pkg/base/log.h"
#include "pkg/kube/wire.h"

namespace kdesched::kube {
namespace {

// Release is best effort on the way out: a successor takes over after leaseDuration anyway.
constexpr std::chrono::seconds kMaxReleaseWait{5};

}  // namespace

Status validateLeaderElection(const LeaderElectionConfig& c) {
  using namespace std::chrono;
  if (c.retryPeriod <= milliseconds(0)) return Status::error("--leader-elect-retry-period must be greater than zero");
  if (c.leaseDuration <= c.renewDeadline)
    return Status::error("--leader-elect-lease-duration must be greater than --leader-elect-renew-deadline");
  if (c.renewDeadline.count() <= 1.2 * static_cast<double>(c.retryPeriod.count()))
    return Status::error("--leader-elect-renew-deadline must be greater than 1.2 × --leader-elect-retry-period");
  if (c.name.empty() || c.ns.empty()) return Status::error("--leader-elect-resource-name and -namespace must be set");
  return Status::ok();
}

std::string defaultIdentity() {
  char host[256] = {0};
  if (::gethostname(host, sizeof host - 1) != 0) std::snprintf(host, sizeof host, "unknown");
  std::random_device rd;
  std::uniform_int_distribution<unsigned> d(0, 15);
  std::string suffix;
  for (int i = 0; i < 16; ++i) suffix += "0123456789abcdef"[d(rd)];
  return std::string(host) + "_" + suffix;
}

LeaderElector::LeaderElector(Client& client, LeaderElectionConfig config, std::shared_ptr<Clock> clock)
    : client_(client), config_(std::move(config)), clock_(std::move(clock)) {
  if (config_.identity.empty()) config_.identity = defaultIdentity();
}

LeaderElector::~LeaderElector() {
  stop_.cancel();
  if (renewer_.joinable()) renewer_.join();
}

std::string LeaderElector::leaseKey() const { return config_.ns + "/" + config_.name; }

std::string LeaderElector::leasePath() const {
  return "/apis/coordination.k8s.io/v1/namespaces/" + config_.ns + "/leases/" + config_.name;
}

std::string LeaderElector::body(const Record& r, bool withResourceVersion) const {
  nlohmann::json j = nlohmann::json::parse(r.object, nullptr, false);
  if (j.is_discarded() || !j.is_object()) j = nlohmann::json::object();
  j["apiVersion"] = "coordination.k8s.io/v1";
  j["kind"] = "Lease";
  if (!j.contains("metadata") || !j["metadata"].is_object()) j["metadata"] = nlohmann::json::object();
  if (!j.contains("spec") || !j["spec"].is_object()) j["spec"] = nlohmann::json::object();
  nlohmann::json& meta = j["metadata"];
  meta["name"] = config_.name;
  meta["namespace"] = config_.ns;
  // The server's bookkeeping of its own writes: not ours to send back.
  meta.erase("managedFields");
  nlohmann::json& spec = j["spec"];
  spec["holderIdentity"] = r.holder;
  spec["leaseDurationSeconds"] = r.leaseDurationSeconds;
  spec["leaseTransitions"] = r.transitions;
  if (!r.acquireTime.empty()) spec["acquireTime"] = r.acquireTime;
  if (!r.renewTime.empty()) spec["renewTime"] = r.renewTime;
  if (withResourceVersion)
    meta["resourceVersion"] = r.resourceVersion;
  else
    meta.erase("resourceVersion");
  return j.dump();
}

Status LeaderElector::parseRecord(const std::string& json, Record& out) {
  try {
    auto j = nlohmann::json::parse(json);
    const auto& spec = j.value("spec", nlohmann::json::object());
    out.holder = spec.value("holderIdentity", "");
    out.leaseDurationSeconds = spec.value("leaseDurationSeconds", 0);
    out.acquireTime = spec.value("acquireTime", "");
    out.renewTime = spec.value("renewTime", "");
    out.transitions = spec.value("leaseTransitions", 0);
    out.resourceVersion = j.at("metadata").value("resourceVersion", "");
    out.object = json;
  } catch (const std::exception& e) {
    return Status::error(e.what());
  }
  return Status::ok();
}

bool LeaderElector::tryAcquireOrRenew(Cancellation* cancel) {
  const int durationSeconds =
      static_cast<int>(std::chrono::duration_cast<std::chrono::seconds>(config_.leaseDuration).count());
  // One attempt (GET, then PUT or POST) may take at most renewDeadline, as client-go bounds it; each
  // request of it also has the client's request timeout, which should be the shorter.
  RequestDeadline attempt(cancel, config_.renewDeadline, clock_);
  RequestOptions opts;
  opts.cancel = attempt.get();
  auto now = clock_->now();
  const std::string nowStr = rfc3339(clock_->wallNow(), true);
  auto got = client_.get(leasePath(), opts);
  if (!got) {
    if (got.error().cancelled && cancel && cancel->cancelled()) return false;
    if (got.error().code != 404) {
      log::warn("cannot read the leader lease",
                {{"lease", leaseKey()}, {"error", attempt.explain(got.error().describe())}});
      return false;
    }
    Record fresh{config_.identity, durationSeconds, nowStr, nowStr, 0, "", ""};
    auto created =
        client_.post("/apis/coordination.k8s.io/v1/namespaces/" + config_.ns + "/leases", body(fresh, false), opts);
    if (!created) {
      // 409: another replica created it first (they start together); the next attempt reads it.
      if (created.error().code != 409)
        log::warn("cannot create the leader lease",
                  {{"lease", leaseKey()}, {"error", attempt.explain(created.error().describe())}});
      return false;
    }
    // The version to release from, should release() come before the first renewal.
    try {
      fresh.resourceVersion = nlohmann::json::parse(created->body).at("metadata").value("resourceVersion", "");
      fresh.object = created->body;
    } catch (...) {
      fresh.resourceVersion.clear();
    }
    std::lock_guard<std::mutex> lock(mu_);
    observed_ = fresh;
    observedAt_ = now;
    return true;
  }

  Record current;
  if (auto parsed = parseRecord(got->body, current); !parsed) {
    log::warn("cannot decode the leader lease", {{"lease", leaseKey()}, {"error", parsed.message()}});
    return false;
  }

  {
    std::lock_guard<std::mutex> lock(mu_);
    // Only local observation times count: the record changed → restart the takeover clock.
    if (current.resourceVersion != observed_.resourceVersion || current.holder != observed_.holder) {
      observed_ = current;
      observedAt_ = now;
    }
    bool heldByOther = !current.holder.empty() && current.holder != config_.identity;
    auto lease =
        std::chrono::seconds(current.leaseDurationSeconds > 0 ? current.leaseDurationSeconds : durationSeconds);
    if (heldByOther && now - observedAt_ < lease) return false;
  }

  Record next = current;
  if (current.holder != config_.identity) {
    next.acquireTime = nowStr;
    next.transitions = current.transitions + 1;
  }
  next.holder = config_.identity;
  next.leaseDurationSeconds = durationSeconds;
  next.renewTime = nowStr;
  auto put = client_.put(leasePath(), body(next, true), opts);
  if (!put) {
    if (put.error().cancelled && cancel && cancel->cancelled()) return false;
    if (put.error().code != 409)
      log::warn("cannot update the leader lease",
                {{"lease", leaseKey()}, {"error", attempt.explain(put.error().describe())}});
    return false;
  }
  try {
    next.resourceVersion = nlohmann::json::parse(put->body).at("metadata").value("resourceVersion", "");
    next.object = put->body;
  } catch (...) {
    next.resourceVersion.clear();
  }
  std::lock_guard<std::mutex> lock(mu_);
  observed_ = next;
  observedAt_ = now;
  return true;
}

bool LeaderElector::acquire(Cancellation& cancel) {
  log::info("waiting for leadership", {{"lease", leaseKey()}, {"identity", config_.identity}});
  while (!cancel.cancelled()) {
    const Clock::TimePoint started = clock_->now();
    if (tryAcquireOrRenew(&cancel)) {
      std::lock_guard<std::mutex> lock(mu_);
      held_ = true;
      lastRenew_ = started;
      log::info("became leader", {{"lease", leaseKey()}, {"identity", config_.identity}});
      return true;
    }
    if (!clock_->sleepFor(config_.retryPeriod, &cancel)) break;
  }
  return false;
}

void LeaderElector::startRenewing(std::function<void()> onLost) {
  renewer_ = std::thread([this, onLost = std::move(onLost)] {
    while (clock_->sleepFor(config_.retryPeriod, &stop_)) {
      // The lease is ours from when the renewal was sent, not from its answer: a PUT that took
      // long must not lend the leader time the others do not count.
      const Clock::TimePoint started = clock_->now();
      if (tryAcquireOrRenew(&stop_)) {
        std::lock_guard<std::mutex> lock(mu_);
        lastRenew_ = started;
        continue;
      }
      if (stop_.cancelled()) return;
      bool lost;
      {
        std::lock_guard<std::mutex> lock(mu_);
        lost = clock_->now() - lastRenew_ >= config_.renewDeadline ||
               (!observed_.holder.empty() && observed_.holder != config_.identity);
        if (lost) held_ = false;
      }
      if (lost) {
        log::error("leadership lost", {{"lease", leaseKey()}, {"identity", config_.identity}});
        if (onLost) onLost();
        return;
      }
    }
  });
}

bool LeaderElector::isLeader() const {
  std::lock_guard<std::mutex> lock(mu_);
  return held_ && clock_->now() - lastRenew_ < config_.renewDeadline;
}

void LeaderElector::release() {
  stop_.cancel();
  if (renewer_.joinable() && renewer_.get_id() != std::this_thread::get_id()) renewer_.join();
  bool wasHeld, stale;
  Record r;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // Only a lease still ours by our own clock: past renewDeadline a successor may hold it (the
    // PUT would fail on the resourceVersion anyway), and the API server is likely unreachable.
    stale = held_ && clock_->now() - lastRenew_ >= config_.renewDeadline;
    wasHeld = held_ && !stale;
    held_ = false;
    r = observed_;
  }
  if (!wasHeld || r.holder != config_.identity) {
    if (stale)
      log::info("not releasing the lease: not renewed within the renew deadline, a successor may hold it",
                {{"lease", leaseKey()}, {"identity", config_.identity}});
    return;
  }
  RequestDeadline bounded(nullptr, std::min<Clock::Duration>(config_.renewDeadline, kMaxReleaseWait), clock_);
  RequestOptions opts;
  opts.cancel = bounded.get();
  auto put = putRelease(std::move(r), opts);
  if (put)
    log::info("released leadership", {{"lease", leaseKey()}, {"identity", config_.identity}});
  else
    log::warn("cannot release the lease", {{"lease", leaseKey()}, {"error", bounded.explain(put.error().describe())}});
}

ApiResult<HttpResponse> LeaderElector::putRelease(Record r, const RequestOptions& opts) {
  auto emptied = [this](Record rec) {
    rec.holder.clear();
    rec.leaseDurationSeconds = 1;
    rec.renewTime = rfc3339(clock_->wallNow(), true);
    return body(rec, true);
  };
  auto put = client_.put(leasePath(), emptied(r), opts);
  if (put || put.error().code != 409) return put;
  // A renewal cut short by the stop can still have been written: then the version we hold is
  // stale. Read the lease once and release from what it says, if it is still ours.
  auto got = client_.get(leasePath(), opts);
  if (!got) return got;
  Record current;
  if (!parseRecord(got->body, current) || current.holder != config_.identity) return put;
  return client_.put(leasePath(), emptied(std::move(current)), opts);
}

}  // namespace kdesched::kube
