#include "pkg/evictor/pdb_budget.h"

#include <cmath>

namespace kdesched::evictor {
namespace {

std::int32_t scaled(const api::IntOrPercent& v, std::int32_t total) {
  if (!v.isPercent) return v.value;
  // The disruption controller rounds percentages up (GetScaledValueFromIntOrPercent(..., true)).
  return static_cast<std::int32_t>(std::ceil(static_cast<double>(v.value) * total / 100.0));
}

std::string describe(const api::IntOrPercent& v) { return std::to_string(v.value) + (v.isPercent ? "%" : ""); }

}  // namespace

std::vector<const api::PodDisruptionBudget*> PdbBudget::matching(const api::Pod& pod) const {
  std::vector<const api::PodDisruptionBudget*> out;
  for (const auto* pdb : snapshot_.pdbsInNamespace(pod.ns)) {
    // policy/v1: a missing selector matches no pod; an empty one matches every pod in the namespace.
    if (pdb->selector && pdb->selector->matches(pod.labels)) out.push_back(pdb);
  }
  return out;
}

std::int32_t PdbBudget::allowedDisruptions(const api::PodDisruptionBudget& pdb) const {
  if (pdb.hasStatus && pdb.disruptionsAllowed) return *pdb.disruptionsAllowed;
  std::int32_t expected = 0, healthy = 0;
  for (const api::Pod* p : snapshot_.podsInNamespace(pdb.ns)) {
    if (!pdb.selector || !pdb.selector->matches(p->labels) || p->isTerminal()) continue;
    ++expected;
    if (p->ready && !p->isTerminating()) ++healthy;
  }
  std::int32_t desired = 0;
  if (pdb.maxUnavailable)
    desired = expected - scaled(*pdb.maxUnavailable, expected);
  else if (pdb.minAvailable)
    desired = scaled(*pdb.minAvailable, expected);
  return std::max(0, healthy - desired);
}

PdbCheck PdbBudget::check(const api::Pod& pod) const {
  if (pod.isTerminating() || pod.phase == api::PodPhase::Pending || pod.isTerminal()) return {};
  auto pdbs = matching(pod);
  if (pdbs.empty()) return {};
  if (pdbs.size() > 1) {
    std::string names;
    for (const auto* p : pdbs) names += (names.empty() ? "" : ", ") + p->key();
    return {false, pdbs.front()->key(),
            "pod is selected by more than one PodDisruptionBudget (" + names + "); the Eviction API refuses such pods"};
  }
  const auto& pdb = *pdbs.front();
  if (unreadyGoesFree(pod, pdb)) return {true, pdb.key(), ""};
  if (pdb.hasStatus && pdb.observedGeneration < pdb.generation)
    return {false, pdb.key(), "the disruption controller has not processed this PDB's latest spec yet"};
  std::int32_t allowed = allowedDisruptions(pdb);
  auto it = spent_.find(&pdb);
  std::int32_t spent = it == spent_.end() ? 0 : it->second;
  if (allowed - spent > 0) return {true, pdb.key(), ""};
  std::string spec = pdb.minAvailable     ? "minAvailable " + describe(*pdb.minAvailable)
                     : pdb.maxUnavailable ? "maxUnavailable " + describe(*pdb.maxUnavailable)
                                          : "no minAvailable/maxUnavailable";
  std::string detail = "disruptionsAllowed " + std::to_string(allowed);
  if (spent) detail += " already spent by " + std::to_string(spent) + " eviction(s) this cycle";
  detail += " (" + spec;
  if (pdb.hasStatus)
    detail += ", currentHealthy " + std::to_string(pdb.currentHealthy) + ", desiredHealthy " +
              std::to_string(pdb.desiredHealthy);
  detail += ")";
  return {false, pdb.key(), detail};
}

void PdbBudget::consume(const api::Pod& pod) {
  if (pod.isTerminating() || pod.phase == api::PodPhase::Pending || pod.isTerminal()) return;
  auto pdbs = matching(pod);
  if (pdbs.size() == 1 && !unreadyGoesFree(pod, *pdbs.front())) ++spent_[pdbs.front()];
}

// kube-apiserver's eviction of an unready pod (IfHealthyBudget, AlwaysAllow), checked before the
// PDB's generation and budget.
bool PdbBudget::unreadyGoesFree(const api::Pod& pod, const api::PodDisruptionBudget& pdb) const {
  if (unreadyNeedsBudget_ || pod.ready) return false;
  if (pdb.unhealthyAlwaysAllow) return true;
  return pdb.desiredHealthy > 0 && pdb.currentHealthy >= pdb.desiredHealthy;
}

}  // namespace kdesched::evictor
