#include "pkg/plugins/common/pod_list_filter.h"

namespace kdesched::plugins {

namespace {

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : ",") + s;
  return "[" + out + "]";
}

}  // namespace

std::string PodListFilter::whyNot(const api::Pod& pod) const {
  if (namespaces && !namespaces->allows(pod.ns.view()))
    return "excluded namespace: " + pod.ns.str() + " is not allowed by the plugin's namespaces (" +
           (namespaces->include.empty() ? "exclude " + joined(namespaces->exclude)
                                        : "include " + joined(namespaces->include)) +
           ")";
  if (labelSelector && !labelSelector->matches(pod.labels))
    return "label selector: the pod's labels {" + pod.labels.toString() + "} do not match the plugin's labelSelector " +
           labelSelector->toString();
  return "";
}

Status readPodListFilter(policy::ArgsReader& r, PodListFilter& out) {
  KD_TRY(r.readNamespaces("namespaces", out.namespaces));
  return r.readLabelSelector("labelSelector", out.labelSelector);
}

}  // namespace kdesched::plugins
