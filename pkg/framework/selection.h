// Choosing candidate pods for a label selector through the snapshot's label indexes, so that
// "which pods does this term select" never scans the cluster when the selector names a label.
#pragma once

#include <vector>

#include "pkg/cluster/snapshot.h"

namespace kdesched::framework {

// Spans whose union is a superset of the pods `selector` can match (the caller still checks
// namespace and selector). Picks the narrowest index the selector allows: one matchLabels pair,
// an In expression's values, an Exists key; otherwise every pod.
std::vector<cluster::Snapshot::Pods> selectorCandidates(const cluster::Snapshot& snapshot,
                                                        const api::LabelSelector& selector);

}  // namespace kdesched::framework
