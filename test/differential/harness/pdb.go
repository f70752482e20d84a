package main

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// checkBudget answers an eviction the way kube-apiserver's eviction
// subresource does (pkg/registry/core/pod/storage/eviction.go): terminal,
// Pending and terminating pods bypass PDBs; two PDBs are an error; a PDB
// whose status is behind its generation or has no disruption left refuses
// with 429; an allowed eviction spends one disruption. The caller holds r.mu.
func (r *evictionRecorder) checkBudget(pod *v1.Pod) error {
	if pod == nil {
		return apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, "")
	}
	if pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed ||
		pod.Status.Phase == v1.PodPending || pod.DeletionTimestamp != nil {
		return nil
	}
	var matching []*policyv1.PodDisruptionBudget
	for _, pdb := range r.objs.pdbs {
		if pdb.Namespace != pod.Namespace {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err != nil || sel.Empty() || !sel.Matches(labels.Set(pod.Labels)) {
			continue
		}
		matching = append(matching, pdb)
	}
	if len(matching) == 0 {
		return nil
	}
	if len(matching) > 1 {
		return apierrors.NewInternalError(fmt.Errorf("this pod has more than one PodDisruptionBudget, which the eviction subresource does not support"))
	}
	pdb := matching[0]
	if !podReady(pod) {
		if pdb.Spec.UnhealthyPodEvictionPolicy != nil && *pdb.Spec.UnhealthyPodEvictionPolicy == policyv1.AlwaysAllow {
			return nil
		}
		if pdb.Status.CurrentHealthy >= pdb.Status.DesiredHealthy && pdb.Status.DesiredHealthy > 0 {
			return nil
		}
	}
	if pdb.Status.ObservedGeneration < pdb.Generation {
		return apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 0)
	}
	key := pdb.Namespace + "/" + pdb.Name
	left := r.budget[key]
	if left < 0 {
		return apierrors.NewForbidden(schema.GroupResource{Group: "policy", Resource: "poddisruptionbudget"}, pdb.Name, fmt.Errorf("pdb disruptions allowed is negative"))
	}
	if left == 0 {
		return apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 0)
	}
	r.budget[key] = left - 1
	return nil
}

func podReady(pod *v1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == v1.PodReady {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}
