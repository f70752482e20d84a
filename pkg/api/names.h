// Object names as the API server validates them (k8s.io/apimachinery/pkg/api/validation): what
// makes namespace + name an identity. A name with a `/` in it made two different pods share one
// key ("a" + "b/web" and "a/b" + "web"), so one hid the other.
#pragma once

#include <string_view>

#include "pkg/api/object.h"
#include "pkg/base/status.h"

namespace kdesched::api {

// RFC 1123 subdomain (Pod, Node, PodDisruptionBudget, PersistentVolumeClaim and PriorityClass
// names): at most 253 characters of [a-z0-9-.], each dot-separated part starting and ending with
// [a-z0-9]. The error is the API server's wording without the field.
Status validateDnsSubdomain(std::string_view name);
// RFC 1123 label (Namespace names, and so every object's metadata.namespace): at most 63
// characters of [a-z0-9-], starting and ending with [a-z0-9].
Status validateDnsLabel(std::string_view name);

// metadata.name, and metadata.namespace for the namespaced kinds (required there): errors start
// with the field, `metadata.name: "b/web": a lowercase RFC 1123 subdomain must ...`.
Status validateObjectNames(const Object& object);

}  // namespace kdesched::api
