# shellcheck shell=bash
# The test control plane's certificates and kubeconfigs, sourced by cluster.sh (it uses
# cluster.sh's variables: DIR, SERVICE_IP, ...). Everything lives under DIR/pki.

ossl() { openssl "$@" >>"${DIR}/logs/openssl.log" 2>&1 || kd_die "openssl $1 failed (see ${DIR}/logs/openssl.log)"; }

# sign_cert NAME SUBJECT EXT_LINES: key + certificate signed by the cluster CA.
# TLS keys are ECDSA P-256 (fast to generate, fine for Go and OpenSSL clients);
# the service-account signing key is RSA (RS256 tokens, the common case).
sign_cert() {
  local name="$1" subj="$2" ext="$3" p="${DIR}/pki"
  ossl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "${p}/${name}.key" -out "${p}/${name}.csr" -subj "${subj}"
  printf '%b\n' "${ext}" >"${p}/${name}.ext"
  ossl x509 -req -in "${p}/${name}.csr" -CA "${p}/ca.crt" -CAkey "${p}/ca.key" -CAcreateserial \
    -days 3650 -sha256 -extfile "${p}/${name}.ext" -out "${p}/${name}.crt"
  rm -f "${p}/${name}.csr" "${p}/${name}.ext"
}

gen_pki() {
  local p="${DIR}/pki"
  mkdir -p "${p}"
  ossl req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "${p}/ca.key" -out "${p}/ca.crt" -days 3650 \
    -sha256 -subj "/CN=kdesched-test-ca" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature"
  local client='basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth'
  sign_cert apiserver "/CN=kube-apiserver" \
    "basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1,IP:${SERVICE_IP},DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
  sign_cert admin "/O=system:masters/CN=kubernetes-admin" "${client}"
  sign_cert kube-controller-manager "/CN=system:kube-controller-manager" "${client}"
  sign_cert kube-scheduler "/CN=system:kube-scheduler" "${client}"
  # Front proxy (aggregation layer / requestheader authentication), as kubeadm
  # sets it up; without it the delegating authenticators of the controller
  # manager and scheduler log errors about a missing requestheader CA.
  ossl req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "${p}/front-proxy-ca.key" \
    -out "${p}/front-proxy-ca.crt" -days 3650 -sha256 -subj "/CN=kdesched-front-proxy-ca" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature"
  local p2="${p}/front-proxy-client"
  ossl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "${p2}.key" -out "${p2}.csr" \
    -subj "/CN=front-proxy-client"
  printf '%b\n' "${client}" >"${p2}.ext"
  ossl x509 -req -in "${p2}.csr" -CA "${p}/front-proxy-ca.crt" -CAkey "${p}/front-proxy-ca.key" -CAcreateserial \
    -days 3650 -sha256 -extfile "${p2}.ext" -out "${p2}.crt"
  rm -f "${p2}.csr" "${p2}.ext"
  # Service-account token signing keypair.
  ossl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "${p}/sa.key"
  ossl pkey -in "${p}/sa.key" -pubout -out "${p}/sa.pub"
  chmod 600 "${p}"/*.key
}

# write_kubeconfig FILE USER CERT_NAME: a kubeconfig with embedded credentials: the client
# certificate pki/CERT_NAME.{crt,key}, or with CERT_NAME "--token TOKEN" a bearer token.
write_kubeconfig() {
  local file="$1" user="$2" p="${DIR}/pki" creds
  if [ "$3" = --token ]; then
    creds="    token: $4"
  else
    creds="    client-certificate-data: $(base64 -w0 <"${p}/$3.crt")
    client-key-data: $(base64 -w0 <"${p}/$3.key")"
  fi
  cat >"${file}" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: kdesched
  cluster:
    server: https://127.0.0.1:${APISERVER_PORT}
    certificate-authority-data: $(base64 -w0 <"${p}/ca.crt")
users:
- name: ${user}
  user:
${creds}
contexts:
- name: kdesched
  context:
    cluster: kdesched
    user: ${user}
current-context: kdesched
EOF
  chmod 600 "${file}"
}
