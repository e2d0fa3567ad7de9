#include "worker/engine/train_loop_schemas.h"

#include <string>
#include <utility>

#include "worker/config/cross_check.h"
#include "worker/config/schema.h"

namespace ddp3d::engine {
namespace {

using S = config::Schema;

// by_epoch, when given, spells the same loop as `type` (mmengine reads either).
config::ComponentCheck by_epoch_is(bool by_epoch) {
  return [by_epoch](config::CrossCheck& check, const std::string& key) {
    const std::string at = key + ".by_epoch";
    const config::Value* given = check.at(at);
    if (given == nullptr || given->is_null() || given->as_bool() == by_epoch) return;
    check.report(check.origin(at), at,
                 "contradicts " + key + ".type (" + check.at(key + ".type")->describe() +
                     "); by_epoch is the older spelling of the loop's type, leave it out");
  };
}

}  // namespace

std::vector<config::Field> train_loop_fields(std::vector<config::Field> own) {
  std::vector<config::Field> fields = {
      {"by_epoch", S::boolean().def_null().doc(
                       "mmengine's older spelling of the loop's type (false: IterBasedTrainLoop); "
                       "given with a type, it must agree with it")},
      {"val_interval", S::integer().min(1).def(1).doc(
                           "validate every N epochs (IterBasedTrainLoop: iterations) and at the "
                           "end")},
      {"val_begin",
       S::integer().min(1).def(1).doc("the first epoch (iteration) that may validate")},
  };
  for (config::Field& f : own) fields.push_back(std::move(f));
  return fields;
}

void register_train_loop_schemas(config::ComponentSchemas& schemas) {
  schemas.add(
      "train_loop", "EpochBasedTrainLoop",
      train_loop_fields({{"max_epochs", S::integer().min(1).required().doc("epochs to train")}}),
      by_epoch_is(true));
  schemas.add("train_loop", "IterBasedTrainLoop",
              train_loop_fields({{"max_iters", S::integer().min(1).required().doc(
                                                   "iterations to train, passing over the data "
                                                   "as often as it takes")}}),
              by_epoch_is(false));
}

}  // namespace ddp3d::engine
