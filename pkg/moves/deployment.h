// What a move needs to know of a Deployment, read from the API server's JSON, and the rollout
// arithmetic of the Deployment controller: whether a restart makes the new pod before the old one
// goes (make-before-break) for the replica count it has.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "pkg/base/status.h"

namespace kdesched::moves {

// intstr.IntOrString as a rolling update's maxSurge / maxUnavailable hold it: 1, or "25%".
struct IntOrPercent {
  std::variant<std::int32_t, std::string> value = std::int32_t{0};
  static IntOrPercent of(std::int32_t n) { return {n}; }
  static IntOrPercent of(std::string percent) { return {std::move(percent)}; }
  std::string text() const;
};

// The value for `total` replicas: a count as it is, a percentage of `total` rounded up or down
// (the Deployment controller rounds maxSurge up and maxUnavailable down). Errors for a string that
// is not `<integer>%`.
Result<std::int32_t> scaled(const IntOrPercent& v, std::int32_t total, bool roundUp);

struct Fenceposts {
  std::int32_t maxSurge = 0;
  std::int32_t maxUnavailable = 0;
};
// As the controller resolves them: both zero would stall a rollout, so maxUnavailable becomes 1.
Result<Fenceposts> resolveFenceposts(const IntOrPercent& maxSurge, const IntOrPercent& maxUnavailable,
                                     std::int32_t replicas);

struct DeploymentFacts {
  std::string ns;
  std::string name;
  std::string uid;
  std::string resourceVersion;
  std::int64_t generation = 0;
  std::int32_t replicas = 1;  // spec.replicas (defaulted to 1 by the API server)
  bool paused = false;
  std::string strategy = "RollingUpdate";
  IntOrPercent maxSurge = IntOrPercent::of("25%");
  IntOrPercent maxUnavailable = IntOrPercent::of("25%");
  std::int32_t progressDeadlineSeconds = 600;
  // status
  std::int64_t observedGeneration = 0;
  std::int32_t statusReplicas = 0;
  std::int32_t updatedReplicas = 0;
  std::int32_t availableReplicas = 0;
};

// A ReplicaSet's controlling Deployment (its ownerReference with controller: true), if any.
struct ReplicaSetOwner {
  std::string kind;  // "" when it has no controller
  std::string name;
  std::string uid;
};

Result<DeploymentFacts> decodeDeployment(std::string_view json);
Result<ReplicaSetOwner> decodeReplicaSetOwner(std::string_view json);

// Why a restart of `d` would not make a new pod before an old one goes, or would replace more than
// `maxReplicas` pods, or would meet a rollout already under way; nullopt: a move may restart it.
// `maxSurge 1, maxUnavailable 0` for its replica count is what it takes.
std::optional<std::string> whyNotRestartable(const DeploymentFacts& d, std::int32_t maxReplicas);

// The rollout a restart triggers, for people: "rollout restart of Deployment ns/name (1 replica,
// maxSurge 1, maxUnavailable 0)".
std::string describeRestart(const DeploymentFacts& d);

}  // namespace kdesched::moves
