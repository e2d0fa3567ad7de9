# syntax=docker/dockerfile:1
# The ddp3d worker image: the `ddp3d` binary built against LibTorch from PyPI's torch wheel
# (which carries CUDA, cuDNN and NCCL) by the same tools/setup.sh as bare metal, with the
# CUDA/NCCL paths on. Its entry point is the seed's script, so the image runs exactly the
# bare-metal command, and the operator's pods (command `bash tools/dist_train.sh CONFIG GPUS
# ARGS`, run from this WORKDIR) need nothing else:
#   docker build -f docker/worker.Dockerfile -t REGISTRY/ddp3d/worker:0.1.0 .
#   docker run --gpus all -e NNODES=2 -e NODE_RANK=0 -e MASTER_ADDR=10.0.0.1 -e PORT=29500 \
#     REGISTRY/ddp3d/worker:0.1.0 configs/toy/toy_regression_2proc.yaml 8 --work-dir /data/w
# CPU nodes: docker/worker-cpu.Dockerfile (Debian, only the LibTorch libraries the binary
# loads; this image ships the whole wheel, whose CUDA libraries are partly dlopen()ed).
# The bases are build ARGs (a mirror, a pinned digest): BUILD_IMAGE needs nvcc and the
# CUDA headers for the CUDA/NCCL sources (DDP3D_WITH_CUDA=ON), BASE_IMAGE the driver hooks.
ARG CUDA_VERSION=13.0.0
ARG UBUNTU_RELEASE=ubuntu24.04
ARG BUILD_IMAGE=nvidia/cuda:${CUDA_VERSION}-devel-${UBUNTU_RELEASE}
ARG BASE_IMAGE=nvidia/cuda:${CUDA_VERSION}-base-${UBUNTU_RELEASE}

FROM ${BUILD_IMAGE} AS build
# gcc 12: the compiler the project is developed and warning-checked with.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends g++-12 \
 && rm -rf /var/lib/apt/lists/*
ENV CC=gcc-12 CXX=g++-12 \
    DDP3D_CACHE=/opt/ddp3d \
    DDP3D_BUILD_DIR=/src/build \
    DDP3D_TORCH_VERSION=2.15.0 \
    DDP3D_CMAKE_ARGS="-DDDP3D_WITH_CUDA=ON -DDDP3D_BUILD_TESTS=OFF"
WORKDIR /src
COPY . .
# Debian packages, the LibTorch venv (in $DDP3D_CACHE) and the build, as on bare metal.
RUN bash tools/setup.sh

# The runtime needs only the driver libraries the NVIDIA container runtime mounts: CUDA,
# cuDNN, NCCL and libgomp come with the torch wheel in the venv. yaml-cpp is the config
# reader's (worker/config) library, prometheus-cpp's core the metrics' (common/metrics),
# OpenSSL's libcrypto the rendezvous token's HMAC (worker/dist/rendezvous_proof.cpp),
# libpng the pictures' (worker/visual), protobuf's lite runtime the TensorBoard event files'
# (worker/visual/tensorboard_event.proto); *t64 are Ubuntu 24.04's names.
FROM ${BASE_IMAGE}
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libyaml-cpp0.8 libprometheus-cpp-core1.0 libssl3t64 libpng16-16t64 libprotobuf-lite32t64 \
 && rm -rf /var/lib/apt/lists/*
# Same path as in the build stage: the binary's RPATH points into the venv's torch/lib.
COPY --from=build /opt/ddp3d/venv-torch-2.15.0 /opt/ddp3d/venv-torch-2.15.0
COPY --from=build /src/build/worker/ddp3d /usr/local/bin/ddp3d
WORKDIR /workspace/ddp3d
COPY tools/ tools/
COPY configs/ configs/
ENV DDP3D_BIN=/usr/local/bin/ddp3d
# A non-root user, numeric so that the kubelet can verify the runAsNonRoot the operator sets
# on every Restricted pod (docs/security.md). The image's files stay root-owned (read-only to
# the worker); outputs go to the --work-dir volume, HOME to the user's own directory.
RUN useradd --uid 10001 --user-group --create-home --home-dir /home/ddp3d --shell /usr/sbin/nologin ddp3d
ENV HOME=/home/ddp3d
USER 10001:10001
ENTRYPOINT ["bash", "tools/dist_train.sh"]
