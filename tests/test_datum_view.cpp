#include <gtest/gtest.h>

#include <random>
#include <string>

#include "demi/data/datum_view.hpp"

namespace demi {
namespace {

/// The Datum ParseFromString gives, less its data field.
Datum WithoutData(const std::string& serialized) {
  Datum datum;
  EXPECT_TRUE(datum.ParseFromString(serialized));
  datum.clear_data();
  return datum;
}

bool ViewsInto(std::string_view view, const std::string& buffer) {
  return view.data() >= buffer.data() && view.data() + view.size() <= buffer.data() + buffer.size();
}

TEST(DatumViewTest, AnEncodedRecordsDataStaysInPlace) {
  Datum datum;
  datum.set_data(std::string(5000, '\xd8'));
  datum.set_label(7);
  datum.set_encoded(true);
  const std::string serialized = datum.SerializeAsString();
  Datum fields;
  std::string_view data;
  ASSERT_TRUE(ParseDatumInPlace(serialized, &fields, &data));
  EXPECT_EQ(data, datum.data());
  EXPECT_TRUE(ViewsInto(data, serialized));  // not a copy
  EXPECT_TRUE(fields.data().empty());
  EXPECT_EQ(fields.label(), 7);
  EXPECT_TRUE(fields.encoded());
  const DatumView view(fields, data);
  EXPECT_EQ(view.data(), datum.data());
  EXPECT_EQ(view.label(), 7);
}

TEST(DatumViewTest, EveryOtherFieldParsesAsProtobufParsesIt) {
  std::mt19937 engine(3);
  for (int trial = 0; trial < 200; ++trial) {
    Datum datum;
    if (engine() % 2) datum.set_channels(static_cast<int>(engine() % 5));
    if (engine() % 2) datum.set_height(static_cast<int>(engine() % 300));
    if (engine() % 2) datum.set_width(static_cast<int>(engine() % 300));
    if (engine() % 3) datum.set_data(std::string(engine() % 700, static_cast<char>(engine())));
    if (engine() % 2)
      datum.set_label(static_cast<int>(engine()) - 1000);  // negative: 10-byte varint
    for (int i = static_cast<int>(engine() % 4); i > 0; --i) datum.add_float_data(0.5f * i);
    if (engine() % 2) datum.set_encoded(engine() % 2 == 1);
    const std::string serialized = datum.SerializeAsString();
    Datum fields;
    std::string_view data = "stale";
    ASSERT_TRUE(ParseDatumInPlace(serialized, &fields, &data)) << trial;
    EXPECT_EQ(data, datum.data()) << trial;
    EXPECT_EQ(fields.SerializeAsString(), WithoutData(serialized).SerializeAsString()) << trial;
  }
}

TEST(DatumViewTest, FieldsOutOfOrderAndUnknownFieldsParse) {
  // label, data, channels, an unknown varint field 20, then encoded.
  Datum label, data, channels, encoded;
  label.set_label(3);
  data.set_data("pixels");
  channels.set_channels(1);
  encoded.set_encoded(true);
  const std::string serialized = label.SerializeAsString() + data.SerializeAsString() +
                                 channels.SerializeAsString() + std::string("\xa0\x01\x05", 3) +
                                 encoded.SerializeAsString();
  Datum fields;
  std::string_view view;
  ASSERT_TRUE(ParseDatumInPlace(serialized, &fields, &view));
  EXPECT_EQ(view, "pixels");
  EXPECT_TRUE(ViewsInto(view, serialized));
  EXPECT_EQ(fields.label(), 3);
  EXPECT_EQ(fields.channels(), 1);
  EXPECT_TRUE(fields.encoded());
}

TEST(DatumViewTest, ARepeatedDataFieldKeepsTheLastAsProtobufDoes) {
  Datum first, second;
  first.set_data("first");
  first.set_label(1);
  second.set_data("second");
  const std::string serialized = first.SerializeAsString() + second.SerializeAsString();
  Datum fields;
  std::string_view data;
  ASSERT_TRUE(ParseDatumInPlace(serialized, &fields, &data));
  EXPECT_EQ(data, "second");
  EXPECT_EQ(fields.label(), 1);
}

TEST(DatumViewTest, BytesThatAreNoDatumAreRefused) {
  Datum datum;
  datum.set_data(std::string(100, 'x'));
  datum.set_label(2);
  const std::string serialized = datum.SerializeAsString();
  Datum fields;
  std::string_view data;
  // Cut inside the data field, inside a varint, and at a lone tag.
  EXPECT_FALSE(ParseDatumInPlace(std::string_view(serialized).substr(0, 50), &fields, &data));
  EXPECT_FALSE(ParseDatumInPlace(std::string_view(serialized).substr(0, serialized.size() - 1),
                                 &fields, &data));
  EXPECT_FALSE(ParseDatumInPlace(std::string("\x08\xff", 2), &fields, &data));
  EXPECT_FALSE(ParseDatumInPlace(std::string("\x0b\x0c", 2), &fields, &data));  // a group
  EXPECT_FALSE(ParseDatumInPlace("not a datum at all", &fields, &data));
  // The empty record is an empty Datum, as protobuf parses it.
  EXPECT_TRUE(ParseDatumInPlace("", &fields, &data));
  EXPECT_TRUE(data.empty());
}

}  // namespace
}  // namespace demi
