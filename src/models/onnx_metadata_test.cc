// A model file's metadata_props: written by ExportOnnxWithMetadata, read
// back by LoadModel and LoadModelMetadata, kept beside other producers'
// entries; a zoo model has none.
#include "onnx/onnx_metadata.h"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "models/load_model.h"
#include "onnx/onnx_file.h"
#include "onnx/onnx_test_util.h"

namespace shoal {
namespace {

using onnx_test::TempDir;

TEST(OnnxMetadata, RoundTripsThroughAFile) {
  TempDir dir;
  LoadOptions lo;
  lo.with_weights = true;
  const Model m = LoadModel("lenet5", lo).value();
  const ModelMetadata md = {{kClassNamesKey, R"(["T-shirt/top","Trouser"])"},
                            {kImageMeanKey, "0"},
                            {kImageStdKey, "1"},
                            {"author", "x"}};
  const std::string path = dir.File("m.onnx");
  ASSERT_TRUE(ExportOnnxWithMetadata(m, md, path).ok());

  ModelMetadata back;
  auto loaded = LoadModel(path, lo, &back);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_EQ(back, md);
  EXPECT_EQ(loaded->weights.size(), m.weights.size());
  auto alone = LoadModelMetadata(path);
  ASSERT_TRUE(alone.ok()) << alone.status().message();
  EXPECT_EQ(*alone, md);

  // The zoo's models say nothing; a missing file is an error naming it.
  back = {{"stale", "entry"}};
  ASSERT_TRUE(LoadModel("lenet5", lo, &back).ok());
  EXPECT_TRUE(back.empty());
  EXPECT_TRUE(LoadModelMetadata("lenet5").value().empty());
  auto missing = LoadModelMetadata(dir.File("none.onnx"));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("none.onnx"), std::string::npos);
}

TEST(OnnxMetadata, WritingReplacesItsKeysAndKeepsTheOthers) {
  onnx::ModelProto proto;
  WriteMetadataProps({{"a", "1"}, {"b", "2"}}, &proto);
  WriteMetadataProps({{"b", "3"}, {"c", "4"}}, &proto);
  EXPECT_EQ(proto.metadata_props_size(), 3);
  const ModelMetadata want = {{"a", "1"}, {"b", "3"}, {"c", "4"}};
  EXPECT_EQ(ReadMetadataProps(proto), want);
}

}  // namespace
}  // namespace shoal
