// Shared by the decoder tests: realistic kubectl output, and decoding one object through the
// simdjson on-demand entry points the way the loaders do.
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <string_view>

#include "pkg/api/detail/ondemand.h"
#include "pkg/api/yaml_json.h"

namespace kdesched::api {

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

inline Result<Pod> podFromJson(std::string_view json) {
  Pod pod;
  Status s = decodeWith(decodePod, json, pod);
  if (!s.isOk()) return s;
  return pod;
}

inline Result<Pod> podFromYaml(std::string_view yaml) {
  auto json = yamlDocumentToJson(yaml);
  if (!json.isOk()) return json.status();
  return podFromJson(*json);
}

}  // namespace kdesched::api
