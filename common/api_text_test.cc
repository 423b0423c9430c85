#include "common/api_text.h"

#include "gtest/gtest.h"

namespace fleetbench {
namespace {

TEST(ApiTextTest, LabelsAreSortedByKey) {
  google::protobuf::Map<std::string, std::string> labels;
  labels["region"] = "eu";
  labels["provider"] = "acme";
  labels["instance_type"] = "c6";
  EXPECT_EQ(LabelsText(labels), "instance_type=c6,provider=acme,region=eu");
  EXPECT_EQ(LabelsText({}), "");
}

TEST(ApiTextTest, OnlyTheParametersThatSayWhatWasMeasuredInTheirOrder) {
  google::protobuf::Map<std::string, std::string> params;
  params["streams"] = "4";
  params["p10"] = "1.5";
  params["dtype"] = "fp32";
  params["peer_node"] = "n1";
  EXPECT_EQ(MeasuredParamsText(params), "dtype=fp32 peer_node=n1 streams=4");
}

}  // namespace
}  // namespace fleetbench
