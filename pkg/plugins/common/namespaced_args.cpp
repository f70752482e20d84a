#include "pkg/plugins/common/namespaced_args.h"

namespace kdesched::plugins {

Status readPodListFilter(policy::ArgsReader& r, PodListFilter& out) {
  if (Status s = r.readNamespaces("namespaces", out.namespaces); !s.isOk()) return s;
  return r.readLabelSelector("labelSelector", out.labelSelector);
}

}  // namespace kdesched::plugins
