# syntax=docker/dockerfile:1
# kdesched container image: build on Debian 12 (bookworm), run on bookworm-slim as uid 65532.
#
#   docker build -t kdesched:dev .
#   docker run --rm kdesched:dev version
#
# The image has /bin/kdesched and /bin/descheduler (a symlink, the upstream image's path, which the
# Helm chart's `command` uses). On bookworm /bin is a symlink to /usr/bin, so both live there.
# test/e2e/dockerfile.sh checks, without a container engine, that every shared library the built
# binary loads comes from a package the runtime stage lists below.

# ---- build --------------------------------------------------------------------------------
FROM debian:bookworm AS build
WORKDIR /src
# Dependencies first, so editing the sources does not invalidate this layer.
COPY scripts/install-deps.sh scripts/install-deps.sh
RUN scripts/install-deps.sh && rm -rf /var/lib/apt/lists/*
COPY . .
RUN cmake -S . -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release -DKDESCHED_TESTS=OFF \
 && ninja -C /build kdesched \
 && strip /build/kdesched \
 && /build/kdesched version

# ---- runtime ------------------------------------------------------------------------------
FROM debian:bookworm-slim
# Exactly the packages that provide the binary's shared libraries (ldd of the binary, each file
# mapped to its package with dpkg -S). libc6, libgcc-s1, libstdc++6 and zlib1g are in
# bookworm-slim already; they are listed anyway so this list alone is the contract.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
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
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /build/kdesched /usr/bin/kdesched
RUN ln -s kdesched /usr/bin/descheduler \
 && /bin/kdesched version \
 && /bin/descheduler version
# The policy is mounted at /policy-dir; kdesched writes no files (readOnlyRootFilesystem works).
USER 65532:65532
EXPOSE 10258
ENTRYPOINT ["/bin/kdesched"]
