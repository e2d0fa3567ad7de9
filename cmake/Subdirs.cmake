# ddp3d_add_subdirs(): add every direct subfolder that carries a CMakeLists.txt, so a new
# module is picked up without editing its parent (and parallel work does not collide there).
function(ddp3d_add_subdirs)
  file(GLOB _children LIST_DIRECTORIES true RELATIVE "${CMAKE_CURRENT_SOURCE_DIR}"
       "${CMAKE_CURRENT_SOURCE_DIR}/*")
  list(SORT _children)
  foreach(_child IN LISTS _children)
    if(EXISTS "${CMAKE_CURRENT_SOURCE_DIR}/${_child}/CMakeLists.txt")
      add_subdirectory(${_child})
    endif()
  endforeach()
endfunction()
