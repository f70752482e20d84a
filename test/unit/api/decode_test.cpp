#include "pkg/api/decode.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <simdjson.h>

#include <random>

namespace kdesched::api {
namespace {

using ::testing::HasSubstr;

constexpr std::int64_t kMi = 1024LL * 1024 * 1000;  // milli-units
constexpr std::int64_t kGi = 1024 * kMi;

// As `kubectl get pod -o json` prints a Deployment's pod (managedFields and most of status trimmed
// only where they repeat). Fields kdesched does not read are kept to show they are skipped.
constexpr std::string_view kPodJson = R"json({
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
        "annotations": {
            "checksum/config": "3f1c2a",
            "descheduler.alpha.kubernetes.io/prefer-no-eviction": "",
            "kubernetes.io/config.source": "api",
            "kubectl.kubernetes.io/restartedAt": "2024-05-01T10:00:00Z"
        },
        "creationTimestamp": "2024-05-02T08:15:30Z",
        "generateName": "web-7d9f8b6c5d-",
        "labels": {
            "app.kubernetes.io/name": "web",
            "pod-template-hash": "7d9f8b6c5d",
            "tier": "frontend"
        },
        "managedFields": [
            {
                "apiVersion": "v1",
                "fieldsType": "FieldsV1",
                "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:app.kubernetes.io/name": {}}}},
                "manager": "kube-controller-manager",
                "operation": "Update",
                "time": "2024-05-02T08:15:30Z"
            }
        ],
        "name": "web-7d9f8b6c5d-x2k4p",
        "namespace": "shop",
        "ownerReferences": [
            {
                "apiVersion": "apps/v1",
                "blockOwnerDeletion": true,
                "controller": true,
                "kind": "ReplicaSet",
                "name": "web-7d9f8b6c5d",
                "uid": "5b0c7e3e-8f0e-4a3f-9b1e-2a6f3c1d9e77"
            }
        ],
        "resourceVersion": "123456",
        "uid": "0f7e4a52-3c2b-4a8e-9d61-7b5e2c1a0f33"
    },
    "spec": {
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["eu-west-1a", "eu-west-1b"]},
                                {"key": "node.kubernetes.io/cpus", "operator": "Gt", "values": ["4"]}
                            ]
                        },
                        {
                            "matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-7"]}]
                        }
                    ]
                },
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 20, "preference": {"matchExpressions": [{"key": "disktype", "operator": "In", "values": ["ssd"]}]}}
                ]
            },
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "labelSelector": {
                            "matchExpressions": [{"key": "app.kubernetes.io/name", "operator": "In", "values": ["web"]}],
                            "matchLabels": {"tier": "frontend"}
                        },
                        "topologyKey": "kubernetes.io/hostname",
                        "matchLabelKeys": ["pod-template-hash"]
                    }
                ],
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 50,
                        "podAffinityTerm": {
                            "labelSelector": {"matchLabels": {"app.kubernetes.io/name": "web"}},
                            "namespaceSelector": {},
                            "topologyKey": "topology.kubernetes.io/zone"
                        }
                    }
                ]
            }
        },
        "containers": [
            {
                "env": [{"name": "LOG_LEVEL", "value": "info"}],
                "image": "registry.example.com/web:1.4.2",
                "imagePullPolicy": "IfNotPresent",
                "livenessProbe": {"httpGet": {"path": "/healthz", "port": 8080, "scheme": "HTTP"}, "periodSeconds": 10},
                "name": "web",
                "ports": [{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
                "resources": {
                    "limits": {"cpu": "1", "memory": "512Mi"},
                    "requests": {"cpu": "250m", "memory": "256Mi", "ephemeral-storage": "1Gi"}
                },
                "terminationMessagePath": "/dev/termination-log",
                "volumeMounts": [{"mountPath": "/cache", "name": "cache"}]
            },
            {
                "image": "registry.example.com/metrics:0.9",
                "name": "metrics",
                "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}}
            }
        ],
        "dnsPolicy": "ClusterFirst",
        "enableServiceLinks": true,
        "initContainers": [
            {
                "image": "registry.example.com/migrate:1.4.2",
                "name": "migrate",
                "resources": {"requests": {"cpu": "500m", "memory": "128Mi"}}
            },
            {
                "image": "registry.example.com/proxy:2.1",
                "name": "proxy",
                "restartPolicy": "Always",
                "resources": {"requests": {"cpu": "100m", "memory": "32Mi"}}
            }
        ],
        "nodeName": "node-7",
        "nodeSelector": {"kubernetes.io/os": "linux", "disktype": "ssd"},
        "overhead": {"cpu": "10m", "memory": "16Mi"},
        "preemptionPolicy": "PreemptLowerPriority",
        "priority": 1000,
        "priorityClassName": "shop-critical",
        "restartPolicy": "Always",
        "schedulerName": "default-scheduler",
        "securityContext": {},
        "serviceAccountName": "web",
        "terminationGracePeriodSeconds": 30,
        "tolerations": [
            {"effect": "NoExecute", "key": "node.kubernetes.io/not-ready", "operator": "Exists", "tolerationSeconds": 300},
            {"effect": "NoExecute", "key": "node.kubernetes.io/unreachable", "operator": "Exists", "tolerationSeconds": 300},
            {"key": "dedicated", "operator": "Equal", "value": "shop"},
            {"operator": "Exists"}
        ],
        "topologySpreadConstraints": [
            {
                "labelSelector": {"matchLabels": {"app.kubernetes.io/name": "web"}},
                "matchLabelKeys": ["pod-template-hash"],
                "maxSkew": 2,
                "minDomains": 3,
                "nodeAffinityPolicy": "Honor",
                "nodeTaintsPolicy": "Ignore",
                "topologyKey": "topology.kubernetes.io/zone",
                "whenUnsatisfiable": "ScheduleAnyway"
            }
        ],
        "volumes": [
            {"emptyDir": {}, "name": "cache"},
            {"name": "data", "persistentVolumeClaim": {"claimName": "web-data"}},
            {"configMap": {"defaultMode": 420, "name": "web-config"}, "name": "config"},
            {
                "ephemeral": {"volumeClaimTemplate": {"spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}},
                "name": "scratch"
            },
            {
                "name": "kube-api-access-8x2lq",
                "projected": {"defaultMode": 420, "sources": [{"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}}]}
            }
        ]
    },
    "status": {
        "conditions": [
            {"lastProbeTime": null, "lastTransitionTime": "2024-05-02T08:15:40Z", "status": "True", "type": "Initialized"},
            {"lastProbeTime": null, "lastTransitionTime": "2024-05-02T08:15:52Z", "status": "True", "type": "Ready"},
            {"lastProbeTime": null, "lastTransitionTime": "2024-05-02T08:15:30Z", "status": "True", "type": "PodScheduled"}
        ],
        "containerStatuses": [
            {"containerID": "containerd://abc", "image": "registry.example.com/web:1.4.2", "name": "web", "ready": true, "restartCount": 0,
             "started": true, "state": {"running": {"startedAt": "2024-05-02T08:15:50Z"}}}
        ],
        "hostIP": "10.0.3.17",
        "phase": "Running",
        "podIP": "10.244.3.21",
        "qosClass": "Burstable",
        "startTime": "2024-05-02T08:15:31Z"
    }
})json";

// The same pod as `kubectl get pod -o yaml` prints it (fewer unread fields).
constexpr std::string_view kPodYaml = R"yaml(apiVersion: v1
kind: Pod
metadata:
  annotations:
    checksum/config: 3f1c2a
    descheduler.alpha.kubernetes.io/prefer-no-eviction: ""
    kubernetes.io/config.source: api
  creationTimestamp: "2024-05-02T08:15:30Z"
  generateName: web-7d9f8b6c5d-
  labels:
    app.kubernetes.io/name: web
    pod-template-hash: 7d9f8b6c5d
    tier: frontend
  name: web-7d9f8b6c5d-x2k4p
  namespace: shop
  ownerReferences:
  - apiVersion: apps/v1
    blockOwnerDeletion: true
    controller: true
    kind: ReplicaSet
    name: web-7d9f8b6c5d
    uid: 5b0c7e3e-8f0e-4a3f-9b1e-2a6f3c1d9e77
  resourceVersion: "123456"
  uid: 0f7e4a52-3c2b-4a8e-9d61-7b5e2c1a0f33
spec:
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions:
          - key: topology.kubernetes.io/zone
            operator: In
            values:
            - eu-west-1a
            - eu-west-1b
          - key: node.kubernetes.io/cpus
            operator: Gt
            values:
            - "4"
        - matchFields:
          - key: metadata.name
            operator: In
            values:
            - node-7
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 20
        preference:
          matchExpressions:
          - key: disktype
            operator: In
            values:
            - ssd
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector:
          matchExpressions:
          - key: app.kubernetes.io/name
            operator: In
            values:
            - web
          matchLabels:
            tier: frontend
        topologyKey: kubernetes.io/hostname
        matchLabelKeys:
        - pod-template-hash
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 50
        podAffinityTerm:
          labelSelector:
            matchLabels:
              app.kubernetes.io/name: web
          namespaceSelector: {}
          topologyKey: topology.kubernetes.io/zone
  containers:
  - image: registry.example.com/web:1.4.2
    name: web
    ports:
    - containerPort: 8080
      name: http
      protocol: TCP
    resources:
      limits:
        cpu: "1"
        memory: 512Mi
      requests:
        cpu: 250m
        memory: 256Mi
        ephemeral-storage: 1Gi
  - image: registry.example.com/metrics:0.9
    name: metrics
    resources:
      requests:
        cpu: 50m
        memory: 64Mi
  initContainers:
  - name: migrate
    image: registry.example.com/migrate:1.4.2
    resources:
      requests:
        cpu: 500m
        memory: 128Mi
  - name: proxy
    image: registry.example.com/proxy:2.1
    restartPolicy: Always
    resources:
      requests:
        cpu: 100m
        memory: 32Mi
  nodeName: node-7
  nodeSelector:
    kubernetes.io/os: linux
    disktype: ssd
  overhead:
    cpu: 10m
    memory: 16Mi
  priority: 1000
  priorityClassName: shop-critical
  tolerations:
  - effect: NoExecute
    key: node.kubernetes.io/not-ready
    operator: Exists
    tolerationSeconds: 300
  - effect: NoExecute
    key: node.kubernetes.io/unreachable
    operator: Exists
    tolerationSeconds: 300
  - key: dedicated
    operator: Equal
    value: shop
  - operator: Exists
  topologySpreadConstraints:
  - labelSelector:
      matchLabels:
        app.kubernetes.io/name: web
    matchLabelKeys:
    - pod-template-hash
    maxSkew: 2
    minDomains: 3
    nodeAffinityPolicy: Honor
    nodeTaintsPolicy: Ignore
    topologyKey: topology.kubernetes.io/zone
    whenUnsatisfiable: ScheduleAnyway
  volumes:
  - emptyDir: {}
    name: cache
  - name: data
    persistentVolumeClaim:
      claimName: web-data
  - configMap:
      defaultMode: 420
      name: web-config
    name: config
  - name: scratch
    ephemeral:
      volumeClaimTemplate:
        spec:
          accessModes:
          - ReadWriteOnce
          resources:
            requests:
              storage: 1Gi
status:
  conditions:
  - lastProbeTime: null
    lastTransitionTime: "2024-05-02T08:15:52Z"
    status: "True"
    type: Ready
  phase: Running
  qosClass: Burstable
  startTime: "2024-05-02T08:15:31Z"
)yaml";

// Decodes one object of `kind` straight through the on-demand API, the way the store does.
template <typename T>
Status decodeWith(Status (*decode)(simdjson::ondemand::object, T&), std::string_view json, T& out) {
  simdjson::padded_string padded(json);
  simdjson::ondemand::parser parser;
  simdjson::ondemand::document doc;
  if (auto e = parser.iterate(padded).get(doc)) return Status::error(simdjson::error_message(e));
  simdjson::ondemand::object obj;
  if (auto e = doc.get_object().get(obj)) return Status::error(simdjson::error_message(e));
  return decode(obj, out);
}

Result<Pod> podFromJson(std::string_view json) {
  Pod pod;
  Status s = decodeWith(decodePod, json, pod);
  if (!s.isOk()) return s;
  return pod;
}

Result<Pod> podFromYaml(std::string_view yaml) {
  auto json = yamlDocumentToJson(yaml);
  if (!json.isOk()) return json.status();
  return podFromJson(*json);
}

void expectRealisticPod(const Pod& p) {
  EXPECT_EQ(p.name, "web-7d9f8b6c5d-x2k4p");
  EXPECT_EQ(p.ns.view(), "shop");
  EXPECT_EQ(p.uid, "0f7e4a52-3c2b-4a8e-9d61-7b5e2c1a0f33");
  EXPECT_EQ(p.key(), "shop/web-7d9f8b6c5d-x2k4p");
  EXPECT_EQ(p.labels,
            (Labels{{"app.kubernetes.io/name", "web"}, {"pod-template-hash", "7d9f8b6c5d"}, {"tier", "frontend"}}));
  ASSERT_EQ(p.owners.size(), 1u);
  EXPECT_EQ(p.owners[0].apiVersion.view(), "apps/v1");
  EXPECT_EQ(p.owners[0].kind.view(), "ReplicaSet");
  EXPECT_EQ(p.owners[0].name.view(), "web-7d9f8b6c5d");
  EXPECT_EQ(p.owners[0].uid, "5b0c7e3e-8f0e-4a3f-9b1e-2a6f3c1d9e77");
  EXPECT_TRUE(p.owners[0].controller);
  EXPECT_EQ(p.creationTimestamp, 1714637730);  // 2024-05-02T08:15:30Z
  EXPECT_FALSE(p.deletionTimestamp.has_value());
  EXPECT_EQ(p.startTime, 1714637731);
  EXPECT_EQ(p.nodeName.view(), "node-7");
  EXPECT_EQ(p.phase, PodPhase::Running);
  EXPECT_EQ(p.priority, 1000);
  EXPECT_EQ(p.priorityClassName.view(), "shop-critical");
  EXPECT_EQ(p.qos, QosClass::Burstable);
  EXPECT_TRUE(p.ready);
  EXPECT_TRUE(p.annotationPreferNoEviction);
  EXPECT_FALSE(p.annotationEvict);
  EXPECT_FALSE(p.mirror);
  EXPECT_EQ(p.configSource, "api");
  EXPECT_FALSE(p.isStatic());
  EXPECT_TRUE(p.hasLocalStorage);
  EXPECT_FALSE(p.hasResourceClaims);
  EXPECT_EQ(p.pvcClaimNames, (std::vector<std::string>{"web-data", "web-7d9f8b6c5d-x2k4p-scratch"}));

  // app 250m+50m + sidecar 100m = 400m; migrate runs alone: 500m → cpu 500m + 10m overhead.
  // memory: 256+64+32 = 352Mi vs 128Mi → 352Mi + 16Mi. ephemeral-storage only in the app.
  EXPECT_EQ(p.requests, (ResourceList{{"cpu", 510}, {"memory", 368 * kMi}, {"ephemeral-storage", 1 * kGi}}));

  ASSERT_NE(p.scheduling, nullptr);
  const SchedulingConstraints& sc = *p.scheduling;
  EXPECT_EQ(sc.nodeSelector,
            (std::vector<std::pair<std::string, std::string>>{{"disktype", "ssd"}, {"kubernetes.io/os", "linux"}}));
  ASSERT_TRUE(sc.nodeAffinity.has_value());
  ASSERT_TRUE(sc.nodeAffinity->required.has_value());
  const auto& terms = sc.nodeAffinity->required->terms;
  ASSERT_EQ(terms.size(), 2u);
  EXPECT_EQ(terms[0].matchExpressions,
            (std::vector<NodeSelectorRequirement>{
                {"topology.kubernetes.io/zone", NodeSelectorOp::In, {"eu-west-1a", "eu-west-1b"}},
                {"node.kubernetes.io/cpus", NodeSelectorOp::Gt, {"4"}}}));
  EXPECT_TRUE(terms[0].matchFields.empty());
  EXPECT_EQ(terms[1].matchFields,
            (std::vector<NodeSelectorRequirement>{{"metadata.name", NodeSelectorOp::In, {"node-7"}}}));
  ASSERT_EQ(sc.nodeAffinity->preferred.size(), 1u);
  EXPECT_EQ(sc.nodeAffinity->preferred[0].weight, 20);
  EXPECT_EQ(sc.nodeAffinity->preferred[0].preference.matchExpressions[0].key, "disktype");
  EXPECT_FALSE(sc.podAffinity.has_value());
  ASSERT_TRUE(sc.podAntiAffinity.has_value());
  ASSERT_EQ(sc.podAntiAffinity->required.size(), 1u);
  const PodAffinityTerm& anti = sc.podAntiAffinity->required[0];
  ASSERT_TRUE(anti.labelSelector.has_value());
  EXPECT_EQ(*anti.labelSelector,
            (LabelSelector{{{"tier", "frontend"}}, {{"app.kubernetes.io/name", LabelSelectorOp::In, {"web"}}}}));
  EXPECT_EQ(anti.topologyKey, "kubernetes.io/hostname");
  EXPECT_EQ(anti.matchLabelKeys, std::vector<std::string>{"pod-template-hash"});
  EXPECT_FALSE(anti.namespaceSelector.has_value());
  ASSERT_EQ(sc.podAntiAffinity->preferred.size(), 1u);
  EXPECT_EQ(sc.podAntiAffinity->preferred[0].weight, 50);
  ASSERT_TRUE(sc.podAntiAffinity->preferred[0].term.namespaceSelector.has_value());
  EXPECT_TRUE(sc.podAntiAffinity->preferred[0].term.namespaceSelector->empty());
  EXPECT_TRUE(sc.hasRequiredAntiAffinity());
  EXPECT_EQ(sc.tolerations,
            (std::vector<Toleration>{
                {"node.kubernetes.io/not-ready", TolerationOp::Exists, "", TaintEffect::NoExecute, 300},
                {"node.kubernetes.io/unreachable", TolerationOp::Exists, "", TaintEffect::NoExecute, 300},
                {"dedicated", TolerationOp::Equal, "shop", TaintEffect::None, std::nullopt},
                {"", TolerationOp::Exists, "", TaintEffect::None, std::nullopt}}));
  ASSERT_EQ(sc.topologySpreadConstraints.size(), 1u);
  const TopologySpreadConstraint& tsc = sc.topologySpreadConstraints[0];
  EXPECT_EQ(tsc.maxSkew, 2);
  EXPECT_EQ(tsc.topologyKey, "topology.kubernetes.io/zone");
  EXPECT_EQ(tsc.whenUnsatisfiable, UnsatisfiableAction::ScheduleAnyway);
  EXPECT_EQ(tsc.minDomains, 3);
  EXPECT_EQ(tsc.nodeAffinityPolicy, InclusionPolicy::Honor);
  EXPECT_EQ(tsc.nodeTaintsPolicy, InclusionPolicy::Ignore);
  EXPECT_EQ(tsc.matchLabelKeys, std::vector<std::string>{"pod-template-hash"});
  EXPECT_EQ(tsc.labelSelector, (LabelSelector{{{"app.kubernetes.io/name", "web"}}, {}}));
}

TEST(DecodePodTest, RealisticKubectlJson) {
  auto pod = podFromJson(kPodJson);
  ASSERT_TRUE(pod.isOk()) << pod.error();
  expectRealisticPod(*pod);
}

TEST(DecodePodTest, RealisticKubectlYaml) {
  auto pod = podFromYaml(kPodYaml);
  ASSERT_TRUE(pod.isOk()) << pod.error();
  expectRealisticPod(*pod);
  // Decoded twice from different texts, the identical constraint block is one allocation.
  auto fromJson = podFromJson(kPodJson);
  ASSERT_TRUE(fromJson.isOk());
  EXPECT_EQ(pod->scheduling.get(), fromJson->scheduling.get());
}

TEST(DecodePodTest, ThroughDecodeObjectJson) {
  auto obj = decodeObjectJson(kPodJson);
  ASSERT_TRUE(obj.isOk()) << obj.error();
  ASSERT_TRUE(std::holds_alternative<Pod>(*obj));
  expectRealisticPod(std::get<Pod>(*obj));
}

TEST(DecodePodTest, PodsWithTheSameConstraintsShareOneBlock) {
  const std::string a =
      R"({"metadata":{"name":"a"},"spec":{"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":
      {"nodeSelectorTerms":[{"matchExpressions":[{"key":"zone","operator":"In","values":["z1"]}]}]}}},
      "tolerations":[{"key":"k","operator":"Exists"}]}})";
  std::string b = a;
  b.replace(b.find("\"a\""), 3, "\"b\"");
  std::string other = a;
  other.replace(other.find("z1"), 2, "z2");
  auto pa = podFromJson(a), pb = podFromJson(b), po = podFromJson(other);
  ASSERT_TRUE(pa.isOk() && pb.isOk() && po.isOk());
  EXPECT_EQ(pb->name, "b");
  EXPECT_EQ(pa->scheduling.get(), pb->scheduling.get());
  EXPECT_NE(pa->scheduling.get(), po->scheduling.get());
  // A pod without any constraints still gets a (shared) block.
  auto bare1 = podFromJson(R"({"metadata":{"name":"x"}})");
  auto bare2 = podFromJson(R"({"spec":{"nodeName":"n"}})");
  ASSERT_TRUE(bare1.isOk() && bare2.isOk());
  ASSERT_NE(bare1->scheduling, nullptr);
  EXPECT_EQ(bare1->scheduling.get(), bare2->scheduling.get());
}

TEST(DecodePodTest, FieldsInAnyOrder) {
  // status first, name last: the ephemeral PVC name still uses the pod name.
  auto pod = podFromJson(R"({"status":{"phase":"Pending","conditions":[{"type":"Ready","status":"False"}]},
      "spec":{"volumes":[{"ephemeral":{"volumeClaimTemplate":{}},"name":"tmp"},{"hostPath":{"path":"/x"},"name":"h"}]},
      "metadata":{"namespace":"ns1","name":"late"}})");
  ASSERT_TRUE(pod.isOk()) << pod.error();
  EXPECT_EQ(pod->pvcClaimNames, std::vector<std::string>{"late-tmp"});
  EXPECT_TRUE(pod->hasLocalStorage);
  EXPECT_FALSE(pod->ready);
  EXPECT_EQ(pod->phase, PodPhase::Pending);
}

TEST(DecodePodTest, LimitsDefaultRequestsAndQosIsComputedWithoutStatus) {
  auto pod = podFromJson(R"({"metadata":{"name":"g"},"spec":{"containers":[
      {"name":"c","resources":{"limits":{"cpu":"500m","memory":"1Gi"}}},
      {"name":"d","resources":{"limits":{"cpu":"1","memory":"1Gi"},"requests":{"cpu":"1"}}}]}})");
  ASSERT_TRUE(pod.isOk()) << pod.error();
  EXPECT_EQ(pod->requests, (ResourceList{{"cpu", 1500}, {"memory", 2 * kGi}}));
  EXPECT_EQ(pod->qos, QosClass::Guaranteed);

  auto burst = podFromJson(
      R"({"spec":{"containers":[{"resources":{"limits":{"cpu":"1","memory":"1Gi"},"requests":{"cpu":"100m"}}}]}})");
  ASSERT_TRUE(burst.isOk());
  EXPECT_EQ(burst->qos, QosClass::Burstable);
  EXPECT_EQ(burst->requests, (ResourceList{{"cpu", 100}, {"memory", 1 * kGi}}));

  auto best = podFromJson(R"({"spec":{"containers":[{"name":"c"}]}})");
  ASSERT_TRUE(best.isOk());
  EXPECT_EQ(best->qos, QosClass::BestEffort);
  EXPECT_TRUE(best->requests.empty());
}

TEST(DecodePodTest, StatusQosClassWinsOverComputation) {
  auto pod = podFromJson(
      R"({"spec":{"containers":[{"resources":{"requests":{"cpu":"1"}}}]},"status":{"qosClass":"Guaranteed"}})");
  ASSERT_TRUE(pod.isOk());
  EXPECT_EQ(pod->qos, QosClass::Guaranteed);
}

TEST(DecodePodTest, QuantitiesAsJsonNumbersAndNulls) {
  auto pod = podFromJson(R"({"spec":{"containers":[{"resources":{"requests":{"cpu":0.5,"memory":1e3,"example.com/foo":2,
      "nvidia.com/gpu":null,"ephemeral-storage":" 1Gi "}}}]}})");
  ASSERT_TRUE(pod.isOk()) << pod.error();
  EXPECT_EQ(pod->requests, (ResourceList{{"cpu", 500},
                                         {"memory", 1000000},
                                         {"example.com/foo", 2000},
                                         {"nvidia.com/gpu", 0},
                                         {"ephemeral-storage", 1 * kGi}}));
}

TEST(DecodePodTest, AnnotationsAndMirrorPods) {
  auto pod = podFromJson(
      R"({"metadata":{"annotations":{"kubernetes.io/config.mirror":"abc","kubernetes.io/config.source":"file",
      "descheduler.alpha.kubernetes.io/evict":"true","other":"x"},"deletionTimestamp":"2024-01-02T03:04:05Z"}})");
  ASSERT_TRUE(pod.isOk()) << pod.error();
  EXPECT_TRUE(pod->mirror);
  EXPECT_TRUE(pod->annotationEvict);
  EXPECT_FALSE(pod->annotationPreferNoEviction);
  EXPECT_EQ(pod->configSource, "file");
  EXPECT_TRUE(pod->isStatic());
  EXPECT_EQ(pod->deletionTimestamp, 1704164645);
  EXPECT_TRUE(pod->isTerminating());
}

TEST(DecodePodTest, NullsMeanAbsent) {
  auto pod =
      podFromJson(R"({"metadata":{"labels":null,"annotations":null,"ownerReferences":null,"deletionTimestamp":null},
      "spec":{"priority":null,"affinity":{"nodeAffinity":null,"podAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":null}},
      "tolerations":null,"volumes":[{"name":"v","emptyDir":null}],"resourceClaims":[{"name":"gpu"}]},"status":null})");
  ASSERT_TRUE(pod.isOk()) << pod.error();
  EXPECT_TRUE(pod->labels.empty());
  EXPECT_FALSE(pod->priority.has_value());
  EXPECT_FALSE(pod->constraints().nodeAffinity.has_value());
  ASSERT_TRUE(pod->constraints().podAffinity.has_value());
  EXPECT_TRUE(pod->constraints().podAffinity->required.empty());
  EXPECT_FALSE(pod->hasLocalStorage);
  EXPECT_TRUE(pod->hasResourceClaims);
}

struct DecodeErrorCase {
  const char* name;
  const char* json;
  const char* error;
};

class DecodePodErrorTest : public ::testing::TestWithParam<DecodeErrorCase> {};

TEST_P(DecodePodErrorTest, NamesTheFieldPath) {
  const auto& c = GetParam();
  auto pod = podFromJson(c.json);
  ASSERT_FALSE(pod.isOk()) << c.name;
  EXPECT_EQ(pod.error(), c.error) << c.name;
}

INSTANTIATE_TEST_SUITE_P(
    Table, DecodePodErrorTest,
    ::testing::Values(
        DecodeErrorCase{"bad quantity", R"({"spec":{"containers":[{"resources":{"requests":{"cpu":"12x"}}}]}})",
                        "spec.containers[0].resources.requests.cpu: invalid quantity \"12x\""},
        DecodeErrorCase{"bad quantity in second init container",
                        R"({"spec":{"initContainers":[{},{"resources":{"limits":{"memory":"1 Gi"}}}]}})",
                        "spec.initContainers[1].resources.limits.memory: invalid quantity \"1 Gi\""},
        DecodeErrorCase{"quantity overflow", R"({"spec":{"overhead":{"cpu":"1E"}}})",
                        "spec.overhead.cpu: quantity \"1E\" does not fit in int64 milli-units"},
        DecodeErrorCase{"quantity of wrong type", R"({"spec":{"overhead":{"cpu":true}}})",
                        "spec.overhead.cpu: expected quantity, got boolean"},
        DecodeErrorCase{
            "bad node selector operator",
            R"({"spec":{"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"a","operator":"Maybe","values":["x"]}]}]}}}}})",
            "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]."
            "matchExpressions[0].operator: unknown operator \"Maybe\""},
        DecodeErrorCase{
            "bad label selector operator",
            R"({"spec":{"affinity":{"podAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[{"labelSelector":{"matchExpressions":[{"key":"a","operator":"Gt","values":["1"]}]}}]}}}})",
            "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector."
            "matchExpressions[0].operator: unknown operator \"Gt\""},
        DecodeErrorCase{
            "missing operator",
            R"({"spec":{"topologySpreadConstraints":[{"labelSelector":{"matchExpressions":[{"key":"a"}]}}]}})",
            "spec.topologySpreadConstraints[0].labelSelector.matchExpressions[0]: missing operator"},
        DecodeErrorCase{"string where a number is expected", R"({"spec":{"priority":"high"}})",
                        "spec.priority: expected integer, got string"},
        DecodeErrorCase{"float where an integer is expected", R"({"spec":{"priority":1.5}})",
                        "spec.priority: expected integer, got 1.5"},
        DecodeErrorCase{"int32 overflow", R"({"spec":{"priority":3000000000}})",
                        "spec.priority: integer 3000000000 out of int32 range"},
        DecodeErrorCase{"number where a string is expected", R"({"metadata":{"name":42}})",
                        "metadata.name: expected string, got number"},
        DecodeErrorCase{"label value not a string", R"({"metadata":{"labels":{"version":1.0}}})",
                        "metadata.labels.version: expected string, got number"},
        DecodeErrorCase{"labels not an object", R"({"metadata":{"labels":["a"]}})",
                        "metadata.labels: expected object, got array"},
        DecodeErrorCase{"containers not an array", R"({"spec":{"containers":{"name":"c"}}})",
                        "spec.containers: expected array, got object"},
        DecodeErrorCase{"bool of wrong type", R"({"metadata":{"ownerReferences":[{"controller":"yes"}]}})",
                        "metadata.ownerReferences[0].controller: expected boolean, got string"},
        DecodeErrorCase{"toleration effect", R"({"spec":{"tolerations":[{"key":"k","effect":"Sometimes"}]}})",
                        "spec.tolerations[0].effect: unknown effect \"Sometimes\""},
        DecodeErrorCase{"toleration operator", R"({"spec":{"tolerations":[{"key":"k","operator":"Lt"}]}})",
                        "spec.tolerations[0].operator: unknown operator \"Lt\""},
        DecodeErrorCase{"spread action", R"({"spec":{"topologySpreadConstraints":[{"whenUnsatisfiable":"Whatever"}]}})",
                        "spec.topologySpreadConstraints[0].whenUnsatisfiable: unknown whenUnsatisfiable \"Whatever\""},
        DecodeErrorCase{"bad timestamp", R"({"metadata":{"creationTimestamp":"yesterday"}})",
                        "metadata.creationTimestamp: invalid RFC 3339 timestamp \"yesterday\""},
        DecodeErrorCase{"spec not an object", R"({"spec":"none"})", "spec: expected object, got string"}),
    [](const auto& info) {
      std::string n = info.param.name;
      for (char& ch : n) {
        if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
      }
      return n;
    });

TEST(DecodePodTest, KeepsIdentityDecodedBeforeAnError) {
  Pod pod;
  Status s = decodeWith(decodePod, R"({"metadata":{"name":"broken","namespace":"ns"},"spec":{"priority":"x"}})", pod);
  ASSERT_FALSE(s.isOk());
  EXPECT_EQ(pod.key(), "ns/broken");
  EXPECT_NE(pod.scheduling, nullptr);
}

// --- other kinds -----------------------------------------------------------------------------

TEST(DecodeNodeTest, Node) {
  auto obj = decodeObjectJson(
      R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"node-7","creationTimestamp":"2024-01-02T03:04:05Z",
      "labels":{"kubernetes.io/hostname":"node-7","topology.kubernetes.io/zone":"eu-west-1a"}},
      "spec":{"podCIDR":"10.244.3.0/24","taints":[{"key":"dedicated","value":"shop","effect":"NoSchedule"},
        {"key":"node.kubernetes.io/unreachable","effect":"NoExecute","timeAdded":"2024-01-02T03:04:05Z"}],"unschedulable":true},
      "status":{"capacity":{"cpu":"8","memory":"32Gi","pods":"110"},"allocatable":{"cpu":"7910m","memory":"31Gi","pods":"110"},
        "conditions":[{"type":"MemoryPressure","status":"False"},{"type":"Ready","status":"False","reason":"KubeletNotReady"}]}})");
  ASSERT_TRUE(obj.isOk()) << obj.error();
  const Node& n = std::get<Node>(*obj);
  EXPECT_EQ(n.name, "node-7");
  EXPECT_EQ(n.nameSym.view(), "node-7");
  EXPECT_EQ(n.labels.get(kLabelHostname), "node-7");
  EXPECT_EQ(n.creationTimestamp, 1704164645);
  EXPECT_EQ(n.taints, (std::vector<Taint>{{"dedicated", "shop", TaintEffect::NoSchedule},
                                          {"node.kubernetes.io/unreachable", "", TaintEffect::NoExecute}}));
  EXPECT_TRUE(n.unschedulable);
  EXPECT_EQ(n.allocatable, (ResourceList{{"cpu", 7910}, {"memory", 31 * kGi}, {"pods", 110000}}));
  EXPECT_EQ(n.readyCondition, false);
  EXPECT_FALSE(n.isReady());
}

TEST(DecodeNodeTest, CapacityWhenNoAllocatableAndReadyStates) {
  Node n;
  ASSERT_TRUE(decodeWith(decodeNode, R"({"metadata":{"name":"n"},"status":{"capacity":{"cpu":"4"},
      "conditions":[{"status":"True","type":"Ready"}]}})",
                         n)
                  .isOk());
  EXPECT_EQ(n.allocatable, (ResourceList{{"cpu", 4000}}));
  EXPECT_EQ(n.readyCondition, true);
  ASSERT_TRUE(
      decodeWith(decodeNode,
                 R"({"metadata":{"name":"n"},"status":{"conditions":[{"type":"DiskPressure","status":"True"}]}})", n)
          .isOk());
  EXPECT_FALSE(n.readyCondition.has_value());
  EXPECT_TRUE(n.isReady());
  Status bad = decodeWith(decodeNode, R"({"spec":{"taints":[{"key":"k","effect":"Maybe"}]}})", n);
  EXPECT_EQ(bad.message(), "spec.taints[0].effect: unknown taint effect \"Maybe\"");
  bad = decodeWith(decodeNode, R"({"spec":{"taints":[{"key":"k"}]}})", n);
  EXPECT_EQ(bad.message(), "spec.taints[0]: missing effect");
}

TEST(DecodePdbTest, PolicyV1) {
  auto obj = decodeObjectJson(R"({"apiVersion":"policy/v1","kind":"PodDisruptionBudget",
      "metadata":{"name":"web","namespace":"shop","generation":3},
      "spec":{"maxUnavailable":"50%","selector":{"matchLabels":{"app":"web"}}},
      "status":{"currentHealthy":4,"desiredHealthy":2,"disruptionsAllowed":2,"expectedPods":4,"observedGeneration":3}})");
  ASSERT_TRUE(obj.isOk()) << obj.error();
  const auto& pdb = std::get<PodDisruptionBudget>(*obj);
  EXPECT_EQ(pdb.key(), "shop/web");
  EXPECT_EQ(pdb.generation, 3);
  EXPECT_EQ(pdb.selector, (LabelSelector{{{"app", "web"}}, {}}));
  EXPECT_FALSE(pdb.minAvailable.has_value());
  EXPECT_EQ(pdb.maxUnavailable, (IntOrPercent{true, 50}));
  EXPECT_TRUE(pdb.hasStatus);
  EXPECT_EQ(pdb.observedGeneration, 3);
  EXPECT_EQ(pdb.disruptionsAllowed, 2);
  EXPECT_EQ(pdb.currentHealthy, 4);
  EXPECT_EQ(pdb.desiredHealthy, 2);
  EXPECT_EQ(pdb.expectedPods, 4);
}

TEST(DecodePdbTest, StatusSelectorAndIntOrPercentVariants) {
  PodDisruptionBudget pdb;
  ASSERT_TRUE(decodeWith(decodePdb, R"({"spec":{"minAvailable":2,"selector":{}},"status":{}})", pdb).isOk());
  EXPECT_EQ(pdb.minAvailable, (IntOrPercent{false, 2}));
  ASSERT_TRUE(pdb.selector.has_value());
  EXPECT_TRUE(pdb.selector->empty());  // empty selects every pod in the namespace
  EXPECT_FALSE(pdb.hasStatus);
  EXPECT_FALSE(pdb.disruptionsAllowed.has_value());

  ASSERT_TRUE(decodeWith(decodePdb, R"({"spec":{"selector":null}})", pdb).isOk());
  EXPECT_FALSE(pdb.selector.has_value());  // unset selects no pod
  EXPECT_FALSE(pdb.hasStatus);

  ASSERT_TRUE(decodeWith(decodePdb, R"({"status":{"disruptionsAllowed":0}})", pdb).isOk());
  EXPECT_TRUE(pdb.hasStatus);
  EXPECT_EQ(pdb.disruptionsAllowed, 0);

  EXPECT_EQ(decodeWith(decodePdb, R"({"spec":{"minAvailable":"half"}})", pdb).message(),
            "spec.minAvailable: invalid int-or-percent \"half\"");
  EXPECT_EQ(decodeWith(decodePdb, R"({"spec":{"maxUnavailable":"5"}})", pdb).message(),
            "spec.maxUnavailable: invalid int-or-percent \"5\"");
  EXPECT_EQ(decodeWith(decodePdb, R"({"spec":{"maxUnavailable":[1]}})", pdb).message(),
            "spec.maxUnavailable: expected integer or percent string, got array");
}

TEST(DecodeOtherKindsTest, NamespacePriorityClassPvc) {
  auto ns = decodeObjectJson(
      R"({"kind":"Namespace","metadata":{"name":"shop","labels":{"team":"a"}},"status":{"phase":"Terminating"}})");
  ASSERT_TRUE(ns.isOk()) << ns.error();
  EXPECT_EQ(std::get<Namespace>(*ns).name, "shop");
  EXPECT_EQ(std::get<Namespace>(*ns).labels, (Labels{{"team", "a"}}));
  EXPECT_TRUE(std::get<Namespace>(*ns).terminating);
  auto active = decodeObjectJson(R"({"kind":"Namespace","metadata":{"name":"x"},"status":{"phase":"Active"}})");
  ASSERT_TRUE(active.isOk());
  EXPECT_FALSE(std::get<Namespace>(*active).terminating);

  auto pc = decodeObjectJson(
      R"({"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":"system-node-critical"},
      "value":2000001000,"globalDefault":false,"preemptionPolicy":"PreemptLowerPriority"})");
  ASSERT_TRUE(pc.isOk()) << pc.error();
  EXPECT_EQ(std::get<PriorityClass>(*pc).name, "system-node-critical");
  EXPECT_EQ(std::get<PriorityClass>(*pc).value, 2000001000);

  auto pvc = decodeObjectJson(R"({"kind":"PersistentVolumeClaim","metadata":{"name":"data","namespace":"shop"},
      "spec":{"accessModes":["ReadWriteOnce"],"storageClassName":"fast"}})");
  ASSERT_TRUE(pvc.isOk()) << pvc.error();
  EXPECT_EQ(std::get<PersistentVolumeClaim>(*pvc).ns.view(), "shop");
  EXPECT_EQ(std::get<PersistentVolumeClaim>(*pvc).storageClassName, "fast");
  auto noClass =
      decodeObjectJson(R"({"kind":"PersistentVolumeClaim","metadata":{"name":"d"},"spec":{"storageClassName":null}})");
  ASSERT_TRUE(noClass.isOk());
  EXPECT_FALSE(std::get<PersistentVolumeClaim>(*noClass).storageClassName.has_value());
}

TEST(DecodeObjectJsonTest, KindsAndMalformedInput) {
  EXPECT_EQ(kindFromString("Pod"), Kind::Pod);
  EXPECT_EQ(kindFromString("PodDisruptionBudget"), Kind::PodDisruptionBudget);
  EXPECT_EQ(kindFromString("PodList"), Kind::Unknown);
  EXPECT_EQ(toString(Kind::PersistentVolumeClaim), "PersistentVolumeClaim");

  EXPECT_EQ(decodeObjectJson(R"({"kind":"PodList","items":[]})").error(), "unknown kind \"PodList\"");
  EXPECT_EQ(decodeObjectJson(R"({"metadata":{}})").error(), "object has no kind");
  EXPECT_THAT(decodeObjectJson("").error(), HasSubstr("invalid JSON"));
  EXPECT_THAT(decodeObjectJson("[1,2]").error(), HasSubstr("expected a JSON object"));
  EXPECT_THAT(decodeObjectJson(R"({"kind":"Pod","metadata":{"name":"x"}} {"kind":"Pod"})").error(),
              HasSubstr("trailing content"));
  EXPECT_THAT(decodeObjectJson(R"({"kind":"Pod","metadata":{"name":"x")").error(), HasSubstr("JSON"));
  EXPECT_EQ(decodeObjectJson(R"({"kind":"Pod","spec":{"priority":"x"}})").error(),
            "Pod: spec.priority: expected integer, got string");
}

TEST(DecodeObjectJsonTest, RandomBytesGiveAnErrorNotACrash) {
  std::mt19937_64 rng(12345);
  std::string junk(1 << 20, '\0');
  for (char& ch : junk) ch = static_cast<char>(rng());
  EXPECT_FALSE(decodeObjectJson(junk).isOk());
  // Mostly-valid JSON-looking noise: braces and quotes in random order.
  const std::string alphabet = R"({}[]":,0123456789 abcdefkindPod)";
  for (char& ch : junk) ch = alphabet[rng() % alphabet.size()];
  EXPECT_FALSE(decodeObjectJson(junk).isOk());
  junk[0] = '{';
  EXPECT_FALSE(decodeObjectJson(junk).isOk());
  // The same noise is not YAML either: unbalanced flow collections and quotes.
  EXPECT_FALSE(yamlStreamToJson(junk).isOk());
}

TEST(DecodeObjectJsonTest, TruncatedPodsNeverCrash) {
  const std::string full(kPodJson);
  for (std::size_t len = 0; len < full.size(); len += 97) {
    auto r = decodeObjectJson(std::string_view(full).substr(0, len));
    EXPECT_FALSE(r.isOk()) << "prefix of " << len << " bytes decoded";
  }
}

// --- YAML --------------------------------------------------------------------------------------

struct YamlCase {
  const char* yaml;
  const char* json;
};

class YamlScalarTest : public ::testing::TestWithParam<YamlCase> {};

TEST_P(YamlScalarTest, ConvertsLikeSigsK8sYaml) {
  const auto& c = GetParam();
  auto json = yamlDocumentToJson(c.yaml);
  ASSERT_TRUE(json.isOk()) << c.yaml << ": " << json.error();
  EXPECT_EQ(*json, c.json) << c.yaml;
}

INSTANTIATE_TEST_SUITE_P(
    Table, YamlScalarTest,
    ::testing::Values(
        YamlCase{"a: true", R"({"a":true})"}, YamlCase{"a: False", R"({"a":false})"},
        YamlCase{"a: yes", R"({"a":true})"}, YamlCase{"a: off", R"({"a":false})"}, YamlCase{"a: ON", R"({"a":true})"},
        YamlCase{"a: n", R"({"a":false})"}, YamlCase{"a: null", R"({"a":null})"}, YamlCase{"a: ~", R"({"a":null})"},
        YamlCase{"a:", R"({"a":null})"}, YamlCase{"a: 42", R"({"a":42})"}, YamlCase{"a: -7", R"({"a":-7})"},
        YamlCase{"a: +7", R"({"a":7})"}, YamlCase{"a: 1_000", R"({"a":1000})"}, YamlCase{"a: 0x1F", R"({"a":31})"},
        YamlCase{"a: 0755", R"({"a":493})"}, YamlCase{"a: 0o17", R"({"a":15})"}, YamlCase{"a: 0b101", R"({"a":5})"},
        YamlCase{"a: 08", R"({"a":8})"}, YamlCase{"a: 18446744073709551615", R"({"a":18446744073709551615})"},
        YamlCase{"a: 1.5", R"({"a":1.5})"}, YamlCase{"a: .5", R"({"a":0.5})"}, YamlCase{"a: 0.1", R"({"a":0.1})"},
        YamlCase{"a: 1e3", R"({"a":1000})"}, YamlCase{"a: -2.5E-3", R"({"a":-0.0025})"},
        YamlCase{"a: 1.", R"({"a":1})"}, YamlCase{"a: \"true\"", R"({"a":"true"})"},
        YamlCase{"a: '42'", R"({"a":"42"})"}, YamlCase{"a: !!str 42", R"({"a":"42"})"},
        YamlCase{"a: 512Mi", R"({"a":"512Mi"})"}, YamlCase{"a: 250m", R"({"a":"250m"})"},
        YamlCase{"a: 1.2.3", R"({"a":"1.2.3"})"},
        YamlCase{"a: 2024-01-02T03:04:05Z", R"({"a":"2024-01-02T03:04:05Z"})"}, YamlCase{"a: 0x", R"({"a":"0x"})"},
        YamlCase{"a: |\n  line1\n  \"q\"\\\n", R"({"a":"line1\n\"q\"\\\n"})"},
        YamlCase{"a: \"tab\\there\"", R"({"a":"tab\there"})"},
        YamlCase{"a: [1, b, {c: d}]", R"({"a":[1,"b",{"c":"d"}]})"}, YamlCase{"- 1\n- x", R"([1,"x"])"},
        YamlCase{"1: a\ntrue: b", R"({"1":"a","true":"b"})"},
        YamlCase{"a: &anchor {k: v}\nb: *anchor", R"({"a":{"k":"v"},"b":{"k":"v"}})"},
        // YAML 1.1 types a plain "y" as true even as a key, as go-yaml v2 (and so kubectl) does.
        YamlCase{"y: 1", R"({"true":1})"}, YamlCase{"", "null"}, YamlCase{"a: \"\\u00e9\"", "{\"a\":\"\xc3\xa9\"}"}));

TEST(YamlTest, DuplicateKeysNameTheKeyAndLine) {
  auto r = yamlDocumentToJson("metadata:\n  name: a\n  labels:\n    x: \"1\"\n  name: b\n");
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.error(), "line 5, column 3: duplicate key \"name\"");
  auto typed = yamlDocumentToJson("a: 1\n\"a\": 2\n");
  ASSERT_FALSE(typed.isOk());
  EXPECT_THAT(typed.error(), HasSubstr("line 2"));
  // Same key in sibling maps is fine.
  EXPECT_TRUE(yamlDocumentToJson("a: {x: 1}\nb: {x: 2}\n").isOk());
}

TEST(YamlTest, StreamsSkipEmptyDocuments) {
  auto docs = yamlStreamToJson("---\nkind: Pod\n---\n---\nkind: Node\n...\n");
  ASSERT_TRUE(docs.isOk()) << docs.error();
  EXPECT_EQ(*docs, (std::vector<std::string>{R"({"kind":"Pod"})", R"({"kind":"Node"})"}));
  auto one = yamlDocumentToJson("kind: Pod\n---\nkind: Node\n");
  ASSERT_FALSE(one.isOk());
  EXPECT_EQ(one.error(), "expected one YAML document, found 2");
  auto stream = yamlStreamToJson("a: 1\n---\nb: 1\nb: 2\n");
  ASSERT_FALSE(stream.isOk());
  EXPECT_EQ(stream.error(), "line 4, column 1: duplicate key \"b\"");  // lines count across the stream
}

TEST(YamlTest, Errors) {
  EXPECT_THAT(yamlDocumentToJson("a: [1, 2\n").error(), HasSubstr("invalid YAML at line"));
  EXPECT_THAT(yamlDocumentToJson("a: .inf\n").error(), HasSubstr("not representable in JSON"));
  EXPECT_THAT(yamlDocumentToJson("base: &b {x: 1}\nd:\n  <<: *b\n").error(), HasSubstr("merge keys"));
  EXPECT_THAT(yamlDocumentToJson("? [a, b]\n: c\n").error(), HasSubstr("mapping keys must be scalars"));
  std::string deep(2000, '[');
  EXPECT_FALSE(yamlDocumentToJson(deep).isOk());
}

TEST(YamlTest, RandomBytesGiveAnErrorOrJsonNotACrash) {
  std::mt19937_64 rng(99);
  std::string junk(1 << 20, '\0');
  for (char& ch : junk) ch = static_cast<char>(rng() % 256);
  auto r = yamlStreamToJson(junk);
  if (r.isOk()) {
    for (const auto& doc : *r) EXPECT_FALSE(decodeObjectJson(doc).isOk());
  }
}

// --- timestamps --------------------------------------------------------------------------------

struct TimestampCase {
  const char* text;
  std::optional<Timestamp> want;
};

class TimestampTest : public ::testing::TestWithParam<TimestampCase> {};

TEST_P(TimestampTest, ParsesRfc3339) {
  const auto& c = GetParam();
  auto r = parseTimestamp(c.text);
  if (c.want) {
    ASSERT_TRUE(r.isOk()) << c.text << ": " << r.error();
    EXPECT_EQ(*r, *c.want) << c.text;
  } else {
    ASSERT_FALSE(r.isOk()) << c.text;
    EXPECT_THAT(r.error(), HasSubstr(c.text));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Table, TimestampTest,
    ::testing::Values(
        TimestampCase{"2024-01-02T03:04:05Z", 1704164645}, TimestampCase{"1970-01-01T00:00:00Z", 0},
        TimestampCase{"1969-12-31T23:59:59Z", -1}, TimestampCase{"2024-01-02T03:04:05.123456789Z", 1704164645},
        TimestampCase{"2024-01-02T05:04:05+02:00", 1704164645}, TimestampCase{"2024-01-01T21:34:05-05:30", 1704164645},
        TimestampCase{"2024-02-29T00:00:00Z", 1709164800}, TimestampCase{"2000-03-01T00:00:00Z", 951868800},
        TimestampCase{"2023-02-29T00:00:00Z", std::nullopt}, TimestampCase{"2024-13-01T00:00:00Z", std::nullopt},
        TimestampCase{"2024-01-02 03:04:05Z", std::nullopt}, TimestampCase{"2024-01-02t03:04:05Z", std::nullopt},
        TimestampCase{"2024-01-02T03:04:05", std::nullopt}, TimestampCase{"2024-01-02T03:04:60Z", std::nullopt},
        TimestampCase{"2024-01-02T24:00:00Z", std::nullopt}, TimestampCase{"2024-01-02T03:04:05.Z", std::nullopt},
        TimestampCase{"2024-01-02T03:04:05+0200", std::nullopt},
        TimestampCase{"2024-01-02T03:04:05Zjunk", std::nullopt}, TimestampCase{"", std::nullopt},
        TimestampCase{"yesterday", std::nullopt}));

}  // namespace
}  // namespace kdesched::api
