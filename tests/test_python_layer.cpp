// A "Python" layer in a program without Python layers fails with an error
// saying why and what to do. test_all never embeds Python: on a build with
// Python layers (WITH_PYTHON_LAYER) it says the program lacks the
// interpreter; on one without, that the build lacks them and how to enable
// them. tests/python/test_python_layer.py runs the layers themselves.
#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <string>

#include "demi/layer_registry.hpp"

namespace demi {
namespace {

LayerParameter PythonLayerParam() {
  LayerParameter param;
  CHECK(google::protobuf::TextFormat::ParseFromString(
      "name: 'py' type: 'Python' python_param { module: 'm' layer: 'L' }", &param));
  return param;
}

std::string CreateError() {
  try {
    LayerRegistry::Create(PythonLayerParam());
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

TEST(PythonLayerBuildTest, WithoutPythonLayersTheErrorSaysHowToEnableThem) {
#ifdef WITH_PYTHON_LAYER
  GTEST_SKIP() << "this build has Python layers (WITH_PYTHON_LAYER=1)";
#else
  const std::string message = CreateError();
  EXPECT_NE(message.find("layer 'py' has type 'Python'"), std::string::npos) << message;
  EXPECT_NE(message.find("this build lacks Python layers"), std::string::npos) << message;
  EXPECT_NE(message.find("WITH_PYTHON_LAYER=1"), std::string::npos) << message;
#endif
}

TEST(PythonLayerBuildTest, WithPythonLayersAProgramWithoutPythonSaysSo) {
#ifndef WITH_PYTHON_LAYER
  GTEST_SKIP() << "this build lacks Python layers (WITH_PYTHON_LAYER=0)";
#else
  const std::string message = CreateError();
  EXPECT_NE(message.find("layer 'py' has type 'Python'"), std::string::npos) << message;
  EXPECT_NE(message.find("does not embed Python"), std::string::npos) << message;
#endif
}

}  // namespace
}  // namespace demi
