// Writes a solver prototxt in the current format (the legacy solver_type enum
// becomes the `type` string), as it is upgraded at load.
//   build/tools/upgrade_solver_proto_text OLD.prototxt NEW.prototxt
#include "demi/solver_param.hpp"
#include "demi/util/cli.hpp"
#include "demi/util/io.hpp"

int main(int argc, char** argv) {
  return demi::RunToolWithArgs(
      argc, argv, "Upgrade a solver prototxt.\nUsage: upgrade_solver_proto_text OLD NEW",
      [](const std::vector<std::string>& args) {
        DEMI_CHECK(args.size() == 2, "usage: upgrade_solver_proto_text OLD.prototxt NEW.prototxt");
        demi::SolverParameter param;
        demi::ReadProtoFromTextFile(args[0], &param);
        if (!demi::UpgradeSolverAsNeeded(args[0], &param)) {
          LOG(INFO) << args[0] << " is already in the current format";
        }
        demi::WriteProtoToTextFile(param, args[1]);
        LOG(INFO) << "Wrote " << args[1];
        return 0;
      });
}
