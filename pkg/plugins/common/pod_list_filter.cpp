#include "pkg/plugins/common/pod_list_filter.h"

namespace kdesched::plugins {

Status readPodListFilter(policy::ArgsReader& r, PodListFilter& out) {
  KD_TRY(r.readNamespaces("namespaces", out.namespaces));
  return r.readLabelSelector("labelSelector", out.labelSelector);
}

}  // namespace kdesched::plugins
