#include "pkg/cluster/pod_index.h"

namespace kdesched::cluster {
namespace {

bool hasItem(const api::Labels& labels, const api::Labels::Item& kv) {
  for (const auto& other : labels)
    if (other == kv) return true;
  return false;
}

}  // namespace

void PodIndexes::clear() {
  byNode_.clear();
  byNamespace_.clear();
  byLabel_.clear();
  byOwner_.clear();
  antiAffinity_.clear();
}

void PodIndexes::add(const api::Pod& pod) {
  each(pod, [p = &pod](auto& index, const auto& key) { index.insert(key, p); });
}

void PodIndexes::remove(const api::Pod& pod) {
  each(pod, [p = &pod](auto& index, const auto& key) { index.erase(key, p); });
}

// Most changes are status updates: every key stays, and each bucket only has its pointer
// swapped in place. A key the pod lost or gained is erased or inserted.
void PodIndexes::change(const api::Pod& before, const api::Pod& after) {
  const api::Pod* b = &before;
  const api::Pod* a = &after;
  if (before.nodeName == after.nodeName) {
    if (!after.nodeName.empty()) byNode_.replace(after.nodeName, b, a);
  } else {
    if (!before.nodeName.empty()) byNode_.erase(before.nodeName, b);
    if (!after.nodeName.empty()) byNode_.insert(after.nodeName, a);
  }
  byNamespace_.replace(after.ns, b, a);  // a new namespace would be a new object
  const bool sameLabels = before.labels == after.labels;
  for (const auto& kv : before.labels) {
    if (sameLabels || hasItem(after.labels, kv)) {
      byLabel_.replace(kv, b, a);
    } else {
      byLabel_.erase(kv, b);
    }
  }
  if (!sameLabels)
    for (const auto& kv : after.labels)
      if (!hasItem(before.labels, kv)) byLabel_.insert(kv, a);
  if (before.owners == after.owners) {
    for (const auto& o : after.owners) byOwner_.replace(o.uid, b, a);
  } else {
    for (const auto& o : before.owners) byOwner_.erase(o.uid, b);
    for (const auto& o : after.owners) byOwner_.insert(o.uid, a);
  }
  const bool carrierBefore = before.constraints().hasRequiredAntiAffinity();
  const bool carrierAfter = after.constraints().hasRequiredAntiAffinity();
  if (carrierBefore && carrierAfter) {
    antiAffinity_.replace(after.ns, b, a);
  } else if (carrierBefore) {
    antiAffinity_.erase(before.ns, b);
  } else if (carrierAfter) {
    antiAffinity_.insert(after.ns, a);
  }
}

PodIndexes::Views PodIndexes::views() const {
  return {byNode_.view(), byNamespace_.view(), byLabel_.view(), byOwner_.view(), antiAffinity_.view()};
}

}  // namespace kdesched::cluster
