#!/usr/bin/env python3
"""Tests of the tester itself (no harness, no kdesched): generators, comparison, minimizer,
classification by switches. python3 test/differential/selftest.py"""

import copy
import unittest

import classify
import gen
import minimize
import policies
import sides


def pod(ns, name, node, labels=None):
    return {"kind": "Pod", "metadata": {"namespace": ns, "name": name, "labels": labels or {}},
            "spec": {"nodeName": node, "containers": [{"name": "c"}]}, "status": {"phase": "Running"}}


def node(name):
    return {"kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}}, "spec": {},
            "status": {"allocatable": {}}}


def policy():
    return {"profiles": [{"name": "p", "pluginConfig": [{"name": gen.AA}],
                          "plugins": {"deschedule": {"enabled": [gen.AA]}}}]}


class FakeEvaluator:
    """Decides a case's status by a rule over its pod names, like the two sides would."""

    def __init__(self, differs):
        self.differs = differs
        self.calls = 0

    def evaluate(self, case, runs=None, confirm=True):
        self.calls += 1
        names = {i["metadata"]["name"] for i in case["snapshot"]["items"] if i["kind"] == "Pod"}
        if self.differs(names, case):
            return {"status": "DIFFERENCE", "closest": {"extra": [["default", "x", gen.AA]], "missing": []}}
        return {"status": "EQUAL"}


class GeneratorTest(unittest.TestCase):
    def test_same_seed_same_cluster_and_policy(self):
        for plugin in policies.PLUGINS:
            a, fa = gen.generate_cluster(7, plugin)
            b, fb = gen.generate_cluster(7, plugin)
            self.assertEqual(a, b)
            self.assertEqual(fa, fb)
            self.assertEqual(policies.generate_policy(7, plugin, a), policies.generate_policy(7, plugin, b))
        self.assertNotEqual(gen.generate_cluster(7, gen.AA)[0], gen.generate_cluster(8, gen.AA)[0])

    def test_sizes_and_distinct_priorities(self):
        for seed in range(1, 40):
            snap, _ = gen.generate_cluster(seed, gen.TS)
            nodes = [i for i in snap["items"] if i["kind"] == "Node"]
            pods = [i for i in snap["items"] if i["kind"] == "Pod"]
            self.assertTrue(3 <= len(nodes) <= 8, seed)
            self.assertTrue(10 <= len(pods) <= 60, (seed, len(pods)))
            prios = [p["spec"]["priority"] for p in pods]
            self.assertEqual(len(prios), len(set(prios)), seed)
            keys = [(p["metadata"]["namespace"], p["metadata"]["name"]) for p in pods]
            self.assertEqual(len(keys), len(set(keys)), seed)

    def test_policy_enables_the_plugin_where_it_runs(self):
        for plugin, (ext, _) in policies.PLUGINS.items():
            pol, _ = policies.generate_policy(3, plugin)
            prof = pol["profiles"][0]
            self.assertEqual(prof["plugins"][ext]["enabled"], [plugin])
            self.assertIn(plugin, [c["name"] for c in prof["pluginConfig"]])


class CompareTest(unittest.TestCase):
    def test_closest_outcome(self):
        mine = sides.evset([{"namespace": "a", "name": "p1", "plugin": "X"}])
        outcomes = [{"evictions": [{"namespace": "a", "name": "p2", "plugin": "X"},
                                   {"namespace": "a", "name": "p3", "plugin": "X"}]},
                    {"evictions": [{"namespace": "a", "name": "p1", "plugin": "X"},
                                   {"namespace": "a", "name": "p2", "plugin": "X"}]}]
        c = sides.closest(mine, outcomes)
        self.assertEqual(c, {"extra": [], "missing": [("a", "p2", "X")]})

    def test_plugin_is_part_of_the_decision(self):
        a = sides.evset([{"namespace": "a", "name": "p", "plugin": "X"}])
        b = sides.evset([{"namespace": "a", "name": "p", "plugin": "Y"}])
        self.assertNotEqual(a, b)


class RandomTieTest(unittest.TestCase):
    @staticmethod
    def result(mine, *outcomes):
        ev = lambda names: [{"namespace": "d", "name": n, "plugin": "X"} for n in names]
        return {"kdesched": {"evictions": ev(mine)}, "upstream": {"outcomes": [{"evictions": ev(o)} for o in outcomes]}}

    def test_another_combination_of_upstreams_choices(self):
        # Upstream evicts a and one of b, c (or c, d): kdesched's {a, d} is a combination it did not show.
        self.assertTrue(classify.upstream_random_tie(self.result(["a", "d"], ["a", "b"], ["a", "c"], ["c", "d"])))

    def test_another_replica_of_an_unranked_plugin(self):
        # RemoveDuplicates takes one of the owner's pods on node n1 in map order: r3 stands for r1/r2.
        items = [dict(pod("d", n, "n1"), metadata={"namespace": "d", "name": n, "labels": {},
                                                    "ownerReferences": [{"name": "rs", "uid": "u1"}]})
                 for n in ("r1", "r2", "r3")]
        ev = lambda *names: [{"namespace": "d", "name": n, "plugin": "RemoveDuplicates"} for n in names]
        res = {"kdesched": {"evictions": ev("r3")}, "upstream": {"outcomes": [{"evictions": ev("r1")},
                                                                             {"evictions": ev("r2")}]}}
        self.assertFalse(classify.upstream_random_tie(res))
        self.assertTrue(classify.upstream_random_tie(res, {"snapshot": {"items": items}}))

    def test_not_a_tie(self):
        self.assertFalse(classify.upstream_random_tie(self.result(["a"], ["a", "b"])))  # one outcome
        self.assertFalse(classify.upstream_random_tie(self.result(["x"], ["a"], ["b"])))  # a pod no run evicts
        self.assertFalse(classify.upstream_random_tie(self.result(["b"], ["a", "b"], ["a", "c"])))  # misses a
        self.assertFalse(classify.upstream_random_tie(self.result(["a", "b", "c"], ["a", "b"], ["a", "c"])))  # count


class MinimizerTest(unittest.TestCase):
    def test_keeps_only_what_the_difference_needs(self):
        items = [node("n1"), node("n2"), node("n3")]
        items += [pod("default", f"p{i}", f"n{1 + i % 3}") for i in range(12)]
        items += [pod("default", "x", "n1", {"app": "x", "extra": "1"})]
        case = {"snapshot": {"items": items}, "policy": policy()}
        ev = FakeEvaluator(lambda names, case: {"x", "p4"} <= names)
        m = minimize.Minimizer(ev, budget_seconds=30)
        small = m.minimize(case, {"extra": [["default", "x", gen.AA]], "missing": []})
        names = sorted(i["metadata"]["name"] for i in small["snapshot"]["items"] if i["kind"] == "Pod")
        self.assertEqual(names, ["p4", "x"])
        x = next(i for i in small["snapshot"]["items"] if i["metadata"]["name"] == "x")
        self.assertEqual(x["metadata"]["labels"], {})

    def test_never_empties_a_selector(self):
        p = pod("default", "x", "n1")
        p["spec"]["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}]}}
        case = {"snapshot": {"items": [node("n1"), node("n2"), p]}, "policy": policy()}

        def differs(names, case):
            x = [i for i in case["snapshot"]["items"] if i["metadata"]["name"] == "x"]
            return bool(x) and "affinity" in x[0]["spec"]
        small = minimize.Minimizer(FakeEvaluator(differs)).minimize(
            case, {"extra": [["default", "x", gen.AA]], "missing": []})
        self.assertEqual(minimize.empty_selectors(small), 0)
        self.assertEqual(len(small["snapshot"]["items"]), 2)  # one node could go, the selector stays


class SwitchTest(unittest.TestCase):
    class KdStub:
        """kdesched with switches: a bad mode is refused; only `explains` restores upstream's set."""

        def __init__(self, explains, implemented=True):
            self.explains = explains
            self.implemented = implemented

        def kdesched_only(self, case, compat):
            if self.implemented and (compat == "no-such-mode" or "no-such-mode" in getattr(compat, "values", lambda: [])()):
                return {"evictions": [], "error": "policy.yaml: kdesched.compat: unknown mode", "exit": 2}
            needed = (self.explains,) if isinstance(self.explains, str) else self.explains
            if self.implemented and isinstance(compat, dict) and all(compat.get(n) == "upstream" for n in needed):
                return {"evictions": [], "error": None, "exit": 0}
            return {"evictions": [{"namespace": "default", "name": "x", "plugin": gen.AA}], "error": None, "exit": 0}

    def result(self):
        return {"status": "DIFFERENCE", "kdesched": {"evictions": [{"namespace": "default", "name": "x", "plugin": gen.AA}]},
                "upstream": {"outcomes": [{"evictions": []}]}, "closest": {"extra": [["default", "x", gen.AA]], "missing": []}}

    def case(self):
        return {"snapshot": {"items": [node("n1"), pod("default", "x", "n1")]}, "policy": policy()}

    def test_the_switch_that_restores_upstream_names_the_difference(self):
        c = classify.Classifier(self.KdStub("namespaceSelectorHonoured"), try_switches=True)
        v = c.classify(self.case(), self.result(), gen.AA)
        self.assertEqual((v["name"], v["by"]), ("namespaceSelectorHonoured", "switch"))

    def test_two_switches_together_name_a_pair(self):
        both = ("unreadyPodNeedsBudget", "evictedEarlierNotCounted")
        c = classify.Classifier(self.KdStub(both), try_switches=True)
        v = c.classify(self.case(), self.result(), gen.MIXED)
        self.assertEqual((v["name"], v["by"]), ("unreadyPodNeedsBudget+evictedEarlierNotCounted", "switch"))
        self.assertEqual(classify.kind_of_name(v["name"]), "documented")
        self.assertIsNone(classify.kind_of_name("unreadyPodNeedsBudget+noSuchDifference"))

    def test_three_switches_together_stay_unexplained(self):
        three = ("unreadyPodNeedsBudget", "evictedEarlierNotCounted", "podsWithoutPDBProtection")
        c = classify.Classifier(self.KdStub(three), try_switches=True)
        self.assertIsNone(c.classify(self.case(), self.result(), gen.MIXED)["name"])

    def test_no_switch_explains_is_unexplained(self):
        c = classify.Classifier(self.KdStub("noSuchDifference"), try_switches=True)
        v = c.classify(self.case(), self.result(), gen.AA)
        self.assertIsNone(v["name"])

    def test_without_switches_predicates_decide(self):
        case = self.case()
        case["snapshot"]["items"].append(copy.deepcopy(case["snapshot"]["items"][1]))
        case["snapshot"]["items"][-1]["metadata"]["namespace"] = "team-a"
        c = classify.Classifier(self.KdStub("x", implemented=False), try_switches=True)
        v = c.classify(case, self.result(), gen.AA)
        self.assertFalse(c.switches_supported)
        self.assertEqual((v["name"], v["by"]), ("podIdentityNotName", "predicate"))


if __name__ == "__main__":
    unittest.main()
