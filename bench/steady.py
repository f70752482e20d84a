#!/usr/bin/env python3
"""Steady state under churn: a running descheduler's memory, CPU, fds and reaction over time.

While a descheduler daemon (its PID given) runs against a loaded bench cluster, for --minutes:
  churn    --rate pod writes per second from --writers threads, with the admin identity (not
           audited): relabels (a merge
           PATCH of the label bench-churn on a random pod, a value never used before, or one of
           --label-values values) and rolls (a pod deleted and a
           replacement of the same owner created without a node, so kube-scheduler places it:
           what a Deployment rollout does to the pods), --roll-share of the writes being rolls;
           and every --taint-every seconds a node gets a NoSchedule taint (bench.kdesched.io/churn),
           removed from it the next time. The pods come from the generated file the cluster was
           loaded from (FILE.ndjson); pods already gone (evicted) are skipped.
  probes   the order/payment violation every --probe-every seconds, as bench/reaction.py makes it
           (fresh owners and node each time, identity bench-driver): the seconds from the order
           pod's creation to the descheduler's Eviction of the payment pod, from the audit log.
  samples  every --sample-every seconds: the process's RSS (VmRSS), CPU seconds (utime+stime), open
           fds and threads, from /proc/PID.

Writes one JSON document to --out: the timeline, the probes, the churn counts and a summary
(RSS growth over the last --tail-minutes, fd growth, CPU share, probe percentiles).
"""
import argparse
import json
import os
import random
import re
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from load_cluster import Api, log  # noqa: E402
from reaction import AuditTail, pct, pod, rs  # noqa: E402
from audit_summary import ts  # noqa: E402

NS = "default"
TAINT_KEY = "bench.kdesched.io/churn"


def load_pods(path):
    """The generated pods: [(namespace, name, owner name, pod template)]."""
    pods = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if '"kind":"Pod"' not in line:
                continue
            o = json.loads(line)
            meta = o["metadata"]
            refs = meta.get("ownerReferences") or []
            pods.append((meta["namespace"], meta["name"], refs[0]["name"] if refs else None, o))
    return pods


class Churn:
    """Pod writes from several threads (one client connection each), picking pods under a lock."""

    def __init__(self, api, pods, rate, roll_share, rnd, label_values=0):
        self.api, self.rate, self.roll_share, self.rnd = api, rate, roll_share, rnd
        self.label_values = label_values  # 0: every relabel a value never used before
        self.alive = list(pods)
        self.owner_uid = {}
        self.counts = {"relabel": 0, "delete": 0, "create": 0, "gone": 0, "errors": 0, "taint": 0, "untaint": 0}
        self.seq = 0
        self.lock = threading.Lock()

    def _uid(self, ns, owner):
        key = (ns, owner)
        with self.lock:
            uid = self.owner_uid.get(key)
        if uid is None:
            _, data = self.api.request("GET", f"/apis/apps/v1/namespaces/{ns}/replicasets/{owner}")
            uid = json.loads(data)["metadata"]["uid"]
            with self.lock:
                self.owner_uid[key] = uid
        return uid

    def _pick(self, take):
        """A random live pod and a fresh sequence number; `take` removes it from the live list."""
        with self.lock:
            i = self.rnd.randrange(len(self.alive))
            item = self.alive[i]
            if take:
                self.alive[i] = self.alive[-1]
                self.alive.pop()
            self.seq += 1
            return item, self.seq

    def _count(self, key, item=None, gone=None):
        with self.lock:
            self.counts[key] += 1
            if item is not None:
                self.alive.append(item)
            if gone is not None and gone in self.alive:
                self.alive.remove(gone)

    def relabel(self):
        item, seq = self._pick(take=False)
        ns, name, _, _ = item
        value = seq % self.label_values if self.label_values > 0 else seq
        body = json.dumps({"metadata": {"labels": {"bench-churn": str(value)}}}).encode()
        status, _ = self.api.request("PATCH", f"/api/v1/namespaces/{ns}/pods/{name}", body, tolerate=(404,),
                                     content_type="application/merge-patch+json")
        self._count("relabel" if status != 404 else "gone", gone=item if status == 404 else None)

    def roll(self):
        (ns, name, owner, tmpl), seq = self._pick(take=True)
        status, _ = self.api.request("DELETE", f"/api/v1/namespaces/{ns}/pods/{name}", tolerate=(404,))
        self._count("delete" if status != 404 else "gone")
        if owner is None:
            return
        new = json.loads(json.dumps(tmpl))
        new["metadata"]["name"] = re.sub(r"-c[0-9]+$", "", name) + f"-c{seq}"
        new["metadata"]["ownerReferences"][0]["uid"] = self._uid(ns, owner)
        new["spec"].pop("nodeName", None)
        new.pop("status", None)
        self.api.request("POST", f"/api/v1/namespaces/{ns}/pods", json.dumps(new).encode())
        self._count("create", item=(ns, new["metadata"]["name"], owner, tmpl))

    def step(self, rnd):
        try:
            if rnd.random() < roll_probability(self.roll_share):
                self.roll()
            else:
                self.relabel()
        except RuntimeError as e:
            self._count("errors")
            log(f"churn: {e}")

    def taint(self, node, on):
        _, data = self.api.request("GET", f"/api/v1/nodes/{node}")
        n = json.loads(data)
        taints = [t for t in n["spec"].get("taints") or [] if t.get("key") != TAINT_KEY]
        if on:
            taints.append({"key": TAINT_KEY, "value": "1", "effect": "NoSchedule"})
        n["spec"]["taints"] = taints
        status, _ = self.api.request("PUT", f"/api/v1/nodes/{node}", json.dumps(n).encode(), tolerate=(409,))
        if status != 409:
            self._count("taint" if on else "untaint")


def roll_probability(share):
    """The chance a step rolls (two writes) so that `share` of all writes are roll writes."""
    return share / (2 - share)


def run_writer(churn, rate, stop, seed):
    """Writes at `rate` per second, paced on the clock (no catching up after a stall)."""
    rnd = random.Random(seed)
    period = 1.0 / rate
    next_t = time.monotonic() + rnd.uniform(0, period)
    while not stop.wait(max(0.0, next_t - time.monotonic())):
        churn.step(rnd)
        next_t = max(next_t + period, time.monotonic())


def run_taints(churn, a, stop, nodes):
    tainted = None
    while a.taint_every > 0 and not stop.wait(a.taint_every):
        try:
            if tainted:
                churn.taint(tainted, False)
            tainted = nodes[churn.rnd.randrange(len(nodes))]
            churn.taint(tainted, True)
        except RuntimeError as e:
            log(f"churn: taint: {e}")
    if tainted:
        churn.taint(tainted, False)


def run_probe(api, audit, a, i, node, pending):
    """One order/payment violation; returns the probe's row."""
    tag = f"{a.tag}-{i}"
    pay, ordr = f"pay-{tag}", f"ord-{tag}"
    uids = {}
    for name in (pay, ordr):
        _, data = api.request("POST", f"/apis/apps/v1/namespaces/{NS}/replicasets", json.dumps(rs(name, {"app": name})).encode())
        uids[name] = json.loads(data)["metadata"]["uid"]
    pay_pod, ord_pod = f"{pay}-0", f"{ordr}-0"
    api.request("POST", f"/api/v1/namespaces/{NS}/pods",
                json.dumps(pod(pay_pod, {"app": pay}, node, pay, uids[pay], anti_against=ordr)).encode())
    t_wait = time.time()
    while json.loads(api.request("GET", f"/api/v1/namespaces/{NS}/pods/{pay_pod}")[1]).get("status", {}).get("phase") != "Running":
        if time.time() - t_wait > 60:
            return {"probe": i, "node": node, "seconds": None, "error": "payment pod not Running after 60 s"}
        time.sleep(0.1)
    time.sleep(2)
    api.request("POST", f"/api/v1/namespaces/{NS}/pods", json.dumps(pod(ord_pod, {"app": ordr}, node, ordr, uids[ordr])).encode())
    t_client = time.time()
    t0 = t1 = code = None
    while time.time() - t_client < a.probe_timeout and (t0 is None or t1 is None):
        pending.extend(audit.read())
        rest = []
        for e in pending:
            ref = e.get("objectRef") or {}
            user = (e.get("user") or {}).get("username")
            if e.get("stage") != "ResponseComplete" or e.get("verb") != "create":
                continue
            if user == "bench-driver" and ref.get("resource") == "pods" and not ref.get("subresource") and ref.get("name") == ord_pod:
                t0 = ts(e["stageTimestamp"])
            elif user == a.evictor and ref.get("subresource") == "eviction" and ref.get("name") == pay_pod and t1 is None:
                t1 = ts(e["requestReceivedTimestamp"])
                code = (e.get("responseStatus") or {}).get("code")
            else:
                rest.append(e)
        pending[:] = rest[-10000:]
        time.sleep(0.05)
    secs = round(t1 - t0, 4) if (t0 is not None and t1 is not None) else None
    return {"probe": i, "node": node, "t": round(t_client, 3), "seconds": secs, "code": code}


def run_probes(api, audit, a, stop, nodes, out, rnd):
    pending = []
    i = 0
    while not stop.wait(rnd.uniform(0.5, 1.5) * a.probe_every):
        try:
            r = run_probe(api, audit, a, i, nodes[(i * 7 + 3) % len(nodes)], pending)
        except RuntimeError as e:
            r = {"probe": i, "seconds": None, "error": str(e)[:300]}
        out.append(r)
        log(f"probe {i}: {r.get('seconds')} s")
        i += 1


def sample(pid):
    tck = os.sysconf("SC_CLK_TCK")
    with open(f"/proc/{pid}/stat", encoding="ascii") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / tck  # utime, stime (fields 14, 15)
    rss = threads = 0
    with open(f"/proc/{pid}/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
            elif line.startswith("Threads:"):
                threads = int(line.split()[1])
    return cpu, rss, len(os.listdir(f"/proc/{pid}/fd")), threads


def window(timeline, t_from, t_to):
    return [s for s in timeline if t_from <= s["t"] <= t_to]


def median(v):
    return pct(v, 50)


def summarize(timeline, probes, a, seconds):
    """Growth over the last tail minutes: the median of its first minute against its last minute."""
    s = {"seconds": round(seconds, 1)}
    if len(timeline) >= 2:
        end = timeline[-1]["t"]
        start = max(0.0, end - a.tail_minutes * 60)
        first, last = window(timeline, start, start + 60), window(timeline, end - 60, end)
        r0, r1 = median([x["rss_kb"] for x in first]), median([x["rss_kb"] for x in last])
        f0, f1 = median([x["fds"] for x in first]), median([x["fds"] for x in last])
        s.update({"tail_minutes": a.tail_minutes, "rss_kb_tail_start": r0, "rss_kb_end": r1,
                  "rss_growth_tail": round((r1 - r0) / r0, 4) if r0 else None,
                  "rss_kb_max": max(x["rss_kb"] for x in timeline), "fds_tail_start": f0, "fds_end": f1,
                  "fds_max": max(x["fds"] for x in timeline)})
        shares = [(b["cpu_s"] - p["cpu_s"]) / (b["t"] - p["t"]) for p, b in zip(timeline, timeline[1:]) if b["t"] > p["t"]]
        s.update({"cpu_seconds": round(timeline[-1]["cpu_s"] - timeline[0]["cpu_s"], 2),
                  "cpu_share_mean": round((timeline[-1]["cpu_s"] - timeline[0]["cpu_s"]) / (end - timeline[0]["t"]), 4),
                  "cpu_share_median_window": round(median(shares), 4), "cpu_share_p90_window": round(pct(shares, 90), 4)})
    secs = [p["seconds"] for p in probes if p.get("seconds") is not None]
    s.update({"probes": len(probes), "probes_evicted": len(secs), "probe_p50_seconds": pct(secs, 50),
              "probe_p90_seconds": pct(secs, 90), "probe_p99_seconds": pct(secs, 99),
              "probe_max_seconds": max(secs) if secs else None})
    return s


def main():
    ap = argparse.ArgumentParser()
    for k in ("server", "ca", "cert", "key", "driver-cert", "driver-key", "audit", "evictor", "tag", "pods", "out"):
        ap.add_argument("--" + k, required=True)
    ap.add_argument("--pid", type=int, required=True)
    ap.add_argument("--minutes", type=float, default=30)
    ap.add_argument("--tail-minutes", type=float, default=20)
    ap.add_argument("--rate", type=float, default=50, help="pod writes per second")
    ap.add_argument("--roll-share", type=float, default=0.5, help="share of the writes that are rolls")
    ap.add_argument("--writers", type=int, default=4, help="churn threads, each with its own connection")
    ap.add_argument("--label-values", type=int, default=0,
                    help="relabels cycle over this many values (0: a value never used before each time)")
    ap.add_argument("--taint-every", type=float, default=30)
    ap.add_argument("--probe-every", type=float, default=20)
    ap.add_argument("--probe-timeout", type=float, default=90)
    ap.add_argument("--sample-every", type=float, default=2)
    ap.add_argument("--nodes", type=int, required=True, help="nodes node-0..node-(N-1) exist")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rnd = random.Random(a.seed)
    admin = Api(a.server, a.ca, a.cert, a.key)
    driver = Api(a.server, a.ca, a.driver_cert, a.driver_key)
    audit = AuditTail(a.audit)
    audit.read()
    nodes = [f"node-{i}" for i in range(a.nodes)]
    churn = Churn(admin, load_pods(a.pods), a.rate, a.roll_share, random.Random(a.seed + 1), a.label_values)
    stop = threading.Event()
    probes = []
    steps = a.rate / (1 + roll_probability(a.roll_share))  # a step is one write, or two for a roll
    threads = [threading.Thread(target=run_writer, args=(churn, steps / a.writers, stop, a.seed * 100 + w), daemon=True)
               for w in range(a.writers)]
    threads += [threading.Thread(target=run_taints, args=(churn, a, stop, nodes), daemon=True),
                threading.Thread(target=run_probes, args=(driver, audit, a, stop, nodes, probes, rnd), daemon=True)]
    t_start, wall_start = time.monotonic(), time.time()
    for t in threads:
        t.start()
    timeline = []
    deadline = t_start + a.minutes * 60
    while time.monotonic() < deadline:
        try:
            cpu, rss, fds, nthreads = sample(a.pid)
        except (FileNotFoundError, ProcessLookupError):
            log(f"process {a.pid} is gone; stopping")
            break
        timeline.append({"t": round(time.monotonic() - t_start, 2), "cpu_s": cpu, "rss_kb": rss, "fds": fds, "threads": nthreads})
        time.sleep(a.sample_every)
    stop.set()
    for t in threads:
        t.join(timeout=a.probe_timeout + 30)
    seconds = time.monotonic() - t_start
    doc = {"tag": a.tag, "evictor": a.evictor, "wall_start": wall_start, "rate": a.rate, "roll_share": a.roll_share,
           "label_values": a.label_values,
           "taint_every": a.taint_every, "probe_every": a.probe_every, "churn": churn.counts,
           "churn_writes_per_second": round((churn.counts["relabel"] + churn.counts["delete"] + churn.counts["create"]) / seconds, 2),
           "summary": summarize(timeline, probes, a, seconds), "probes": probes, "timeline": timeline}
    with open(a.out, "w", encoding="utf-8") as f:
        json.dump(doc, f)
    log(f"{a.tag}: {json.dumps(doc['summary'])} churn {json.dumps(churn.counts)}")


if __name__ == "__main__":
    main()
