// Upstream: RemovePodsViolatingInterPodAntiAffinity (plugins/removepodsviolatinginterpodantiaffinity/).
// A deschedule plugin: evicts the pod that CARRIES a required anti-affinity term which another pod
// in the same topology domain now violates.
#pragma once

#include "pkg/framework/registry.h"
#include "pkg/plugins/removepodsviolatinginterpodantiaffinity/args.h"

namespace kdesched::plugins::removepodsviolatinginterpodantiaffinity {

class RemovePodsViolatingInterPodAntiAffinity : public framework::DeschedulePlugin {
 public:
  explicit RemovePodsViolatingInterPodAntiAffinity(Args args) : args_(std::move(args)) {}
  std::string_view name() const override { return kName; }
  Status deschedule(framework::Handle& h) override;

 private:
  Args args_;
};

framework::PluginRegistration registration();

// Describes a term for people: `{labelSelector: app=order, topologyKey: kubernetes.io/hostname}`.
std::string describeTerm(const api::PodAffinityTerm& term);

}  // namespace kdesched::plugins::removepodsviolatinginterpodantiaffinity
