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
  # The toolkit root: tools/cuda_toolkit.sh assembles one from PyPI wheels and prints it.
  # TorchConfig uses both FindCUDA (CUDA_TOOLKIT_ROOT_DIR) and FindCUDAToolkit
  # (CUDAToolkit_ROOT), and enables the CUDA language itself, so everything is set first.
  set(DDP3D_CUDA_ROOT "$ENV{CUDAToolkit_ROOT}" CACHE PATH
      "CUDA toolkit root (bin/nvcc, include/, lib/); tools/cuda_toolkit.sh prints one")
  if(DDP3D_CUDA_ROOT)
    if(NOT EXISTS "${DDP3D_CUDA_ROOT}/bin/nvcc")
      message(FATAL_ERROR "DDP3D_CUDA_ROOT=${DDP3D_CUDA_ROOT} has no bin/nvcc: "
                          "run tools/cuda_toolkit.sh and pass the folder it prints")
    endif()
    set(CUDAToolkit_ROOT "${DDP3D_CUDA_ROOT}")
    set(CUDA_TOOLKIT_ROOT_DIR "${DDP3D_CUDA_ROOT}" CACHE PATH "")
    set(CMAKE_CUDA_COMPILER "${DDP3D_CUDA_ROOT}/bin/nvcc" CACHE FILEPATH "")
  endif()
  # CMake's CUDA_ARCHITECTURES syntax: "NN-real" is SASS (a cubin) for sm_NN only, a plain
  # "NN" is SASS plus PTX for compute_NN, "NN-virtual" is PTX only. The default: cubins for the
  # A100 (80), A10G/A40 (86), L4/L40S (89) and H100/H200 (90), and compute_90 PTX that the
  # driver JIT-compiles on GPUs newer than all of these. CUDA 13 has nothing below sm_75.
  # tests/build/cuda_architectures.sh checks that the kernels' objects carry exactly this.
  set(DDP3D_CUDA_ARCHITECTURES "80-real;86-real;89-real;90" CACHE STRING
      "CUDA architectures for ddp3d's kernels (CMake CUDA_ARCHITECTURES syntax)")
  set(CMAKE_CUDA_ARCHITECTURES ${DDP3D_CUDA_ARCHITECTURES})
  if(NOT DEFINED TORCH_CUDA_ARCH_LIST AND NOT DEFINED ENV{TORCH_CUDA_ARCH_LIST})
    # TorchConfig otherwise probes for a GPU to pick its -gencode flags; give it the same list
    # in its own syntax: "8.0" is SASS only, "9.0+PTX" adds PTX, arch suffixes stay ("9.0a").
    # It has no PTX-only form, so "NN-virtual" becomes "N.N+PTX" (a superset); its flags are
    # dropped after find_package below, so only CMAKE_CUDA_ARCHITECTURES reaches nvcc.
    set(TORCH_CUDA_ARCH_LIST "")
    foreach(_arch IN LISTS DDP3D_CUDA_ARCHITECTURES)
      if(_arch MATCHES "^([0-9]+)([0-9])([af]?)(-real|-virtual)?$")
        set(_torch_arch "${CMAKE_MATCH_1}.${CMAKE_MATCH_2}${CMAKE_MATCH_3}")
        if(NOT CMAKE_MATCH_4 STREQUAL "-real")
          string(APPEND _torch_arch "+PTX")
        endif()
      elseif(_arch STREQUAL "native")
        set(_torch_arch "Auto")
      elseif(_arch STREQUAL "all" OR _arch STREQUAL "all-major")
        set(_torch_arch "All")
      else()
        message(FATAL_ERROR "DDP3D_CUDA_ARCHITECTURES: cannot read '${_arch}' "
                            "(expected e.g. 90, 90-real, 90-virtual, 90a, native, all)")
      endif()
      list(APPEND TORCH_CUDA_ARCH_LIST "${_torch_arch}")
    endforeach()
    message(STATUS "ddp3d: CUDA architectures ${DDP3D_CUDA_ARCHITECTURES} "
                   "(TORCH_CUDA_ARCH_LIST ${TORCH_CUDA_ARCH_LIST})")
  endif()
  list(APPEND CMAKE_PREFIX_PATH "${DDP3D_TORCH_DIR}/share/cmake")
  find_package(Torch REQUIRED)
  # TorchConfig sets CMAKE_CUDA_ARCHITECTURES to OFF and appends its own "-gencode" flags for
  # TORCH_CUDA_ARCH_LIST to CMAKE_CUDA_FLAGS. Our kernels are built by CMake's CUDA language:
  # restore the architectures and drop torch's flags, so that DDP3D_CUDA_ARCHITECTURES alone
  # decides what nvcc emits (no extra SASS for "-virtual" entries or a TORCH_CUDA_ARCH_LIST in
  # the environment).
  set(CMAKE_CUDA_ARCHITECTURES ${DDP3D_CUDA_ARCHITECTURES})
  string(REGEX REPLACE " -gencode arch=compute_[0-9]+[af]?,code=(sm|compute)_[0-9]+[af]?" ""
         CMAKE_CUDA_FLAGS "${CMAKE_CUDA_FLAGS}")
  # LibTorch 2.x needs C++20 (the torch target carries cxx_std_20, which also applies to CUDA
  # TUs); CMake 3.25 does not know nvcc's flag for it although nvcc >= 12 has one.
  if(NOT CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
    set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
    set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
  endif()
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
