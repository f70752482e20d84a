#include "pkg/moves/advisor.h"

#include <fmt/format.h>

#include "pkg/cluster/snapshot.h"

namespace kdesched::moves {

namespace {

std::string failedRead(const std::string& what, const evictor::ApiAnswer& a) {
  return fmt::format("cannot read {}: {} {}", what, a.status == 0 ? "no answer" : std::to_string(a.status), a.message);
}

}  // namespace

Result<DeploymentFacts> ApiWorkloads::deploymentOf(const std::string& ns, const std::string& replicaSet) {
  std::string body;
  evictor::ApiAnswer a = api_.getApps("replicasets", ns, replicaSet, body);
  if (a.status != 200) return Status::error(failedRead("ReplicaSet " + ns + "/" + replicaSet, a));
  Result<ReplicaSetOwner> owner = decodeReplicaSetOwner(body);
  if (!owner) return owner.status();
  if (owner->kind != "Deployment")
    return Status::error("ReplicaSet " + ns + "/" + replicaSet + " is not controlled by a Deployment" +
                         (owner->kind.empty() ? "" : " (by a " + owner->kind + ")") + ": nothing would surge");
  body.clear();
  a = api_.getApps("deployments", ns, owner->name, body);
  if (a.status != 200) return Status::error(failedRead("Deployment " + ns + "/" + owner->name, a));
  Result<DeploymentFacts> d = decodeDeployment(body);
  if (d && d->uid != owner->uid)
    return Status::error("Deployment " + ns + "/" + owner->name + " was replaced (its UID differs from the owner's)");
  return d;
}

Advisor::Advisor(policy::MovesConfig config, Workloads& workloads, MoveTracker* tracker)
    : config_(std::move(config)), workloads_(workloads), tracker_(tracker) {}

evictor::MoveOffer Advisor::consider(const api::Pod& pod, const cluster::Snapshot& snapshot, bool pdbBlocks) {
  if (!config_.enabled) return {};
  if (config_.namespaces && !config_.namespaces->allows(pod.ns.view())) return {};
  if (config_.labelSelector && !config_.labelSelector->matches(pod.labels)) return {};
  const api::OwnerReference* ref = pod.controllerRef();
  if (!ref) return {{}, "the pod has no controller: nothing would make its replacement"};
  if (ref->kind.view() != "ReplicaSet" || ref->apiVersion.view() != "apps/v1")
    return {{},
            "its controller is a " + ref->kind.str() +
                ": only a Deployment can make the new pod before the old one goes (surge)"};
  // Other pods of its ReplicaSet stay Ready while this one goes: an eviction keeps the workload up.
  const std::size_t siblings = snapshot.podsOfOwner(ref->uid).size();
  if (!pdbBlocks && siblings > 1) return {};
  if (siblings > static_cast<std::size_t>(config_.maxReplicas))
    return {{},
            "its ReplicaSet has " + std::to_string(siblings) + " pods, moves.maxReplicas is " +
                std::to_string(config_.maxReplicas) + ": a restart would replace every one"};
  Result<DeploymentFacts> d = workloads_.deploymentOf(pod.ns.str(), ref->name.str());
  if (!d) return {{}, d.error()};
  if (std::optional<std::string> why = whyNotRestartable(*d, config_.maxReplicas)) return {{}, *why};
  if (tracker_)
    if (std::optional<std::string> why = tracker_->busy(d->ns, d->name, d->generation)) return {{}, *why};
  evictor::MovePlan plan{.ns = d->ns,
                         .deployment = d->name,
                         .uid = d->uid,
                         .resourceVersion = d->resourceVersion,
                         .generation = d->generation,
                         .rollout = describeRestart(*d),
                         .deadlineSeconds = config_.deadlineSeconds > 0
                                                ? config_.deadlineSeconds
                                                : static_cast<double>(d->progressDeadlineSeconds)};
  return {std::move(plan), ""};
}

}  // namespace kdesched::moves
