package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"
)

// objects holds the snapshot's objects of the kinds a cycle reads.
type objects struct {
	all     []runtime.Object
	pods    []*v1.Pod
	pdbs    []*policyv1.PodDisruptionBudget
	skipped map[string]int
}

// copies returns fresh deep copies, so no run sees another run's changes.
func (o *objects) copies() []runtime.Object {
	out := make([]runtime.Object, 0, len(o.all))
	for _, obj := range o.all {
		out = append(out, obj.DeepCopyObject())
	}
	return out
}

var wantedKinds = map[string]bool{
	"Node": true, "Pod": true, "PodDisruptionBudget": true, "Namespace": true,
	"PriorityClass": true, "PersistentVolumeClaim": true,
}

// loadSnapshot reads what `kubectl get ... -o json|yaml` prints (a v1 List,
// a typed list, one object, a JSON array or a multi-document YAML stream),
// keeps the kinds a cycle reads and shifts every timestamp by shift.
func loadSnapshot(path string, shift time.Duration) (*objects, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	raws, err := splitItems(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	objs := &objects{skipped: map[string]int{}}
	decoder := scheme.Codecs.UniversalDeserializer()
	for i, raw := range raws {
		var tm metav1.TypeMeta
		if err := json.Unmarshal(raw, &tm); err != nil {
			return nil, fmt.Errorf("%s: item %d: %v", path, i, err)
		}
		if !wantedKinds[tm.Kind] {
			objs.skipped[tm.Kind]++
			continue
		}
		obj, _, err := decoder.Decode(raw, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("%s: item %d (%s): %v", path, i, tm.Kind, err)
		}
		shiftTimes(obj, shift)
		switch o := obj.(type) {
		case *v1.Pod:
			if o.UID == "" {
				o.UID = types.UID("uid-" + o.Namespace + "-" + o.Name)
			}
			objs.pods = append(objs.pods, o)
		case *policyv1.PodDisruptionBudget:
			objs.pdbs = append(objs.pdbs, o)
		}
		objs.all = append(objs.all, obj)
	}
	return objs, nil
}

// splitItems returns one JSON document per object.
func splitItems(data []byte) ([]json.RawMessage, error) {
	trimmed := bytes.TrimSpace(data)
	var docs [][]byte
	if len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[') {
		docs = [][]byte{trimmed}
	} else {
		for _, doc := range strings.Split("\n"+string(data), "\n---") {
			j, err := yaml.YAMLToJSON([]byte(doc))
			if err != nil {
				return nil, err
			}
			if s := strings.TrimSpace(string(j)); s != "" && s != "null" {
				docs = append(docs, j)
			}
		}
	}
	var out []json.RawMessage
	for _, doc := range docs {
		items, err := itemsOf(doc)
		if err != nil {
			return nil, err
		}
		out = append(out, items...)
	}
	return out, nil
}

func itemsOf(doc []byte) ([]json.RawMessage, error) {
	if bytes.HasPrefix(bytes.TrimSpace(doc), []byte("[")) {
		var arr []json.RawMessage
		return arr, json.Unmarshal(doc, &arr)
	}
	var head struct {
		APIVersion string            `json:"apiVersion"`
		Kind       string            `json:"kind"`
		Items      []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(doc, &head); err != nil {
		return nil, err
	}
	if !strings.HasSuffix(head.Kind, "List") {
		return []json.RawMessage{doc}, nil
	}
	// Items of a typed list (PodList) carry no kind of their own.
	itemKind := strings.TrimSuffix(head.Kind, "List")
	out := make([]json.RawMessage, 0, len(head.Items))
	for _, item := range head.Items {
		var m map[string]any
		if err := json.Unmarshal(item, &m); err != nil {
			return nil, err
		}
		if _, ok := m["kind"]; !ok && itemKind != "" {
			m["kind"], m["apiVersion"] = itemKind, head.APIVersion
			b, err := json.Marshal(m)
			if err != nil {
				return nil, err
			}
			item = b
		}
		out = append(out, item)
	}
	return out, nil
}

func shiftTimes(obj runtime.Object, d time.Duration) {
	if d == 0 {
		return
	}
	sh := func(t *metav1.Time) {
		if t != nil && !t.IsZero() {
			t.Time = t.Time.Add(d)
		}
	}
	shp := func(t *metav1.Time) *metav1.Time {
		if t == nil {
			return nil
		}
		c := *t
		sh(&c)
		return &c
	}
	if m, ok := obj.(metav1.Object); ok {
		ct := m.GetCreationTimestamp()
		sh(&ct)
		m.SetCreationTimestamp(ct)
		m.SetDeletionTimestamp(shp(m.GetDeletionTimestamp()))
	}
	switch o := obj.(type) {
	case *v1.Pod:
		o.Status.StartTime = shp(o.Status.StartTime)
		for i := range o.Status.Conditions {
			sh(&o.Status.Conditions[i].LastTransitionTime)
			sh(&o.Status.Conditions[i].LastProbeTime)
		}
		for _, list := range [][]v1.ContainerStatus{o.Status.ContainerStatuses, o.Status.InitContainerStatuses, o.Status.EphemeralContainerStatuses} {
			for i := range list {
				shiftState(&list[i].State, sh)
				shiftState(&list[i].LastTerminationState, sh)
			}
		}
	case *v1.Node:
		for i := range o.Status.Conditions {
			sh(&o.Status.Conditions[i].LastTransitionTime)
			sh(&o.Status.Conditions[i].LastHeartbeatTime)
		}
	}
}

func shiftState(s *v1.ContainerState, sh func(*metav1.Time)) {
	if s.Running != nil {
		sh(&s.Running.StartedAt)
	}
	if s.Terminated != nil {
		sh(&s.Terminated.StartedAt)
		sh(&s.Terminated.FinishedAt)
	}
}
