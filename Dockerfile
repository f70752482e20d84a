# syntax=docker/dockerfile:1
# kdesched container image: built on Debian 12 (bookworm), shipped FROM scratch with only the
# binary, the shared libraries it loads, CA certificates and a passwd/group; runs as uid 65532.
#
#   scripts/image.sh                  without Docker: buildah (daemonless), bases made from
#                                     Debian's packages, an OCI archive in ~/.cache/kdesched/images
#   docker build -t kdesched:dev .    with Docker (BuildKit)
#   docker run --rm kdesched:dev version
#
# Stages: build (compiler and -dev packages, ccache in a cache mount), rootfs (the runtime
# library packages + ca-certificates; scripts/image-rootfs.sh copies the ldd closure of the binary
# into /out and runs it there chrooted), and the image, FROM scratch: /out and nothing else. No
# shell, no package manager, no dpkg database.
#
# The image has /bin/kdesched and /bin/descheduler (a symlink, the upstream image's path, which the
# Helm chart's `command` uses); /bin is a symlink to usr/bin, as on bookworm.
# What else the binary opens at run time, checked in the sources and with strace (a plan, and a
# daemon against an unreachable API server, in the unpacked image): no dlopen (nss files and dns
# are built into glibc 2.36, no libnss_* to load); TLS roots from the cluster's CA or, for a
# Prometheus without one, OpenSSL's default file OPENSSLDIR/cert.pem (a symlink to the bundle
# here; the HTTP client also reads /etc/ssl/certs); /usr/lib/ssl/openssl.cnf is looked for and may
# be missing (built-in defaults); /usr/share/zoneinfo for a disruption budget's timeZone (tzdata,
# copied whole: 4 MB); /etc/localtime too (missing: UTC, which the logs use anyway);
# host names through getaddrinfo: /etc/nsswitch.conf (here: the pod's /etc/hosts before DNS,
# glibc's default without the file is the other way round), /etc/hosts and /etc/resolv.conf (the
# kubelet mounts both), /etc/host.conf (optional). No temporary files (--save-snapshot writes where
# it is told), so no /tmp; /etc/passwd and /etc/group are for tools that show the user's name.
# test/e2e/dockerfile.sh checks the stages, and with --image ARCHIVE the built image itself.
#
# ccache: the build stage compiles through a cache mount (id kdesched-ccache), which outlives
# the build in the builder: BuildKit keeps it in its cache store, buildah (1.28, as root) in
# $TMPDIR/buildah-cache/kdesched-ccache, and scripts/image.sh points TMPDIR into its own cache. So
# a rebuild after a source change recompiles only the changed files, and with layer caching
# (--layers) the apt layers are reused as long as scripts/install-deps.sh is unchanged.
# scripts/image.sh makes that mount the host's own ccache directory, and the build stage compiles
# exactly as scripts/test.sh does (RelWithDebInfo, -Werror, the tree at build/ in the sources,
# LANG=C.UTF-8: ccache hashes the locale and makes paths relative to the working directory): the
# CI's image build then takes almost every object (153 of 159 measured) from the compile the CI
# has just done. The image so ships the optimisation level (-O2) the tests and benchmarks ran; the
# debug info is stripped.

# ---- build --------------------------------------------------------------------------------
FROM debian:bookworm AS build
ENV LANG=C.UTF-8
WORKDIR /src
# Dependencies first, so editing the sources does not invalidate this layer.
COPY scripts/install-deps.sh scripts/install-deps.sh
RUN scripts/install-deps.sh --build && rm -rf /var/lib/apt/lists/*
COPY . .
RUN --mount=type=cache,id=kdesched-ccache,target=/root/.cache/ccache \
    export CCACHE_DIR=/root/.cache/ccache CCACHE_BASEDIR=/src CCACHE_NOHASHDIR=1 \
 && cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKDESCHED_WERROR=ON \
      -DKDESCHED_TESTS=OFF -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
 && CCACHE_STATSLOG=/tmp/ccache.stats ninja -C build kdesched \
 && { awk '/^#/ { n++ } /_cache_hit$/ { h++ } END { printf "ccache: %d of %d compiles from the cache\n", h, n }' \
      /tmp/ccache.stats 2>/dev/null || true; } \
 && strip -o /kdesched build/kdesched \
 && rm -rf build /tmp/ccache.stats \
 && /kdesched version

# ---- rootfs: the image's files, collected -------------------------------------------------------
FROM debian:bookworm-slim AS rootfs
# Exactly the packages that provide the binary's shared libraries (ldd of the binary, each file
# mapped to its package with dpkg -S), plus ca-certificates for the CA bundle and tzdata for the
# time zones of disruption budgets (/usr/share/zoneinfo, read by libdate-tz). libc6, libgcc-s1,
# libstdc++6 and zlib1g are in bookworm-slim already; they are listed anyway so this list alone is
# the contract (test/e2e/dockerfile.sh).
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      ca-certificates \
      libc6 \
      libgcc-s1 \
      libstdc++6 \
      zlib1g \
      libssl3 \
      libbrotli1 \
      libcpprest2.10 \
      libspdlog1.10 \
      libfmt9 \
      libyaml-cpp0.7 \
      libsimdjson14 \
      libprometheus-cpp-core1.0 \
      libprotobuf-lite32 \
      libdate-tz3 \
      tzdata \
 && rm -rf /var/lib/apt/lists/*
COPY scripts/image-rootfs.sh /usr/local/bin/image-rootfs.sh
COPY --from=build /kdesched /usr/local/bin/kdesched
RUN image-rootfs.sh /usr/local/bin/kdesched /out

# ---- the image ------------------------------------------------------------------------------
FROM scratch
COPY --from=rootfs /out/ /
# The policy is mounted at /policy-dir; kdesched writes no files (readOnlyRootFilesystem works).
USER 65532:65532
EXPOSE 10258
ENTRYPOINT ["/bin/kdesched"]
