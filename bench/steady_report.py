#!/usr/bin/env python3
"""Writes OUT/steady.md and OUT/steady.png from RAW/steady-IMPL.json (bench/steady.py's output).

Usage: steady_report.py RAW OUT
"""
import glob
import json
import os
import sys

# Issue 35's: RSS growth over the tail < 3% (bounded label values), idle < 1% of a core, p99 ≤ 0.3 s,
# CPU under churn ≤ 0.5× upstream's.
TARGETS = {"rss_growth": 0.03, "cpu_idle": 0.01, "probe_p99": 0.3, "cpu_ratio": 0.5}


def fmt(v, spec="{:.3f}"):
    return "–" if v is None else spec.format(v)


def load(raw):
    docs = {}
    for path in sorted(glob.glob(os.path.join(raw, "steady-*.json"))):
        name = os.path.basename(path)[len("steady-"):-len(".json")]
        if "." in name:  # steady-IMPL.load.json, .audit.json, .idle.json
            continue
        with open(path, encoding="utf-8") as f:
            docs[name] = json.load(f)
        idle = os.path.join(raw, f"steady-{name}.idle.json")
        if os.path.exists(idle):
            with open(idle, encoding="utf-8") as f:
                docs[name]["idle"] = json.load(f)
    return docs


def idle_share(d):
    i = d.get("idle") or {}
    return i.get("cpu_share") if i.get("settled") and not i.get("evictions_during") else None


def table(docs, p):
    impls = list(docs)
    p("| | " + " | ".join(impls) + " |")
    p("|---|" + "---|" * len(impls))
    rows = [
        ("minutes run", lambda d: fmt(d["summary"]["seconds"] / 60, "{:.1f}")),
        ("churn: pod writes per second (relabel / delete / create), taints", lambda d: f"{d['churn_writes_per_second']:.1f} ({d['churn']['relabel']} / {d['churn']['delete']} / {d['churn']['create']}), {d['churn']['taint']}"),
        ("RSS at the start of the tail window, MiB", lambda d: fmt(d["summary"].get("rss_kb_tail_start", 0) / 1024, "{:.1f}")),
        ("RSS at the end, MiB", lambda d: fmt(d["summary"].get("rss_kb_end", 0) / 1024, "{:.1f}")),
        ("RSS growth over the tail window", lambda d: fmt(100 * (d["summary"].get("rss_growth_tail") or 0), "{:+.2f}%")),
        ("peak RSS, MiB", lambda d: fmt(d["summary"].get("rss_kb_max", 0) / 1024, "{:.1f}")),
        ("open fds: tail start → end (max)", lambda d: f"{d['summary'].get('fds_tail_start')} → {d['summary'].get('fds_end')} ({d['summary'].get('fds_max')})"),
        ("CPU seconds in all", lambda d: fmt(d["summary"].get("cpu_seconds"), "{:.1f}")),
        ("CPU share of one core: mean", lambda d: fmt(100 * d["summary"].get("cpu_share_mean", 0), "{:.2f}%")),
        ("CPU share: median 2-s window (between cycles)", lambda d: fmt(100 * d["summary"].get("cpu_share_median_window", 0), "{:.2f}%")),
        ("idle CPU share: no churn, nothing to evict, cycles on the interval", lambda d: fmt(None if idle_share(d) is None else 100 * idle_share(d), "{:.2f}%") + (f" ({d['idle']['seconds']} s)" if d.get("idle") else "")),
        ("probes: evicted / made", lambda d: f"{d['summary']['probes_evicted']} / {d['summary']['probes']}"),
        ("event to eviction p50, s", lambda d: fmt(d["summary"]["probe_p50_seconds"])),
        ("event to eviction p99, s", lambda d: fmt(d["summary"]["probe_p99_seconds"])),
        ("event to eviction max, s", lambda d: fmt(d["summary"]["probe_max_seconds"])),
    ]
    for label, f in rows:
        p(f"| {label} | " + " | ".join(f(docs[i]) for i in impls) + " |")


def windows(docs, p, count=6):
    """RSS and CPU share per window of the run (count windows, whole minutes): the shape a tail
    figure alone hides (a working set that fills up and stops, or a slope that keeps going)."""
    for name, d in docs.items():
        tl = d.get("timeline") or []
        minutes = int(d["summary"]["seconds"] // 60)
        step = max(1, minutes // count)
        if len(tl) < 2 or minutes < 2 * step:
            continue

        def at(t):
            return min(tl, key=lambda s: abs(s["t"] - t))

        edges = [at(60 * m) for m in range(0, minutes + 1, step)]
        p("")
        p(f"{name}, per {step} minutes of the run (samples nearest each boundary):")
        p("")
        p("| minutes | " + " | ".join(f"{round(a['t'] / 60)}–{round(b['t'] / 60)}" for a, b in zip(edges, edges[1:])) + " |")
        p("|---|" + "---|" * (len(edges) - 1))
        p("| RSS at the end, MiB | " + " | ".join(f"{b['rss_kb'] / 1024:.1f}" for b in edges[1:]) + " |")
        p("| RSS change, MiB | " + " | ".join(f"{round((b['rss_kb'] - a['rss_kb']) / 1024, 1) + 0.0:+.1f}" for a, b in zip(edges, edges[1:])) + " |")
        p("| CPU share of one core | " + " | ".join(
            f"{100 * (b['cpu_s'] - a['cpu_s']) / (b['t'] - a['t']):.2f}%" for a, b in zip(edges, edges[1:])) + " |")


def targets(d, p, upstream=None):
    s = d["summary"]
    growth, idle, p99 = s.get("rss_growth_tail"), idle_share(d), s["probe_p99_seconds"]
    ratio = None
    if upstream and upstream["summary"].get("cpu_share_mean"):
        ratio = s.get("cpu_share_mean", 0) / upstream["summary"]["cpu_share_mean"]
    fd_ok = s.get("fds_end") is not None and s["fds_end"] <= s["fds_tail_start"]

    def mark(ok):
        return "met" if ok else "**missed**"
    p("| target (kdesched) | measured | |")
    p("|---|---|---|")
    p(f"| RSS growth over the last {s.get('tail_minutes')} min < 3% | {fmt(100 * (growth or 0), '{:+.2f}%')} | {mark(growth is not None and growth < TARGETS['rss_growth'])} |")
    p(f"| no fd growth | {s.get('fds_tail_start')} → {s.get('fds_end')} | {mark(fd_ok)} |")
    p(f"| idle CPU < 1% of one core (no churn, nothing to evict) | {fmt(None if idle is None else 100 * idle, '{:.2f}%')} | {mark(idle is not None and idle < TARGETS['cpu_idle'])} |")
    p(f"| CPU under churn ≤ 0.5× upstream's | {fmt(ratio, '{:.2f}×')} | {mark(ratio is not None and ratio <= TARGETS['cpu_ratio'])} |")
    p(f"| p99 event to eviction ≤ 0.3 s under churn | {fmt(p99)} s | {mark(p99 is not None and p99 <= TARGETS['probe_p99'])} |")


def plot(docs, png):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(4, 1, figsize=(10, 11), sharex=True)
    for impl, d in docs.items():
        tl = d["timeline"]
        t = [x["t"] / 60 for x in tl]
        ax[0].plot(t, [x["rss_kb"] / 1024 for x in tl], label=impl)
        cpu = [0.0] + [100 * (b["cpu_s"] - a["cpu_s"]) / (b["t"] - a["t"]) if b["t"] > a["t"] else 0 for a, b in zip(tl, tl[1:])]
        k = 5  # 10-s moving average of the 2-s windows
        ax[1].plot(t, [sum(cpu[max(0, i - k + 1):i + 1]) / len(cpu[max(0, i - k + 1):i + 1]) for i in range(len(cpu))], label=impl)
        ax[2].plot(t, [x["fds"] for x in tl], label=impl)
        pr = [x for x in d["probes"] if x.get("seconds") is not None and x.get("t")]
        ax[3].scatter([(x["t"] - d["wall_start"]) / 60 for x in pr], [x["seconds"] for x in pr], s=10, label=impl)
    ax[0].set_ylabel("RSS, MiB")
    ax[1].set_ylabel("CPU, % of one core (10 s avg)")
    ax[2].set_ylabel("open fds")
    ax[3].set_ylabel("event → eviction, s")
    ax[3].set_yscale("log")
    ax[3].set_xlabel("minutes since the churn started")
    for a in ax:
        a.grid(True, alpha=0.3)
        a.legend()
    fig.suptitle("steady state under churn")
    fig.tight_layout()
    fig.savefig(png, dpi=100)


def main():
    raw, out = sys.argv[1], sys.argv[2]
    docs = load(raw)
    if not docs:
        raise SystemExit(f"steady_report.py: no steady-*.json in {raw}")
    os.makedirs(out, exist_ok=True)
    lines = []
    p = lines.append
    any_doc = next(iter(docs.values()))
    p("# Steady state under churn (bench/run.sh steady)")
    p("")
    values = any_doc.get("label_values", 0)
    relabels = f"relabels over {values} values" if values else "each relabel a value never used before"
    p(f"Churn {any_doc['rate']:.0f} pod writes/s ({100 * any_doc['roll_share']:.0f}% of them rolls: delete + create; "
      f"{relabels}), a node tainted every {any_doc['taint_every']:.0f} s, an order/payment probe every "
      f"~{any_doc['probe_every']:.0f} s.")
    p("")
    table(docs, p)
    windows(docs, p)
    if "kdesched" in docs:
        p("")
        targets(docs["kdesched"], p, docs.get("upstream"))
    png = os.path.join(out, "steady.png")
    try:
        plot(docs, png)
        p("")
        p("![RSS, CPU, fds and reaction over time](steady.png)")
    except ImportError:
        p("")
        p("(matplotlib not installed: no plot; apt-get install python3-matplotlib)")
    with open(os.path.join(out, "steady.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    print(f"steady_report.py: wrote {out}/steady.md", file=sys.stderr)


if __name__ == "__main__":
    main()
