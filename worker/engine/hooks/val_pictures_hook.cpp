#include "worker/engine/hooks/val_pictures_hook.h"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

namespace ddp3d::engine {

ValPicturesHook::ValPicturesHook(TrainLog& log, DrawOptions draw)
    : log_(log), draw_(std::move(draw)) {}

void ValPicturesHook::before_train(LoopContext& loop) {
  loop.draw_validation(draw_);
}

void ValPicturesHook::after_val(LoopContext& loop, const ValResult& /*result*/) {
  // Rank 0 drew them and only its log writes; the other ranks share its work dir on one
  // machine, and removing the folder there would race rank 0 reading it.
  if (!log_.enabled()) return;
  std::error_code ec;
  std::vector<std::filesystem::path> pictures;
  for (std::filesystem::directory_iterator it(draw_.dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    if (it->path().extension() == ".png") pictures.push_back(it->path());
  }
  std::sort(pictures.begin(), pictures.end());
  for (const std::filesystem::path& path : pictures) {
    std::ifstream in(path, std::ios::binary);
    const std::string png((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in.bad() && !png.empty()) {
      log_.image("val/bev/" + path.stem().string(), loop.progress().global_iter, png);
    }
  }
  std::filesystem::remove_all(draw_.dir, ec);
}

}  // namespace ddp3d::engine
