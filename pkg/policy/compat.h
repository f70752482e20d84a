// kdesched's deliberate decision differences from upstream descheduler v0.36, one switch each.
//
//   kdesched:
//     compat: upstream                          # every switch: upstream's decisions exactly
//     compat: {cumulativeFit: upstream}         # one difference back to upstream's behaviour
//
// Each field is named for kdesched's behaviour, true for it (the default) and false for upstream's;
// its switch name (what a policy writes, compat.cpp's table) is the field's name where not noted.
// The README's differences table says, per switch, what upstream does, what kdesched does and why;
// the differential tester (test/differential/) checks that turning off the one switch it names
// makes a difference disappear, and that `compat: upstream` leaves only upstream's own random ties.
#pragma once

#include <string_view>
#include <vector>

#include "pkg/base/status.h"

namespace kdesched::policy {

class ArgsReader;

struct Compat {
  // RemovePodsViolatingInterPodAntiAffinity: a terminating pod does not violate a term.
  bool terminatingNotViolator = true;
  // RemovePodsViolatingInterPodAntiAffinity: a terminating pod is not a candidate, even with the
  // descheduler.alpha.kubernetes.io/evict annotation (which makes DefaultEvictor pass it).
  bool terminatingNotCandidate = true;
  // Anti-affinity (the plugin and nodeFit): a term's namespaceSelector selects namespaces.
  bool namespaceSelectorHonoured = true;
  // Anti-affinity (the plugin and nodeFit): a term's matchLabelKeys/mismatchLabelKeys apply.
  bool matchLabelKeysHonoured = true;
  // Anti-affinity (the plugin and nodeFit): a pod is itself by namespace and name, not name only.
  bool podIdentityNotName = true;
  // nodeFit: the required anti-affinity of the pods on the candidate node is checked too.
  bool antiAffinityBothWays = true;
  // nodeFit: a resource the pod requests 0 of is not compared with the node's remainder.
  bool zeroRequestSkipsResource = true;
  // Pods evicted earlier in the cycle are gone for what follows (candidates, usage, nodeFit).
  // Its switch, as policies write it: evictedEarlierNotCounted.
  bool evictedEarlierGone = true;
  // Topology spread with nodeFit: each moved pod reserves room on the node it is expected to reach.
  bool cumulativeFit = true;
  // Topology spread: minDomains counts missing domains as 0, as kube-scheduler.
  bool minDomainsHonoured = true;
  // Topology spread: a pod is not moved when that breaks another of its own constraints.
  bool otherConstraintsRespected = true;
  // Topology spread: a pod chosen for one constraint and headed into the domain a later constraint
  // fills counts as that constraint's move first, at no further eviction.
  bool movesSharedAcrossConstraints = true;
  // Evictor: an unready pod under a PDB needs budget like a ready one.
  bool unreadyPodNeedsBudget = true;
  // DefaultEvictor's PodsWithoutPDB protects the pods no PDB covers (upstream v0.36 never starts
  // its PDB informer and so protects every pod: kubernetes-sigs/descheduler#1882).
  bool podsWithoutPDBProtection = true;
  // LowNodeUtilization by measured usage: a node whose sample is missing, not a number or stale is
  // left out of the classification (upstream: a node missing from the metrics fails the plugin,
  // and a stale sample is used as if it were current).
  bool usageGapLeavesNodeOut = true;

  bool operator==(const Compat&) const = default;

  // Every switch set to upstream's behaviour.
  static Compat upstream();
  // The switch names, in the order of the fields.
  static const std::vector<std::string_view>& names();
  // The field of a switch name, or null.
  bool* field(std::string_view name);
};

// Reads `compat` from the `kdesched:` block: `upstream`, `kdesched`, or a mapping of switch names
// to `upstream`/`kdesched`. Unknown switch names are errors with a did-you-mean.
Status readCompat(ArgsReader& kdeschedBlock, Compat& out);

}  // namespace kdesched::policy
