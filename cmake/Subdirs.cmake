# ddp3d_add_subdirs(): add every direct subfolder that carries a CMakeLists.txt, so a new
# module is picked up without editing its parent (and parallel work does not collide there).
#
# With DDP3D_BUILD_WORKER=OFF (the operator image, operator-only development) only the folders
# named in DDP3D_WORKER_FREE_AREAS are added: everything else needs LibTorch.
set(DDP3D_WORKER_FREE_AREAS common kube operator crd chart testbin lint)
# With DDP3D_BUILD_OPERATOR=OFF (a worker-only build, e.g. on a GPU machine without cpprestsdk)
# the folders named here are left out.
set(DDP3D_OPERATOR_AREAS kube operator crd chart testbin)
function(ddp3d_add_subdirs)
  file(GLOB _children LIST_DIRECTORIES true RELATIVE "${CMAKE_CURRENT_SOURCE_DIR}"
       "${CMAKE_CURRENT_SOURCE_DIR}/*")
  list(SORT _children)
  foreach(_child IN LISTS _children)
    if(NOT EXISTS "${CMAKE_CURRENT_SOURCE_DIR}/${_child}/CMakeLists.txt")
      continue()
    endif()
    if(NOT DDP3D_BUILD_WORKER AND NOT _child IN_LIST DDP3D_WORKER_FREE_AREAS)
      continue()
    endif()
    if(NOT DDP3D_BUILD_OPERATOR AND _child IN_LIST DDP3D_OPERATOR_AREAS)
      continue()
    endif()
    add_subdirectory(${_child})
  endforeach()
endfunction()
