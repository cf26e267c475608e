#ifndef DEMI_DATA_DATUM_VIEW_HPP_
#define DEMI_DATA_DATUM_VIEW_HPP_

#include <string_view>

#include "demi/proto/demi.pb.h"

namespace demi {

/// @brief A Datum whose pixel bytes (its `data` field) may lie elsewhere: in
/// place in the record it was parsed from (ParseDatumInPlace), such as an
/// LMDB's memory map, so that decoding reads the database's bytes without
/// copying them. A Datum converts to a view of itself. The accessors are
/// the Datum's; `data()` is the view.
class DatumView {
 public:
  // Implicit, so that every Datum taker takes a view.
  DatumView(const Datum& datum)  // NOLINT(google-explicit-constructor)
      : fields_(&datum), data_(datum.data()) {}
  /// `fields`: every field but data, which is `data`.
  DatumView(const Datum& fields, std::string_view data) : fields_(&fields), data_(data) {}

  int channels() const { return fields_->channels(); }
  int height() const { return fields_->height(); }
  int width() const { return fields_->width(); }
  std::string_view data() const { return data_; }
  int label() const { return fields_->label(); }
  const google::protobuf::RepeatedField<float>& float_data() const { return fields_->float_data(); }
  int float_data_size() const { return fields_->float_data_size(); }
  bool encoded() const { return fields_->encoded(); }

 private:
  const Datum* fields_;
  std::string_view data_;
};

/// Parses a serialized Datum without copying its data field: `*fields` gets
/// every other field, and `*data` views the data field's bytes in
/// `serialized` (so it lives as long as they do). Returns false where
/// `serialized` is not a Datum. A record that repeats the data field (the
/// last one counts) is parsed whole, and `*data` views `fields->data()`.
bool ParseDatumInPlace(std::string_view serialized, Datum* fields, std::string_view* data);

}  // namespace demi

#endif  // DEMI_DATA_DATUM_VIEW_HPP_
