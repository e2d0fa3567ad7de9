# Finds LibTorch from the PyPI `torch` wheel installed by tools/setup.sh and defines
# `ddp3d::torch`.
#
# PyPI's x86-64 wheel is a CUDA build. Its TorchConfig.cmake refuses to configure without a
# CUDA toolkit, so on machines without one we define the target from the wheel's include and
# lib folders ourselves and link only the CPU libraries (libtorch_cpu, libc10): ranks start
# faster and never map the 500 MB libtorch_cuda. With DDP3D_WITH_CUDA=ON (a toolkit found),
# the stock find_package(Torch) is used and the CUDA/NCCL sources are compiled.

if(NOT DDP3D_TORCH_DIR)
  if(NOT DDP3D_PYTHON)
    message(FATAL_ERROR "Set DDP3D_PYTHON (the venv's python) or DDP3D_TORCH_DIR; "
                        "tools/setup.sh does this for you.")
  endif()
  execute_process(
    COMMAND "${DDP3D_PYTHON}" -c
            "import importlib.util, os; print(os.path.dirname(importlib.util.find_spec('torch').origin))"
    OUTPUT_VARIABLE DDP3D_TORCH_DIR OUTPUT_STRIP_TRAILING_WHITESPACE
    RESULT_VARIABLE _torch_rc)
  if(NOT _torch_rc EQUAL 0 OR NOT EXISTS "${DDP3D_TORCH_DIR}/lib/libtorch_cpu.so")
    message(FATAL_ERROR "LibTorch not found through ${DDP3D_PYTHON}: run tools/setup.sh")
  endif()
endif()
set(DDP3D_TORCH_DIR "${DDP3D_TORCH_DIR}" CACHE PATH "torch package folder (include/, lib/)")

file(STRINGS "${DDP3D_TORCH_DIR}/version.py" _torch_version_line REGEX "^__version__")
string(REGEX REPLACE ".*'([^']+)'.*" "\\1" DDP3D_TORCH_VERSION "${_torch_version_line}")
message(STATUS "ddp3d: LibTorch ${DDP3D_TORCH_VERSION} at ${DDP3D_TORCH_DIR}")

add_library(ddp3d_torch INTERFACE)
add_library(ddp3d::torch ALIAS ddp3d_torch)

if(DDP3D_WITH_CUDA)
  list(APPEND CMAKE_PREFIX_PATH "${DDP3D_TORCH_DIR}/share/cmake")
  find_package(Torch REQUIRED)
  target_link_libraries(ddp3d_torch INTERFACE ${TORCH_LIBRARIES})
  target_compile_definitions(ddp3d_torch INTERFACE DDP3D_WITH_CUDA=1 USE_C10D_NCCL)
else()
  target_include_directories(ddp3d_torch SYSTEM INTERFACE
    "${DDP3D_TORCH_DIR}/include"
    "${DDP3D_TORCH_DIR}/include/torch/csrc/api/include")
  target_link_libraries(ddp3d_torch INTERFACE
    "${DDP3D_TORCH_DIR}/lib/libtorch_cpu.so"
    "${DDP3D_TORCH_DIR}/lib/libc10.so")
  target_compile_definitions(ddp3d_torch INTERFACE _GLIBCXX_USE_CXX11_ABI=1)
endif()
# c10d's Gloo backend lives in libtorch_cpu; the wheel ships no gloo headers, see gloo_compat/.
target_compile_definitions(ddp3d_torch INTERFACE USE_C10D_GLOO USE_DISTRIBUTED)
target_link_options(ddp3d_torch INTERFACE "LINKER:-rpath,${DDP3D_TORCH_DIR}/lib")
