// Writes a net prototxt in the current format: V1 `layers`, top-level
// inputs and old data-layer fields upgraded, as they are at load.
//   build/tools/upgrade_net_proto_text OLD.prototxt NEW.prototxt
#include "demi/util/cli.hpp"
#include "demi/util/io.hpp"
#include "demi/util/upgrade_proto.hpp"

int main(int argc, char** argv) {
  return demi::RunToolWithArgs(
      argc, argv, "Upgrade a net prototxt.\nUsage: upgrade_net_proto_text OLD NEW",
      [](const std::vector<std::string>& args) {
        DEMI_CHECK(args.size() == 2, "usage: upgrade_net_proto_text OLD.prototxt NEW.prototxt");
        demi::NetParameter param;
        demi::ReadProtoFromTextFile(args[0], &param);
        if (!demi::UpgradeNetAsNeeded(args[0], &param)) {
          LOG(INFO) << args[0] << " is already in the current format";
        }
        demi::WriteProtoToTextFile(param, args[1]);
        LOG(INFO) << "Wrote " << args[1];
        return 0;
      });
}
