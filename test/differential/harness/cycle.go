package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	core "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/events"
	"k8s.io/component-base/featuregate"

	"sigs.k8s.io/descheduler/pkg/api"
	"sigs.k8s.io/descheduler/pkg/descheduler"
	"sigs.k8s.io/descheduler/pkg/descheduler/evictions"
	nodeutil "sigs.k8s.io/descheduler/pkg/descheduler/node"
	podutil "sigs.k8s.io/descheduler/pkg/descheduler/pod"
	"sigs.k8s.io/descheduler/pkg/features"
	"sigs.k8s.io/descheduler/pkg/framework/pluginregistry"
	frameworkprofile "sigs.k8s.io/descheduler/pkg/framework/profile"
	frameworktypes "sigs.k8s.io/descheduler/pkg/framework/types"
)

// The node selector index name upstream's descheduler.go uses.
const nodeSelectorIndex = "indexer_node_selector_global"

var setupOnce sync.Once

type profileRunner struct {
	name                string
	deschedule, balance func(context.Context, []*v1.Node) *frameworktypes.Status
}

// runCycle is upstream's newDescheduler + runDeschedulerLoop on a fake
// clientset: the same informers registered before Start, the same evictor
// options, the same profile construction and extension point order.
func runCycle(parent context.Context, objs *objects, policyPath string) *outcome {
	setupOnce.Do(descheduler.SetupPlugins)
	ctx, cancel := context.WithCancel(parent)
	defer cancel()

	client := fake.NewSimpleClientset(objs.copies()...)
	rec := newEvictionRecorder(objs)
	client.PrependReactor("create", "pods", rec.react)

	policy, err := loadPolicy(policyPath, client)
	if err != nil {
		return &outcome{Evictions: []eviction{}, Error: "policy: " + err.Error()}
	}

	factory := informers.NewSharedInformerFactory(client, 0)
	podInformer := factory.Core().V1().Pods().Informer()
	// descheduler.go registers PVCs up front because DefaultEvictor lists
	// them during the cycle, when a new registration would not be started.
	_ = factory.Core().V1().PersistentVolumeClaims().Informer()
	getPodsAssignedToNode, err := podutil.BuildGetPodsAssignedToNodeFunc(podInformer)
	if err != nil {
		return &outcome{Evictions: []eviction{}, Error: err.Error()}
	}

	gates := featuregate.NewFeatureGate()
	if err := gates.Add(map[featuregate.Feature]featuregate.FeatureSpec{
		features.EvictionsInBackground: {Default: false, PreRelease: featuregate.Alpha},
	}); err != nil {
		return &outcome{Evictions: []eviction{}, Error: err.Error()}
	}
	podEvictor, err := evictions.NewPodEvictor(ctx, client, &events.FakeRecorder{}, podInformer, gates,
		evictions.NewOptions().
			WithPolicyGroupVersion("policy/v1").
			WithMaxPodsToEvictPerNode(policy.MaxNoOfPodsToEvictPerNode).
			WithMaxPodsToEvictPerNamespace(policy.MaxNoOfPodsToEvictPerNamespace).
			WithMaxPodsToEvictTotal(policy.MaxNoOfPodsToEvictTotal).
			WithEvictionFailureEventNotification(policy.EvictionFailureEventNotification).
			WithGracePeriodSeconds(policy.GracePeriodSeconds).
			WithDryRun(false).
			WithMetricsEnabled(false))
	if err != nil {
		return &outcome{Evictions: []eviction{}, Error: err.Error()}
	}

	nodeSelector := labels.Everything()
	if policy.NodeSelector != nil {
		if nodeSelector, err = labels.Parse(*policy.NodeSelector); err != nil {
			return &outcome{Evictions: []eviction{}, Error: "policy: nodeSelector: " + err.Error()}
		}
	}
	if err := nodeutil.AddNodeSelectorIndexer(factory.Core().V1().Nodes().Informer(), nodeSelectorIndex, nodeSelector); err != nil {
		return &outcome{Evictions: []eviction{}, Error: err.Error()}
	}

	runners, err := buildProfiles(ctx, policy, client, factory, podEvictor, getPodsAssignedToNode)
	if err != nil {
		return &outcome{Evictions: []eviction{}, Error: "policy: " + err.Error()}
	}

	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	if err := podEvictor.WaitForEventHandlersSync(ctx); err != nil {
		return &outcome{Evictions: []eviction{}, Error: err.Error()}
	}

	out := &outcome{Evictions: []eviction{}}
	podEvictor.ResetCounters()
	nodesAsInterface, err := factory.Core().V1().Nodes().Informer().GetIndexer().ByIndex(nodeSelectorIndex, nodeSelectorIndex)
	if err != nil {
		out.Error = err.Error()
		return out
	}
	nodes, err := nodeutil.ReadyNodesFromInterfaces(nodesAsInterface)
	if err != nil {
		out.Error = err.Error()
		return out
	}
	if len(nodes) <= 1 {
		out.Skipped = fmt.Sprintf("requires >=2 ready nodes, found %d", len(nodes))
		return out
	}
	var errs []string
	for _, r := range runners {
		if st := r.deschedule(ctx, nodes); st != nil && st.Err != nil {
			errs = append(errs, fmt.Sprintf("profile %s deschedule: %v", r.name, st.Err))
		}
	}
	for _, r := range runners {
		if st := r.balance(ctx, nodes); st != nil && st.Err != nil {
			errs = append(errs, fmt.Sprintf("profile %s balance: %v", r.name, st.Err))
		}
	}
	out.Evictions, out.Refused = rec.result()
	out.Error = strings.Join(errs, "; ")
	return out
}

func loadPolicy(path string, client *fake.Clientset) (*api.DeschedulerPolicy, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, err
	}
	policy, err := descheduler.LoadPolicyConfig(path, client, pluginregistry.PluginRegistry)
	if err != nil {
		return nil, err
	}
	if policy == nil {
		return nil, fmt.Errorf("empty policy")
	}
	return policy, nil
}

func buildProfiles(ctx context.Context, policy *api.DeschedulerPolicy, client *fake.Clientset,
	factory informers.SharedInformerFactory, podEvictor *evictions.PodEvictor,
	getPodsAssignedToNode podutil.GetPodsAssignedToNodeFunc,
) ([]profileRunner, error) {
	var runners []profileRunner
	for idx, profile := range policy.Profiles {
		p, err := frameworkprofile.NewProfile(ctx, profile, pluginregistry.PluginRegistry,
			frameworkprofile.WithClientSet(client),
			frameworkprofile.WithSharedInformerFactory(factory),
			frameworkprofile.WithPodEvictor(podEvictor),
			frameworkprofile.WithGetPodsAssignedToNodeFnc(getPodsAssignedToNode),
			frameworkprofile.WithProfileInstanceID(fmt.Sprintf("%d", idx)))
		if err != nil {
			return nil, fmt.Errorf("unable to create %q profile: %v", profile.Name, err)
		}
		runners = append(runners, profileRunner{profile.Name, p.RunDeschedulePlugins, p.RunBalancePlugins})
	}
	return runners, nil
}

// evictionRecorder stands in for the API server's eviction subresource. It
// records each request and answers as the API server would for
// PodDisruptionBudgets (status.disruptionsAllowed, spent per eviction); the
// pod itself stays in the informer, as it does in a real cluster until the
// kubelet has stopped it.
type evictionRecorder struct {
	mu       sync.Mutex
	objs     *objects
	budget   map[string]int32
	evicted  []eviction
	refused  []eviction
	podIndex map[string]*v1.Pod
}

func newEvictionRecorder(objs *objects) *evictionRecorder {
	r := &evictionRecorder{objs: objs, budget: map[string]int32{}, podIndex: map[string]*v1.Pod{}}
	for _, p := range objs.pods {
		r.podIndex[p.Namespace+"/"+p.Name] = p
	}
	for _, pdb := range objs.pdbs {
		r.budget[pdb.Namespace+"/"+pdb.Name] = pdb.Status.DisruptionsAllowed
	}
	return r
}

func (r *evictionRecorder) react(action core.Action) (bool, runtime.Object, error) {
	if action.GetSubresource() != "eviction" {
		return false, nil, nil
	}
	create, ok := action.(core.CreateAction)
	if !ok {
		return false, nil, nil
	}
	ev, ok := create.GetObject().(*policyv1.Eviction)
	if !ok {
		return false, nil, nil
	}
	profile, plugin := parseReason(ev.Annotations["reason"])
	r.mu.Lock()
	defer r.mu.Unlock()
	e := eviction{Namespace: ev.Namespace, Name: ev.Name, Plugin: plugin, Profile: profile}
	pod := r.podIndex[ev.Namespace+"/"+ev.Name]
	if pod != nil {
		e.Node = pod.Spec.NodeName
	}
	if err := r.checkBudget(pod); err != nil {
		r.refused = append(r.refused, e)
		return true, nil, err
	}
	r.evicted = append(r.evicted, e)
	return true, nil, nil
}

func (r *evictionRecorder) result() ([]eviction, []eviction) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ev := append([]eviction{}, r.evicted...)
	var ref []eviction
	if len(r.refused) > 0 {
		ref = append(ref, r.refused...)
	}
	return ev, ref
}

// parseReason reads profile and plugin from the annotation upstream's
// PodEvictor puts on every Eviction: "triggered by <profile>/<plugin>: <reason>".
func parseReason(reason string) (profile, plugin string) {
	rest := strings.TrimPrefix(reason, "triggered by ")
	i := strings.Index(rest, "/")
	if i < 0 {
		return "", rest
	}
	profile, rest = rest[:i], rest[i+1:]
	if j := strings.Index(rest, ":"); j >= 0 {
		rest = rest[:j]
	}
	return profile, rest
}
