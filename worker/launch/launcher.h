#pragma once
namespace ddp3d::launch {
int run_launch(int argc, char** argv);
}
