#!/usr/bin/env python3
"""Event-to-eviction time: creates the order/payment violation N times against a running descheduler.

Each round uses fresh owners (ReplicaSets pay-<tag>-<i> and ord-<tag>-<i>), so per-owner cooldowns
never apply, and a different node:
  1. payment pod, pre-bound to node X, with a required pod anti-affinity against app=ord-<tag>-<i>
     on kubernetes.io/hostname; wait until kwok reports it Running, then 2 s more (quiet cache) plus
     a random 0..--jitter s (so rounds are not phase-locked to an interval descheduler's ticks);
  2. the violating order pod, pre-bound to the same node (its binding = its creation);
  3. wait for the descheduler's Eviction POST for the payment pod.
Both times come from the kube-apiserver audit log (same clock, microseconds): t0 = the order pod's
create (stageTimestamp of ResponseComplete, when it became visible to watchers), t1 = the Eviction
request's requestReceivedTimestamp from the descheduler's user.

Prints JSON: per-round seconds, p50/p90/p99/max, evicted count, misses (no eviction within --timeout).
"""
import argparse
import json
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from load_cluster import Api, log  # noqa: E402
from audit_summary import ts  # noqa: E402

NS = "default"


def rs(name, labels):
    return {
        "apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {"name": name, "namespace": NS, "labels": labels},
        "spec": {"replicas": 1, "selector": {"matchLabels": labels},
                 "template": {"metadata": {"labels": labels},
                              "spec": {"containers": [{"name": "app", "image": "registry.example/app:1"}]}}},
    }


def pod(name, labels, node, owner_name, owner_uid, anti_against=None):
    spec = {
        "nodeName": node,
        "containers": [{"name": "app", "image": "registry.example/app:1",
                        "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}}}],
    }
    if anti_against:
        spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": anti_against}}, "topologyKey": "kubernetes.io/hostname"}]}}
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": NS, "labels": labels,
                     "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": owner_name,
                                          "uid": owner_uid, "controller": True}]},
        "spec": spec,
    }


class AuditTail:
    def __init__(self, path):
        self.path = path
        self.pos = 0
        self.buf = ""

    def read(self):
        out = []
        try:
            with open(self.path, encoding="utf-8") as f:
                f.seek(self.pos)
                data = f.read()
                self.pos = f.tell()
        except FileNotFoundError:
            return out
        self.buf += data
        *lines, self.buf = self.buf.split("\n")
        for line in lines:
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                pass
        return out


def pct(values, p):
    v = sorted(values)
    if not v:
        return None
    k = max(0, min(len(v) - 1, int(round(p / 100.0 * len(v) + 0.5)) - 1))
    return v[k]


def main():
    ap = argparse.ArgumentParser()
    for k in ("server", "ca", "cert", "key", "audit", "evictor", "tag"):
        ap.add_argument("--" + k, required=True)
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--nodes", type=int, default=100, help="nodes node-0..node-(N-1) exist")
    ap.add_argument("--timeout", type=float, default=90)
    ap.add_argument("--load1", default=None)
    ap.add_argument("--jitter", type=float, default=0, help="extra random wait before each violation, seconds")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rnd = random.Random(a.seed)
    api = Api(a.server, a.ca, a.cert, a.key)
    audit = AuditTail(a.audit)
    audit.read()  # skip what is already there
    pending = []  # audit events not matched yet
    rounds = []
    for i in range(a.n):
        tag = f"{a.tag}-{i}"
        node = f"node-{(i * 7 + 3) % a.nodes}"
        pay, ordr = f"pay-{tag}", f"ord-{tag}"
        uids = {}
        for name in (pay, ordr):
            _, data = api.request("POST", f"/apis/apps/v1/namespaces/{NS}/replicasets",
                                  json.dumps(rs(name, {"app": name})).encode())
            uids[name] = json.loads(data)["metadata"]["uid"]
        pay_pod, ord_pod = f"{pay}-0", f"{ordr}-0"
        api.request("POST", f"/api/v1/namespaces/{NS}/pods",
                    json.dumps(pod(pay_pod, {"app": pay}, node, pay, uids[pay], anti_against=ordr)).encode())
        t_wait = time.time()
        while True:
            _, data = api.request("GET", f"/api/v1/namespaces/{NS}/pods/{pay_pod}")
            if json.loads(data).get("status", {}).get("phase") == "Running":
                break
            if time.time() - t_wait > 60:
                raise SystemExit(f"{pay_pod} not Running after 60s")
            time.sleep(0.1)
        time.sleep(2 + rnd.uniform(0, a.jitter))
        api.request("POST", f"/api/v1/namespaces/{NS}/pods",
                    json.dumps(pod(ord_pod, {"app": ordr}, node, ordr, uids[ordr])).encode())
        t_client = time.time()
        t0 = t1 = None
        code = None
        while time.time() - t_client < a.timeout:
            pending.extend(audit.read())
            rest = []
            for e in pending:
                ref = e.get("objectRef") or {}
                user = (e.get("user") or {}).get("username")
                if (t0 is None and user == "bench-driver" and e.get("verb") == "create" and ref.get("resource") == "pods"
                        and not ref.get("subresource") and ref.get("name") == ord_pod and e.get("stage") == "ResponseComplete"):
                    t0 = ts(e["stageTimestamp"])
                elif (user == a.evictor and e.get("verb") == "create" and ref.get("subresource") == "eviction"
                      and ref.get("name") == pay_pod and e.get("stage") == "ResponseComplete"):
                    if t1 is None:
                        t1 = ts(e["requestReceivedTimestamp"])
                        code = (e.get("responseStatus") or {}).get("code")
                else:
                    rest.append(e)
            pending = rest[-10000:]
            if t0 is not None and t1 is not None:
                break
            time.sleep(0.05)
        r = {"round": i, "node": node, "pod": pay_pod, "code": code,
             "seconds": round(t1 - t0, 4) if (t0 is not None and t1 is not None) else None}
        rounds.append(r)
        log(f"{a.tag} round {i}: {r['seconds']}s (code {code})")
    secs = [r["seconds"] for r in rounds if r["seconds"] is not None]
    out = {
        "tag": a.tag, "evictor": a.evictor, "n": a.n, "evicted": len(secs), "misses": a.n - len(secs),
        "load1": float(a.load1) if a.load1 else None, "jitter_seconds": a.jitter,
        "p50_seconds": pct(secs, 50), "p90_seconds": pct(secs, 90), "p99_seconds": pct(secs, 99),
        "min_seconds": min(secs) if secs else None, "max_seconds": max(secs) if secs else None,
        "mean_seconds": round(sum(secs) / len(secs), 4) if secs else None, "rounds": rounds,
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
