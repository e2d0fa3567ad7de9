# syntax=docker/dockerfile:1
# The ddp3d-operator image: built in a full Debian toolchain stage, shipped on a slim
# runtime with only the shared libraries the binary needs (libcpprest, libyaml-cpp, prometheus-cpp, OpenSSL).
#   docker build -f docker/operator.Dockerfile -t REGISTRY/ddp3d/operator:0.1.0 .
# From a binary already built by tools/setup.sh (what tools/build_images.sh does, with
# buildah): `--target prebuilt` on a context holding payload/ (docker/runtime_payload.sh's
# output); the build stage is then skipped (by BuildKit, buildah and podman;
# the legacy builder runs every stage before the target, and needs payload/ even without one).
# The chart (charts/ddp3d) runs it with --leader-elect --metrics-address=:8080
# --health-address=:8081 [--namespace=...], as a non-root user on a read-only root.
# Bases: the Debian release the project is built and tested on (bookworm); the runtime
# package names below are that release's. tests/e2e/docker/dockerfiles_test.py checks them
# against the built binary's shared libraries.
ARG BUILD_IMAGE=debian:bookworm
ARG BASE_IMAGE=debian:bookworm-slim

FROM ${BUILD_IMAGE} AS build
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      build-essential cmake ninja-build pkg-config \
      libcpprest-dev libyaml-cpp-dev libssl-dev prometheus-cpp-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# Only what the operator's build reads: no LibTorch, no tests.
COPY CMakeLists.txt CMakePresets.json ./
COPY cmake/ cmake/
COPY common/ common/
COPY operator/ operator/
COPY docker/runtime_payload.sh docker/
# RelWithDebInfo (-O2) as tools/setup.sh builds and the tests run: under Release's -O3,
# GCC 12 raises a false -Wrestrict in std::string's operator+ (GCC bug 105329), an error
# with the project's -Werror. The payload is the binary without its debug info;
# runtime_payload.sh fails if ldd finds a library no Debian package provides.
RUN cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DDDP3D_BUILD_WORKER=OFF -DDDP3D_BUILD_TESTS=OFF \
 && cmake --build build --target ddp3d-operator \
 && bash docker/runtime_payload.sh build/operator/ddp3d-operator /payload

FROM ${BASE_IMAGE} AS runtime-base
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libcpprest2.10 libyaml-cpp0.7 libssl3 libprometheus-cpp-core1.0 \
 && rm -rf /var/lib/apt/lists/*
# Numeric, so that the chart's runAsNonRoot can be verified by the kubelet.
USER 65532:65532
EXPOSE 8080 8081
ENTRYPOINT ["/usr/local/bin/ddp3d-operator"]

# tools/build_images.sh: the binary from a local build (payload/ in its context).
FROM runtime-base AS prebuilt
COPY payload/ /

FROM runtime-base AS runtime
COPY --from=build /payload/ /
