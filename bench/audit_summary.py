#!/usr/bin/env python3
"""Summarises one client's requests from a kube-apiserver audit log (JSON lines, level Metadata).

The benchmark gives each descheduler its own client certificate (user bench-upstream or
bench-kdesched), and the audit policy (bench/audit-policy.yaml) logs only the bench-* users, so
every line here is one of that process's requests. Requests are deduplicated by auditID (a watch
logs ResponseStarted and ResponseComplete).

Prints JSON: request counts by verb and resource, eviction outcomes, the evicted pods (Eviction
POSTs answered 200/201), and the timeline (first request, last initial LIST/WATCH start, first and
last eviction) in seconds from the first request.

Usage: audit_summary.py AUDIT_LOG USER [--evicted-out FILE]
"""
import argparse
import json
from collections import Counter
from datetime import datetime


def ts(s):
    # 2026-11-30T02:05:01.123456Z
    return datetime.strptime(s.replace("Z", "+0000"), "%Y-%m-%dT%H:%M:%S.%f%z").timestamp()


def load(path, user):
    events = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            try:
                e = json.loads(line)
            except json.JSONDecodeError:
                continue
            if e.get("user", {}).get("username") != user:
                continue
            prev = events.get(e["auditID"])
            # Keep the last stage (ResponseComplete carries the final code).
            if prev is None or e.get("stage") == "ResponseComplete":
                events[e["auditID"]] = e
    return list(events.values())


def summarise(events):
    by = Counter()
    evicted, codes = [], Counter()
    t_first = min((ts(e["requestReceivedTimestamp"]) for e in events), default=None)
    t_lists, t_evictions, user_agents = [], [], Counter()
    for e in events:
        ref = e.get("objectRef", {}) or {}
        res = ref.get("resource", e.get("requestURI", "?").split("?")[0])
        if ref.get("subresource"):
            res += "/" + ref["subresource"]
        by[f'{e["verb"]} {res}'] += 1
        user_agents[e.get("userAgent", "")] += 1
        t = ts(e["requestReceivedTimestamp"])
        if e["verb"] in ("list", "watch"):
            t_lists.append(t)
        if ref.get("subresource") == "eviction" and e["verb"] == "create":
            code = (e.get("responseStatus") or {}).get("code", 0)
            codes[str(code)] += 1
            t_evictions.append(t)
            if code in (200, 201):
                evicted.append(f'{ref.get("namespace")}/{ref.get("name")}')
    rel = lambda t: round(t - t_first, 3) if t is not None and t_first is not None else None
    return {
        "requests": len(events),
        "by_verb_resource": dict(sorted(by.items(), key=lambda kv: -kv[1])),
        "eviction_codes": dict(codes),
        "evicted_count": len(evicted),
        "evicted": sorted(evicted),
        "user_agents": dict(user_agents),
        "timeline_seconds": {
            "first_request": 0.0 if t_first is not None else None,
            "first_list_or_watch": rel(min(t_lists)) if t_lists else None,
            "first_eviction": rel(min(t_evictions)) if t_evictions else None,
            "last_eviction": rel(max(t_evictions)) if t_evictions else None,
        },
        "first_request_epoch": t_first,
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("audit_log")
    ap.add_argument("user")
    ap.add_argument("--evicted-out")
    a = ap.parse_args()
    s = summarise(load(a.audit_log, a.user))
    if a.evicted_out:
        with open(a.evicted_out, "w") as f:
            f.write("".join(p + "\n" for p in s["evicted"]))
    s.pop("evicted")
    print(json.dumps(s))


if __name__ == "__main__":
    main()
