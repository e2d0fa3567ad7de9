# syntax=docker/dockerfile:1
# The ddp3d worker image for CPU nodes (Gloo and the shared-memory all-reduce): the `ddp3d`
# binary tools/setup.sh builds on Debian, on a Debian runtime with only the LibTorch libraries
# it loads. A separate file from worker.Dockerfile (CUDA, Ubuntu): the two bases name their
# runtime packages differently (libyaml-cpp0.7/libssl3 here, 0.8/libssl3t64 there), and the
# CUDA image ships the whole torch wheel, whose CUDA libraries are partly dlopen()ed. The
# `prebuilt-cuda` stage is that CUDA image on this Debian runtime, from a CUDA build made
# here (tools/build_images.sh --cuda): no NVIDIA base image needed.
#
# From source (the default, last stage):
#   docker build -f docker/worker-cpu.Dockerfile -t REGISTRY/ddp3d/worker:0.1.0-cpu .
# From binaries already built by tools/setup.sh (what tools/build_images.sh does, with
# buildah): `--target prebuilt` on a context holding payload/ (docker/runtime_payload.sh's
# output), tools/ and configs/; the build stage is then skipped (by BuildKit, buildah and podman;
# the legacy builder runs every stage before the target, and needs payload/ even without one).
#
# The pods' command is `bash tools/dist_train.sh CONFIG GPUS ARGS` from the WORKDIR (GPUS 0
# = one CPU process):
#   docker run --rm REGISTRY/ddp3d/worker:0.1.0-cpu configs/toy/toy_regression_2proc.yaml 2 \
#     --work-dir /tmp/w
ARG BUILD_IMAGE=debian:bookworm
ARG BASE_IMAGE=debian:bookworm-slim

FROM ${BUILD_IMAGE} AS build
ENV DDP3D_CACHE=/opt/ddp3d \
    DDP3D_BUILD_DIR=/src/build \
    DDP3D_TORCH_VERSION=2.15.0 \
    DDP3D_CMAKE_ARGS="-DDDP3D_BUILD_TESTS=OFF"
WORKDIR /src
COPY . .
# Debian packages, the LibTorch venv and the build, as on bare metal; then the binary and
# the wheel's libraries it loads (not the other 5 GB of the wheel) into /payload.
RUN bash tools/setup.sh \
 && bash docker/runtime_payload.sh /src/build/worker/ddp3d /payload

# yaml-cpp is the config reader's (worker/config) library, prometheus-cpp's core the
# metrics' (common/metrics), OpenSSL's libcrypto the rendezvous token's HMAC
# (worker/dist/rendezvous_proof.cpp), libpng the pictures' (worker/visual), protobuf's lite
# runtime the TensorBoard event files' (worker/visual/tensorboard_event.proto).
# tests/e2e/docker/dockerfiles_test.py checks these against the binary's shared libraries.
FROM ${BASE_IMAGE} AS runtime-base
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libyaml-cpp0.7 libprometheus-cpp-core1.0 libssl3 libpng16-16 libprotobuf-lite32 \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /workspace/ddp3d
COPY tools/ tools/
COPY configs/ configs/
# LD_LIBRARY_PATH: where runtime_payload.sh puts LibTorch's libraries (the binary's RUNPATH
# names the builder's venv).
ENV DDP3D_BIN=/usr/local/bin/ddp3d \
    LD_LIBRARY_PATH=/opt/ddp3d/lib
# A non-root user, numeric so that the kubelet can verify the runAsNonRoot the operator sets
# on every Restricted pod (docs/security.md). The image's files stay root-owned (read-only to
# the worker); outputs go to the --work-dir volume, HOME to the user's own directory.
RUN useradd --uid 10001 --user-group --create-home --home-dir /home/ddp3d --shell /usr/sbin/nologin ddp3d
ENV HOME=/home/ddp3d
USER 10001:10001
ENTRYPOINT ["bash", "tools/dist_train.sh"]

# tools/build_images.sh: the binary and libraries from a local build (payload/ in its context).
FROM runtime-base AS prebuilt
COPY payload/ /

# tools/build_images.sh --cuda: the same runtime with a CUDA build's binary
# (DDP3D_WITH_CUDA=ON) and every library of the torch and nvidia-* wheels
# (runtime_payload.sh --whole-wheel). The driver's libcuda is not in it: the NVIDIA container
# runtime (the device plugin's pods, `docker run --gpus`) mounts it, for the capabilities
# named here (its default is `utility` alone, without CUDA).
FROM runtime-base AS prebuilt-cuda
ENV NVIDIA_DRIVER_CAPABILITIES=compute,utility
COPY payload/ /

FROM runtime-base AS runtime
COPY --from=build /payload/ /
