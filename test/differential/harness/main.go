// Command harness runs upstream descheduler v0.36's real plugin code for one
// descheduling cycle on a snapshot file and prints the evictions as JSON.
//
// The cycle is wired as upstream's pkg/descheduler/descheduler.go wires it
// (LoadPolicyConfig with the real plugin registry, one PodEvictor with the
// policy's limits, profiles from pkg/framework/profile with DefaultEvictor
// injected, ready nodes from the policy's nodeSelector, every profile's
// Deschedule plugins, then every profile's Balance plugins), on a fake
// clientset holding the snapshot's objects, as upstream's unit tests do.
//
// Upstream's decisions can depend on Go map iteration and unstable sorts, so
// --runs N repeats the cycle on fresh objects and prints every distinct
// outcome with how often it occurred.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
)

type eviction struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Node      string `json:"node"`
	Plugin    string `json:"plugin"`
	Profile   string `json:"profile"`
}

type outcome struct {
	Count     int        `json:"count"`
	Evictions []eviction `json:"evictions"`
	// Refused lists eviction requests the emulated API server turned down
	// (PodDisruptionBudgets); they are not evictions.
	Refused []eviction `json:"refused,omitempty"`
	Skipped string     `json:"skipped,omitempty"`
	Error   string     `json:"error,omitempty"`
}

type report struct {
	Runs     int        `json:"runs"`
	Outcomes []*outcome `json:"outcomes"`
	Error    string     `json:"error,omitempty"`
}

func main() {
	snapshotPath := flag.String("snapshot", "", "snapshot file: a kubectl get -o json List (or YAML) of nodes, pods, PDBs, namespaces, priorityclasses, PVCs")
	policyPath := flag.String("policy", "", "DeschedulerPolicy file (descheduler/v1alpha2)")
	runs := flag.Int("runs", 1, "how many times to run the cycle (upstream's pod order can be random)")
	now := flag.String("now", "", "RFC3339 reference time of the snapshot: every timestamp is shifted by time.Now()-now, so ages equal kdesched plan --now")
	verbose := flag.Int("v", -1, "upstream's klog verbosity on stderr; -1 discards its logs")
	serveMode := flag.Bool("serve", false, "read one JSON request per line on stdin ({snapshot, policy, runs, now}), answer one JSON report per line")
	flag.Parse()
	setupLogging(*verbose)
	if *serveMode {
		if err := serve(os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "harness:", err)
			os.Exit(1)
		}
		return
	}
	if *snapshotPath == "" || *policyPath == "" || *runs < 1 {
		fmt.Fprintln(os.Stderr, "usage: harness --snapshot FILE --policy FILE [--runs N] [--now RFC3339] [-v N] | harness --serve")
		os.Exit(2)
	}

	rep, err := run(*snapshotPath, *policyPath, *runs, *now)
	if err != nil {
		rep = &report{Runs: *runs, Error: err.Error()}
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	if encErr := enc.Encode(rep); encErr != nil {
		fmt.Fprintln(os.Stderr, "harness:", encErr)
		os.Exit(1)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "harness:", err)
		os.Exit(2)
	}
}

type request struct {
	Snapshot string `json:"snapshot"`
	Policy   string `json:"policy"`
	Runs     int    `json:"runs"`
	Now      string `json:"now"`
}

// serve answers requests until stdin closes: the driver keeps one process
// for many cases instead of paying the start-up of a large binary each time.
func serve(in io.Reader, out io.Writer) error {
	scanner := bufio.NewScanner(in)
	scanner.Buffer(make([]byte, 1<<20), 1<<20)
	enc := json.NewEncoder(out)
	for scanner.Scan() {
		var req request
		var rep *report
		if err := json.Unmarshal(scanner.Bytes(), &req); err != nil {
			rep = &report{Error: "request: " + err.Error()}
		} else {
			if req.Runs < 1 {
				req.Runs = 1
			}
			var runErr error
			if rep, runErr = run(req.Snapshot, req.Policy, req.Runs, req.Now); runErr != nil {
				rep = &report{Runs: req.Runs, Error: runErr.Error()}
			}
		}
		if err := enc.Encode(rep); err != nil {
			return err
		}
	}
	return scanner.Err()
}

func setupLogging(verbose int) {
	if verbose < 0 {
		klog.SetLogger(logr.Discard())
		return
	}
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	_ = fs.Set("v", fmt.Sprint(verbose))
}

func run(snapshotPath, policyPath string, runs int, now string) (*report, error) {
	shift := time.Duration(0)
	if now != "" {
		t, err := time.Parse(time.RFC3339, now)
		if err != nil {
			return nil, fmt.Errorf("--now: %v", err)
		}
		shift = time.Since(t)
	}
	objs, err := loadSnapshot(snapshotPath, shift)
	if err != nil {
		return nil, err
	}
	seen := map[string]*outcome{}
	rep := &report{Runs: runs}
	for i := 0; i < runs; i++ {
		out := runCycleSafely(context.Background(), objs, policyPath)
		if i == 0 && out.Error != "" && strings.HasPrefix(out.Error, "policy: ") {
			return nil, fmt.Errorf("%s", out.Error)
		}
		key := outcomeKey(out)
		if prev, ok := seen[key]; ok {
			prev.Count++
			continue
		}
		out.Count = 1
		seen[key] = out
		rep.Outcomes = append(rep.Outcomes, out)
	}
	sort.SliceStable(rep.Outcomes, func(i, j int) bool { return rep.Outcomes[i].Count > rep.Outcomes[j].Count })
	return rep, nil
}

// outcomeKey identifies an outcome by its set of evictions; the order in
// which upstream evicted them is not part of the decision.
func outcomeKey(o *outcome) string {
	sortEvictions(o.Evictions)
	sortEvictions(o.Refused)
	b, _ := json.Marshal(struct {
		E []eviction
		R []eviction
		S string
		X string
	}{o.Evictions, o.Refused, o.Skipped, o.Error})
	return string(b)
}

func sortEvictions(list []eviction) {
	sort.Slice(list, func(i, j int) bool {
		a, b := list[i], list[j]
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		if a.Plugin != b.Plugin {
			return a.Plugin < b.Plugin
		}
		return a.Profile < b.Profile
	})
}

// runCycleSafely turns a panic in upstream's code into an outcome, so the
// driver sees it as a difference instead of losing the whole case.
func runCycleSafely(ctx context.Context, objs *objects, policyPath string) (out *outcome) {
	defer func() {
		if r := recover(); r != nil {
			out = &outcome{Evictions: []eviction{}, Error: fmt.Sprintf("panic: %v", r)}
		}
	}()
	return runCycle(ctx, objs, policyPath)
}
