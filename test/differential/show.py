#!/usr/bin/env python3
"""Prints a case folder (snapshot.json, policy.yaml, outcome.json) compactly, one object a line.

  show.py /tmp/kdesched-differential/RemovePodsViolatingNodeAffinity/seed-3
"""

import json
import os
import sys

import yaml


def compact(obj):
    return json.dumps(obj, separators=(",", ":"), sort_keys=True)


def pod_line(p):
    m, s, st = p["metadata"], p["spec"], p["status"]
    owner = (m.get("ownerReferences") or [{}])[0].get("kind", "bare")
    bits = [f"POD {m['namespace']}/{m['name']} on {s.get('nodeName')} prio={s.get('priority')} {st.get('phase')} {owner}",
            f"labels={compact(m.get('labels', {}))}"]
    if "deletionTimestamp" in m:
        bits.append("TERMINATING")
    ready = [c["status"] for c in st.get("conditions", []) if c["type"] == "Ready"]
    if ready and ready[0] != "True":
        bits.append("unready")
    req = (s["containers"][0].get("resources") or {})
    if req:
        bits.append(f"resources={compact(req)}")
    for k in ("nodeSelector", "affinity", "topologySpreadConstraints", "tolerations", "volumes", "priorityClassName"):
        if k in s:
            bits.append(f"{k}={compact(s[k])}")
    if m.get("annotations"):
        bits.append(f"annotations={compact(m['annotations'])}")
    rc = [c.get("restartCount", 0) for c in st.get("containerStatuses", [])]
    if any(rc):
        bits.append(f"restarts={rc}")
    return " ".join(bits)


def node_line(n):
    m, s, st = n["metadata"], n["spec"], n["status"]
    ready = [c["status"] for c in st.get("conditions", []) if c["type"] == "Ready"]
    bits = [f"NODE {m['name']} labels={compact(m.get('labels', {}))} alloc={compact(st.get('allocatable', {}))}"]
    if s.get("taints"):
        bits.append(f"taints={compact(s['taints'])}")
    if s.get("unschedulable"):
        bits.append("CORDONED")
    if ready != ["True"]:
        bits.append("NOT-READY")
    return " ".join(bits)


def show(folder):
    with open(os.path.join(folder, "snapshot.json")) as f:
        snap = json.load(f)
    with open(os.path.join(folder, "policy.yaml")) as f:
        policy = yaml.safe_load(f)
    print("POLICY", compact(policy))
    for it in snap["items"]:
        if it["kind"] == "Node":
            print(node_line(it))
    for it in snap["items"]:
        if it["kind"] == "Pod":
            print(pod_line(it))
    for it in snap["items"]:
        if it["kind"] not in ("Node", "Pod", "Namespace", "PriorityClass"):
            print(it["kind"], it["metadata"].get("namespace", ""), it["metadata"]["name"],
                  compact(it.get("spec", {})), compact(it.get("status", {})))
    path = os.path.join(folder, "outcome.json")
    if os.path.exists(path):
        with open(path) as f:
            o = json.load(f)
        print("KDESCHED", compact(o["kdesched"]), o.get("kdeschedError") or "")
        for u in o["upstream"]:
            print(f"UPSTREAM x{u['count']}", compact(u["evictions"]), u.get("error", ""))
        print("CLOSEST", compact(o.get("closest")))
        print("CLASS", compact(o["meta"].get("classification")))


if __name__ == "__main__":
    for folder in sys.argv[1:]:
        show(folder)
        print()
