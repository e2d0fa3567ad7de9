# ddp3d_warnings: the project's warning set; every ddp3d target links it.
add_library(ddp3d_warnings INTERFACE)
target_compile_options(ddp3d_warnings INTERFACE -Wall -Wextra -Wpedantic -Wno-unused-parameter)
if(DDP3D_WARNINGS_AS_ERRORS)
  target_compile_options(ddp3d_warnings INTERFACE -Werror)
endif()
