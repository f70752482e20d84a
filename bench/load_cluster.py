#!/usr/bin/env python3
"""Loads a generated cluster (kdesched-gen --kwok --format ndjson) into a test control plane fast.

Python stdlib only. Many concurrent POSTs over kept-alive TLS connections with the admin client
certificate, in creation order: PriorityClasses, Namespaces, Nodes (kwok-managed), then — once the
service-account controller made each namespace's `default` ServiceAccount, which pod admission
needs — ReplicaSets (their server UIDs are collected), PDBs, and pods pre-bound to their nodes
(spec.nodeName set, no scheduler involved) whose ownerReferences get the real ReplicaSet UIDs.
Then it waits until kwok reports every pod Running and the disruption controller has computed
every PDB's status, so a descheduler started afterwards sees a settled cluster.

Retries 429/5xx/connection errors with backoff; 409 AlreadyExists counts as done (a retried POST
whose first attempt went through).

Usage: load_cluster.py --server URL --ca CA --cert CRT --key KEY FILE.ndjson [--concurrency 32]
Prints one JSON summary line on stdout (phase timings and rates); progress on stderr.
"""
import argparse
import http.client
import json
import re
import ssl
import sys
import threading
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor

PATHS = {
    "PriorityClass": "/apis/scheduling.k8s.io/v1/priorityclasses",
    "Namespace": "/api/v1/namespaces",
    "Node": "/api/v1/nodes",
    "ReplicaSet": "/apis/apps/v1/namespaces/{ns}/replicasets",
    "PodDisruptionBudget": "/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets",
    "Pod": "/api/v1/namespaces/{ns}/pods",
}
ORDER = ["PriorityClass", "Namespace", "Node", "ReplicaSet", "PodDisruptionBudget", "Pod"]
RS_REF = re.compile(r'"uid":"@rs:([^"/]+)/([^"]+)"')


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] load_cluster: {msg}", file=sys.stderr, flush=True)


class Api:
    def __init__(self, server, ca, cert, key, timeout=60):
        u = urllib.parse.urlparse(server)
        self.host, self.port = u.hostname, u.port or 443
        self.ctx = ssl.create_default_context(cafile=ca)
        self.ctx.load_cert_chain(cert, key)
        self.timeout = timeout
        self.local = threading.local()

    def _conn(self, fresh=False):
        c = getattr(self.local, "conn", None)
        if c is None or fresh:
            if c is not None:
                c.close()
            c = http.client.HTTPSConnection(self.host, self.port, context=self.ctx, timeout=self.timeout)
            self.local.conn = c
        return c

    def request(self, method, path, body=None, ok=(200, 201), tolerate=(), attempts=12, content_type="application/json"):
        delay = 0.2
        last = None
        for attempt in range(attempts):
            try:
                c = self._conn(fresh=attempt > 0 and last == "conn")
                headers = {"Accept": "application/json"}
                if body is not None:
                    headers["Content-Type"] = content_type
                c.request(method, path, body=body, headers=headers)
                r = c.getresponse()
                data = r.read()
                if r.status in ok or r.status in tolerate:
                    return r.status, data
                if r.status == 429 or r.status >= 500:
                    last = f"HTTP {r.status}"
                    retry = r.getheader("Retry-After")
                    time.sleep(float(retry) if retry and retry.isdigit() else delay)
                    delay = min(delay * 2, 5)
                    continue
                raise RuntimeError(f"{method} {path}: HTTP {r.status}: {data[:400]!r}")
            except (OSError, http.client.HTTPException) as e:
                last = "conn"
                log(f"{method} {path}: {e!r}; retrying")
                time.sleep(delay)
                delay = min(delay * 2, 5)
        raise RuntimeError(f"{method} {path}: gave up after {attempts} attempts ({last})")


def post_all(api, pool, items, label):
    """items: list of (path, body bytes, key). Returns {key: response JSON} for 201s (and 409s: None)."""
    t0 = time.time()
    out = {}

    def one(item):
        path, body, key = item
        status, data = api.request("POST", path, body, tolerate=(409,))
        return key, (json.loads(data) if status != 409 else None)

    done = 0
    for key, obj in pool.map(one, items):
        out[key] = obj
        done += 1
        if done % 5000 == 0:
            log(f"  {label}: {done}/{len(items)}")
    dt = time.time() - t0
    log(f"{label}: {len(items)} in {dt:.1f}s ({len(items) / dt if dt > 0 else 0:.0f}/s)")
    return out, dt


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("file")
    ap.add_argument("--server", required=True)
    ap.add_argument("--ca", required=True)
    ap.add_argument("--cert", required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--timeout", type=float, default=1200, help="seconds to wait for pods Running and PDB status")
    ap.add_argument("--no-wait", action="store_true")
    a = ap.parse_args()

    api = Api(a.server, a.ca, a.cert, a.key)
    by_kind = {k: [] for k in ORDER}
    with open(a.file, "rb") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            obj = json.loads(line)
            kind = obj["kind"]
            if kind not in by_kind:
                raise SystemExit(f"unexpected kind {kind}")
            ns = obj["metadata"].get("namespace", "")
            by_kind[kind].append((ns, obj["metadata"]["name"], line, obj))

    summary = {"objects": {k: len(v) for k, v in by_kind.items()}, "seconds": {}}
    t_all = time.time()
    with ThreadPoolExecutor(max_workers=a.concurrency) as pool:
        for kind in ["PriorityClass", "Namespace", "Node"]:
            items = [(PATHS[kind].format(ns=ns), raw, name) for ns, name, raw, _ in by_kind[kind]]
            _, summary["seconds"][kind] = post_all(api, pool, items, kind)

        # Pod admission needs each namespace's default ServiceAccount (made by the controller-manager).
        t0 = time.time()
        want = {name for _, name, _, _ in by_kind["Namespace"]}
        while True:
            _, data = api.request("GET", "/api/v1/serviceaccounts?fieldSelector=metadata.name%3Ddefault")
            have = {i["metadata"]["namespace"] for i in json.loads(data)["items"]}
            if want <= have:
                break
            if time.time() - t0 > 120:
                raise SystemExit(f"default ServiceAccounts missing after 120s in {sorted(want - have)[:5]}...")
            time.sleep(0.5)
        summary["seconds"]["serviceaccounts"] = time.time() - t0

        items = [(PATHS["ReplicaSet"].format(ns=ns), raw, f"{ns}/{name}") for ns, name, raw, _ in by_kind["ReplicaSet"]]
        created, summary["seconds"]["ReplicaSet"] = post_all(api, pool, items, "ReplicaSet")
        uids = {}
        for key, obj in created.items():
            if obj is None:  # 409: made by an earlier attempt; fetch it
                ns, name = key.split("/", 1)
                _, data = api.request("GET", f"/apis/apps/v1/namespaces/{ns}/replicasets/{name}")
                obj = json.loads(data)
            uids[key] = obj["metadata"]["uid"]

        items = [(PATHS["PodDisruptionBudget"].format(ns=ns), raw, f"{ns}/{name}") for ns, name, raw, _ in by_kind["PodDisruptionBudget"]]
        _, summary["seconds"]["PodDisruptionBudget"] = post_all(api, pool, items, "PodDisruptionBudget")

        def fill(raw):
            return RS_REF.sub(lambda m: '"uid":"%s"' % uids[f"{m.group(1)}/{m.group(2)}"], raw.decode()).encode()

        items = [(PATHS["Pod"].format(ns=ns), fill(raw), f"{ns}/{name}") for ns, name, raw, _ in by_kind["Pod"]]
        _, summary["seconds"]["Pod"] = post_all(api, pool, items, "Pod")
    summary["seconds"]["create_total"] = time.time() - t_all
    npods = len(by_kind["Pod"])
    summary["pods_per_second"] = npods / summary["seconds"]["Pod"] if summary["seconds"]["Pod"] else 0

    if not a.no_wait:
        # kwok marks pods Running; the disruption controller then fills every PDB's status.
        t0 = time.time()
        last_log = 0
        while True:
            _, data = api.request("GET", "/api/v1/pods?fieldSelector=status.phase%21%3DRunning&limit=1")
            if not json.loads(data)["items"]:
                break
            if time.time() - last_log > 15:
                last_log = time.time()
                log("waiting for kwok to mark every pod Running ...")
            if time.time() - t0 > a.timeout:
                raise SystemExit("pods not Running in time")
            time.sleep(1)
        summary["seconds"]["pods_running"] = time.time() - t0
        t0 = time.time()
        want_pdbs = len(by_kind["PodDisruptionBudget"])
        while True:
            _, data = api.request("GET", "/apis/policy/v1/poddisruptionbudgets")
            items = json.loads(data)["items"]
            settled = [
                p for p in items
                if p.get("status", {}).get("observedGeneration", 0) >= p["metadata"].get("generation", 1)
                and p["status"].get("expectedPods", 0) > 0
                and p["status"].get("currentHealthy", -1) == p["status"].get("expectedPods")
            ]
            if len(items) == want_pdbs and len(settled) == want_pdbs:
                break
            if time.time() - t0 > a.timeout:
                raise SystemExit(f"PDB status not settled in time ({len(settled)}/{want_pdbs})")
            time.sleep(1)
        summary["seconds"]["pdbs_settled"] = time.time() - t0
        log(f"settled: pods Running after {summary['seconds']['pods_running']:.1f}s, "
            f"PDBs after {summary['seconds']['pdbs_settled']:.1f}s more")
    summary["seconds"]["total"] = time.time() - t_all
    summary["seconds"] = {k: round(v, 2) for k, v in summary["seconds"].items()}
    summary["pods_per_second"] = round(summary["pods_per_second"], 1)
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
