# syntax=docker/dockerfile:1
# The ddp3d-operator image: built in a full Debian toolchain stage, shipped on a slim
# runtime with only the shared libraries the binary needs (libcpprest, libyaml-cpp, prometheus-cpp, OpenSSL).
#   docker build -f docker/operator.Dockerfile -t ghcr.io/ddp3d/ddp3d-operator:0.1.0 .
# The chart (charts/ddp3d) runs it with --leader-elect --metrics-address=:8080
# --health-address=:8081 [--namespace=...], as a non-root user on a read-only root.
# Base: the Debian release the project is built and tested on (bookworm); the runtime
# package names below are that release's. tests/e2e/docker/dockerfiles_test.py checks them against the
# built binary's shared libraries.
ARG DEBIAN_RELEASE=bookworm

FROM debian:${DEBIAN_RELEASE} AS build
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
RUN cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DDDP3D_BUILD_WORKER=OFF -DDDP3D_BUILD_TESTS=OFF \
 && cmake --build build --target ddp3d-operator \
 && strip build/operator/ddp3d-operator

FROM debian:${DEBIAN_RELEASE}-slim
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libcpprest2.10 libyaml-cpp0.7 libssl3 libprometheus-cpp-core1.0 \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/build/operator/ddp3d-operator /usr/local/bin/ddp3d-operator
# Numeric, so that the chart's runAsNonRoot can be verified by the kubelet.
USER 65532:65532
EXPOSE 8080 8081
ENTRYPOINT ["/usr/local/bin/ddp3d-operator"]
