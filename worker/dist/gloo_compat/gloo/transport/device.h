// ddp3d gloo_compat: see ../../README.md. Devices and buffers are only held by pointer.
#pragma once
namespace gloo::transport {
class Device;
class UnboundBuffer;
}  // namespace gloo::transport
