// ddp3d gloo_compat: see README.md in the folder above. Nothing from here is needed by the
// declarations ProcessGroupGloo.hpp makes visible to us.
#pragma once
