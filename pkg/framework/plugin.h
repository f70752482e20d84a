// Plugin interfaces for the four extension points, the Handle a plugin works through, and the
// evictor contract: plugins say "I would evict this pod, because ..."; the evictor decides.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <ranges>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "pkg/api/types.h"
#include "pkg/base/status.h"
#include "pkg/cluster/snapshot.h"
#include "pkg/framework/explain.h"
#include "pkg/framework/verdict.h"
#include "pkg/policy/compat.h"
#include "pkg/usage/usage.h"

namespace kdesched::framework {

class Handle;

struct FilterResult {
  bool ok = true;
  std::string reason;  // why not, for people: "pod is owned by a DaemonSet"
  // Which filter said no. A plugin leaves it empty; the profile's filter chain names the plugin.
  std::string by;
  static FilterResult pass() { return {}; }
  static FilterResult fail(std::string why) { return {false, std::move(why), ""}; }
};

// Why the evictor did not evict. Plugins react to the limit kinds as upstream's do: a node limit
// moves on to the next node, the total limit ends the plugin. Shutdown, StaleCache and NotLeader
// are the live gates' refusals: nothing went wrong with the pod or the API server, so they are not
// counted as failed evictions.
enum class Refusal {
  None,
  Filter,
  PreEvictionFilter,
  TotalLimit,
  NodeLimit,
  NamespaceLimit,
  Pdb,
  AntiFlapping,
  Budget,  // a disruption budget of the policy's `kdesched: {budgets: ...}` is spent (or a freeze)
  Shutdown,
  StaleCache,
  NotLeader,
  ApiError
};
std::string_view toString(Refusal r);

// What the API server answered to an eviction it did not carry out (Refusal::ApiError, and the
// PDB refusals the server made). None: no request was made.
enum class ApiFailure {
  None,
  NotFound,         // 404: the pod is already gone
  Conflict,         // 409: the UID precondition failed, the pod was replaced
  TooManyRequests,  // 429 without a PodDisruptionBudget cause: throttled
  Unauthorized,     // 401
  Forbidden,        // 403: RBAC
  Rejected,         // any other 4xx
  ServerError,      // 5xx
  Unreachable,      // no answer: connection failed or timed out
  Cancelled,        // cut short by shutdown
};
std::string_view toString(ApiFailure f);

// Which anti-flapping rule refused (Refusal::AntiFlapping): an owner backing off after its
// evictions kept recreating the situation, an owner's cooldown since its last eviction, or the
// process-wide eviction rate.
enum class Suppression { None, Backoff, Cooldown, RateLimit };
std::string_view toString(Suppression s);  // "backoff", "cooldown", "rate-limit"

struct EvictResult {
  bool evicted = false;
  Refusal refusal = Refusal::None;
  std::string by;      // who refused: a filter plugin name, "limits", a PDB "ns/name", "api"
  std::string detail;  // why, for people
  ApiFailure api = ApiFailure::None;
  // No later eviction of this run can pass either (kdesched's process-wide eviction rate limit is
  // reached): the plugin stops, as at the total limit, instead of refusing every candidate left.
  bool endsRun = false;
  Suppression suppression = Suppression::None;
  // Moves (pkg/moves): `move` says the rollout that replaced the pod instead of an eviction;
  // `noMove` why the pod could not move, when moves are on and it was a candidate (for explain).
  std::string move = {};
  std::string noMove = {};
  // Whether the plugin stops here: the total limit (as upstream's plugins do) or endsRun.
  bool stopsPlugin() const { return refusal == Refusal::TotalLimit || endsRun; }
  static EvictResult success() { return {true, Refusal::None, "", "", ApiFailure::None}; }
  static EvictResult refused(Refusal r, std::string by, std::string detail) {
    return {false, r, std::move(by), std::move(detail), ApiFailure::None};
  }
  // An eviction the API server refused (or never answered); `r` is ApiError or Pdb.
  static EvictResult apiRefused(Refusal r, ApiFailure api, std::string by, std::string detail) {
    return {false, r, std::move(by), std::move(detail), api};
  }
};

// State shared by all plugins of all profiles within one cycle: what was already evicted.
// Also caches per-node requested resources, kept current as pods are evicted.
class CycleState {
 public:
  explicit CycleState(policy::Compat compat = {}) : compat_(compat) {}

  // The policy's `kdesched: {compat: ...}` switches, for every plugin and the evictor.
  const policy::Compat& compat() const { return compat_; }
  // Whether the pod is gone for the running plugin: evicted earlier in the cycle, or with
  // compat evictedEarlierNotCounted: upstream, evicted by the running plugin itself (upstream's
  // informer still lists what other plugins evicted).
  bool isEvicted(const api::Pod& pod) const {
    return (compat_.evictedEarlierGone ? evicted_ : evictedThisRun_).count(&pod) != 0;
  }
  void markEvicted(const api::Pod& pod);
  // A plugin run starts (the cycle runner calls it): what the previous plugin evicted is no
  // longer "its own".
  void beginPluginRun() { evictedThisRun_.clear(); }

  // Requested resources of a node's live pods; null until computed for this cycle.
  const api::ResourceList* cachedUsage(const api::Symbol& node) const;
  void cacheUsage(const api::Symbol& node, api::ResourceList usage);

  // A node list a plugin derives from a snapshot alone (e.g. DefaultEvictor's ready nodes for
  // nodeFit), kept for the cycle under the plugin instance's and the snapshot's addresses; null
  // until cached.
  const std::vector<const api::Node*>* cachedNodes(const void* owner, const cluster::Snapshot& s) const;
  const std::vector<const api::Node*>& cacheNodes(const void* owner, const cluster::Snapshot& s,
                                                  std::vector<const api::Node*> nodes);

 private:
  std::map<std::pair<const void*, const cluster::Snapshot*>, std::vector<const api::Node*>> nodeLists_;
  policy::Compat compat_;
  std::unordered_set<const api::Pod*> evicted_;
  std::unordered_set<const api::Pod*> evictedThisRun_;
  std::unordered_map<api::Symbol, api::ResourceList> usage_;
};

// The eviction chain as one profile's plugins see it (implemented in pkg/evictor).
class Evictor {
 public:
  virtual ~Evictor() = default;
  // The profile's Filter plugins, ANDed (first failure wins).
  virtual FilterResult filter(const api::Pod& pod, const Handle& h) = 0;
  // The profile's PreEvictionFilter plugins, ANDed.
  virtual FilterResult preEvictionFilter(const api::Pod& pod, const Handle& h) = 0;
  // Filter, PreEvictionFilter, limits, PDB budget, then the sink. `reason` names the rule broken.
  virtual EvictResult evict(const api::Pod& pod, const std::string& reason, const Handle& h) = 0;
  // Whether evict() of each of `pods`, one after the other, would pass the limits and the PDB
  // budget, each eviction counting against the next (two pods under one PDB need a budget of two).
  // Spends and records nothing; the filters and the live gates (anti-flapping, budgets) are not
  // asked. The first refusal, or success. For a plugin whose evictions help only all together.
  virtual EvictResult admitsAll(const std::vector<const api::Pod*>& pods, const Handle& h) {
    (void)pods;
    (void)h;
    return EvictResult::success();
  }
};

class Plugin {
 public:
  virtual ~Plugin() = default;
  virtual std::string_view name() const = 0;
  // Whether it reads pod status conditions (Pod::status().conditions): the daemon's cache keeps
  // them only when some plugin does (cluster::Store::keepPodConditions).
  virtual bool readsPodConditions() const { return false; }
  // Whether it judges pods not bound to a node (MakeRoomForPendingPods): `plan --explain` then
  // leaves an unbound pod's answer to it instead of "not bound to a node".
  virtual bool judgesUnboundPods() const { return false; }
};

class DeschedulePlugin : public virtual Plugin {
 public:
  virtual Status deschedule(Handle& h) = 0;
};

class BalancePlugin : public virtual Plugin {
 public:
  virtual Status balance(Handle& h) = 0;
};

class FilterPlugin : public virtual Plugin {
 public:
  virtual FilterResult filter(const api::Pod& pod, const Handle& h) const = 0;
};

class PreEvictionFilterPlugin : public virtual Plugin {
 public:
  virtual FilterResult preEvictionFilter(const api::Pod& pod, const Handle& h) const = 0;
};

// A deschedule plugin whose verdict on a pod can change with time alone (an age, the time since a
// condition's last transition). The event triggers ask it when to look at a pod again, so the pod
// goes when its time comes rather than up to one interval later.
class DeadlinePlugin : public virtual Plugin {
 public:
  // The earliest wall time (whole seconds) after `now` at which the plugin would pick `pod` as it
  // is now, if nothing about the pod changes; nullopt when time alone will not make it a candidate
  // (already one, or never). The evictor's filters are not consulted.
  virtual std::optional<api::Timestamp> eligibleAt(const api::Pod& pod, api::Timestamp now) const = 0;
};

// A plugin that balances by measured usage: says which source (and, for Prometheus, which query)
// it reads, so whoever runs the cycle can provide it (the daemon's collectors, the plan's
// snapshot) and a missing source is named before a cycle runs.
class UsagePlugin : public virtual Plugin {
 public:
  // Nullopt when this instance balances by requests.
  virtual std::optional<usage::Needs::Consumer> usageNeed() const = 0;
};

// Pods a plugin lists: upstream's ListPodsOnANode drops Succeeded/Failed pods.
enum class PodPhases { NonTerminal, All };

// The pods an event-triggered run may act on; null means every pod.
using PodScope = std::shared_ptr<const api::PodNames>;
// A scope's pods by the node they are bound to, each list in snapshot order: built once per run
// (scopeByNode), so a plugin asking for the candidates on a node costs the scope, not the node.
using ScopeByNode = std::unordered_map<api::Symbol, std::vector<const api::Pod*>>;
ScopeByNode scopeByNode(const cluster::Snapshot& snapshot, const api::PodNames& scope);

// What a plugin works through during one call: the cycle's snapshot and nodes, pods already
// evicted this cycle hidden, and the profile's evictor.
class Handle {
 public:
  Handle(const cluster::Snapshot& snapshot, const std::vector<const api::Node*>& nodes, CycleState& state,
         Evictor* evictor, std::string profile, std::string plugin, PodScope scope = nullptr,
         const usage::ClusterUsage* usage = nullptr)
      : snapshot_(snapshot),
        nodes_(nodes),
        state_(state),
        evictor_(evictor),
        profile_(std::move(profile)),
        plugin_(std::move(plugin)),
        scope_(std::move(scope)),
        usage_(usage) {}

  const cluster::Snapshot& snapshot() const { return snapshot_; }
  // The cycle's nodes: ready and matching the policy's nodeSelector, sorted by name.
  const std::vector<const api::Node*>& nodes() const { return nodes_; }
  bool isEvicted(const api::Pod& pod) const { return state_.isEvicted(pod); }
  // Deschedule plugins consider only pods in scope as candidates (every pod still counts as a
  // conflicting party, for usage and for domains). The framework says why of the others.
  bool inScope(const api::Pod& pod) const { return !scope_ || scope_->count(api::PodNameRef{pod.ns, pod.name}) != 0; }
  bool scoped() const { return scope_ != nullptr; }
  CycleState& state() const { return state_; }
  // Pods on `node` not yet evicted this cycle.
  std::vector<const api::Pod*> podsOnNode(const api::Node& node, PodPhases phases = PodPhases::NonTerminal) const;
  // Those of them in scope: the pods a deschedule plugin judges on `node` (every pod on it when
  // the run has no scope). In a scoped run, this reads the scope's own list of the node.
  std::vector<const api::Pod*> candidatesOnNode(const api::Node& node, PodPhases phases = PodPhases::NonTerminal) const;
  const std::string& profile() const { return profile_; }
  const std::string& plugin() const { return plugin_; }
  // The measured usage the cycle was given; null when none was (a cycle by requests only).
  const usage::ClusterUsage* usage() const { return usage_; }

  // The plugin's verdicts, each handed over once: the framework records them for whoever reads
  // decisions (`plan --explain`) and acts on them. admit: a skip answers false; a candidate goes
  // through the profile's Filter, then PreEvictionFilter plugins, and admit answers whether it
  // passed them both (a refusal is recorded).
  bool admit(const api::Pod& pod, const Verdict& verdict) const;
  // The pod is not a candidate, and why. A reason nobody reads is never rendered.
  void skip(const api::Pod& pod, const Reason& why) const;
  // Every pod the snapshot lists on `node` is not a candidate, for one reason the plugin decided
  // once for the node without looking at the pods.
  void skipPodsOn(const api::Node& node, const Reason& why) const;
  // Each of `pods` (a range of `const api::Pod*`, walked only when someone reads skips) is not a
  // candidate, for one reason.
  template <std::ranges::input_range Pods>
  void skipEach(Pods&& pods, const Reason& why) const {
    if (!explainer_) return;
    std::string text;  // rendered once, for the first asked pod
    for (const api::Pod* pod : pods) {
      if (!explainer_->wants(*pod)) continue;
      if (text.empty()) text = why.text();
      explainer_->record(*pod, {profile_, plugin_, ExplainOutcome::Skipped, "", "", text});
    }
  }
  // The profile's Filter and PreEvictionFilter plugins alone (refusals are recorded), for a plugin
  // that asks them before its verdict.
  FilterResult filter(const api::Pod& pod) const;
  FilterResult preEvictionFilter(const api::Pod& pod) const;
  // A candidate: the eviction chain (filters, limits, PDB budget, the sink) decides; the answer is
  // recorded.
  EvictResult evict(const api::Pod& pod, const Reason& why) const;
  // Evictor::admitsAll through the profile's evictor (nothing is recorded).
  EvictResult admitsAll(const std::vector<const api::Pod*>& pods) const;
  // A pod the plugin does not evict but acts for (a pending pod it makes room for), and how.
  void helped(const api::Pod& pod, const Reason& why) const;
  // `plan --explain`: the explainer, null unless someone asked (the cycle runner sets it).
  void setExplainer(Explainer* e) { explainer_ = e; }
  // The scope's pods by node (the cycle sets it for a scoped run); without it, candidatesOnNode
  // filters the node's pods.
  void setScopeByNode(const ScopeByNode* byNode) { scopeByNode_ = byNode; }

 private:
  const cluster::Snapshot& snapshot_;
  const std::vector<const api::Node*>& nodes_;
  CycleState& state_;
  Evictor* evictor_;  // null: filters pass, evictions are refused (used by filter-only contexts)
  std::string profile_;
  std::string plugin_;
  PodScope scope_;
  const usage::ClusterUsage* usage_;
  Explainer* explainer_ = nullptr;
  const ScopeByNode* scopeByNode_ = nullptr;

  bool asked(const api::Pod& pod) const { return explainer_ && explainer_->wants(pod); }
};

}  // namespace kdesched::framework
