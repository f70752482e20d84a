#include "pkg/moves/deployment.h"

#include <charconv>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace kdesched::moves {

std::string IntOrPercent::text() const {
  if (const auto* n = std::get_if<std::int32_t>(&value)) return std::to_string(*n);
  return std::get<std::string>(value);
}

Result<std::int32_t> scaled(const IntOrPercent& v, std::int32_t total, bool roundUp) {
  if (const auto* n = std::get_if<std::int32_t>(&v.value)) return *n;
  const std::string& s = std::get<std::string>(v.value);
  std::int32_t percent = 0;
  const char* end = s.data() + s.size();
  auto [p, ec] = std::from_chars(s.data(), end, percent);
  if (s.empty() || s.back() != '%' || ec != std::errc() || p != end - 1)
    return Status::error("invalid value for IntOrString: invalid type: string is not a percentage: \"" + s + "\"");
  const double exact = static_cast<double>(percent) * total / 100.0;
  return static_cast<std::int32_t>(roundUp ? std::ceil(exact) : std::floor(exact));
}

Result<Fenceposts> resolveFenceposts(const IntOrPercent& maxSurge, const IntOrPercent& maxUnavailable,
                                     std::int32_t replicas) {
  Result<std::int32_t> surge = scaled(maxSurge, replicas, true);
  if (!surge) return Status::error("maxSurge: " + surge.error());
  Result<std::int32_t> unavailable = scaled(maxUnavailable, replicas, false);
  if (!unavailable) return Status::error("maxUnavailable: " + unavailable.error());
  Fenceposts f{*surge, *unavailable};
  if (f.maxSurge == 0 && f.maxUnavailable == 0) f.maxUnavailable = 1;
  return f;
}

namespace {

using nlohmann::json;

IntOrPercent intOrPercent(const json& j, const IntOrPercent& fallback) {
  if (j.is_number_integer()) return IntOrPercent::of(j.get<std::int32_t>());
  if (j.is_string()) return IntOrPercent::of(j.get<std::string>());
  return fallback;
}

template <typename T>
T field(const json& obj, const char* key, T fallback) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return fallback;
  return it->get<T>();
}

const json& child(const json& obj, const char* key) {
  static const json empty = json::object();
  auto it = obj.find(key);
  return it != obj.end() && it->is_object() ? *it : empty;
}

}  // namespace

Result<DeploymentFacts> decodeDeployment(std::string_view text) {
  try {
    const json j = json::parse(text);
    const json& meta = child(j, "metadata");
    const json& spec = child(j, "spec");
    const json& status = child(j, "status");
    const json& strategy = child(spec, "strategy");
    const json& rolling = child(strategy, "rollingUpdate");
    DeploymentFacts d;
    d.ns = field<std::string>(meta, "namespace", "");
    d.name = field<std::string>(meta, "name", "");
    d.uid = field<std::string>(meta, "uid", "");
    d.resourceVersion = field<std::string>(meta, "resourceVersion", "");
    d.generation = field<std::int64_t>(meta, "generation", 0);
    d.replicas = field<std::int32_t>(spec, "replicas", 1);
    d.paused = field<bool>(spec, "paused", false);
    d.strategy = field<std::string>(strategy, "type", "RollingUpdate");
    d.maxSurge = intOrPercent(rolling.value("maxSurge", json()), d.maxSurge);
    d.maxUnavailable = intOrPercent(rolling.value("maxUnavailable", json()), d.maxUnavailable);
    d.progressDeadlineSeconds = field<std::int32_t>(spec, "progressDeadlineSeconds", 600);
    d.observedGeneration = field<std::int64_t>(status, "observedGeneration", 0);
    d.statusReplicas = field<std::int32_t>(status, "replicas", 0);
    d.updatedReplicas = field<std::int32_t>(status, "updatedReplicas", 0);
    d.availableReplicas = field<std::int32_t>(status, "availableReplicas", 0);
    if (d.name.empty() || d.uid.empty()) return Status::error("Deployment without metadata.name or metadata.uid");
    return d;
  } catch (const std::exception& e) {
    return Status::error(std::string("cannot decode the Deployment: ") + e.what());
  }
}

Result<ReplicaSetOwner> decodeReplicaSetOwner(std::string_view text) {
  try {
    const json j = json::parse(text);
    const json& meta = child(j, "metadata");
    auto refs = meta.find("ownerReferences");
    if (refs != meta.end() && refs->is_array())
      for (const json& r : *refs)
        if (r.is_object() && field<bool>(r, "controller", false))
          return ReplicaSetOwner{field<std::string>(r, "kind", ""), field<std::string>(r, "name", ""),
                                 field<std::string>(r, "uid", "")};
    return ReplicaSetOwner{};
  } catch (const std::exception& e) {
    return Status::error(std::string("cannot decode the ReplicaSet: ") + e.what());
  }
}

std::optional<std::string> whyNotRestartable(const DeploymentFacts& d, std::int32_t maxReplicas) {
  const std::string who = "Deployment " + d.ns + "/" + d.name;
  if (d.replicas > maxReplicas)
    return fmt::format("{} has {} replicas, moves.maxReplicas is {}: a restart would replace every one", who,
                       d.replicas, maxReplicas);
  if (d.replicas < 1) return who + " wants 0 replicas";
  if (d.paused) return who + " is paused: a restart would not roll out";
  if (d.strategy != "RollingUpdate")
    return who + " has strategy " + d.strategy + ": it deletes the old pods before making new ones";
  Result<Fenceposts> f = resolveFenceposts(d.maxSurge, d.maxUnavailable, d.replicas);
  if (!f) return who + ": " + f.error();
  if (f->maxSurge < 1 || f->maxUnavailable > 0)
    return fmt::format(
        "{} rolls out with maxSurge {} and maxUnavailable {} ({} and {} of {} replica(s)): a restart could take a pod "
        "away before its replacement is ready (it needs maxSurge >= 1 and maxUnavailable 0)",
        who, f->maxSurge, f->maxUnavailable, d.maxSurge.text(), d.maxUnavailable.text(), d.replicas);
  // deploymentutil.DeploymentComplete: every replica updated and available, the spec observed.
  if (d.observedGeneration < d.generation || d.updatedReplicas != d.replicas || d.statusReplicas != d.replicas ||
      d.availableReplicas != d.replicas)
    return fmt::format(
        "{} is mid-rollout (generation {} observed {}, replicas {}/{} updated {} available {}): a move waits for it",
        who, d.generation, d.observedGeneration, d.statusReplicas, d.replicas, d.updatedReplicas, d.availableReplicas);
  return std::nullopt;
}

std::string describeRestart(const DeploymentFacts& d) {
  Result<Fenceposts> f = resolveFenceposts(d.maxSurge, d.maxUnavailable, d.replicas);
  return fmt::format("rollout restart of Deployment {}/{} ({} replica{}, maxSurge {}, maxUnavailable {})", d.ns, d.name,
                     d.replicas, d.replicas == 1 ? "" : "s", f ? f->maxSurge : 0, f ? f->maxUnavailable : 0);
}

}  // namespace kdesched::moves
