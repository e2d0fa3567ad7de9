// Exists so that ddp3d_torch_pch has a source to compile its precompiled header with.
namespace ddp3d::pch {
int anchor() {
  return 0;
}
}  // namespace ddp3d::pch
