#ifndef DEMI_DATA_STAGED_LMDB_HPP_
#define DEMI_DATA_STAGED_LMDB_HPP_

#include <memory>
#include <string>

#include "demi/data/db.hpp"

namespace demi {

/// @brief A new LMDB written under a temporary name beside its target
/// (TARGET.tmp.PID) and renamed to TARGET by Publish(), so that a conversion
/// that fails leaves nothing at TARGET and can simply be run again.
///
/// The constructor refuses a TARGET that exists (naming it) and removes the
/// temporaries of earlier conversions to TARGET whose process died. The
/// destructor of an unpublished database removes its temporary.
class StagedLMDB {
 public:
  explicit StagedLMDB(const std::string& target);
  ~StagedLMDB();
  StagedLMDB(const StagedLMDB&) = delete;
  StagedLMDB& operator=(const StagedLMDB&) = delete;

  /// The temporary database to write; its transactions must be gone by Publish().
  LMDB& db() { return *db_; }
  /// Closes the database and renames it to the target.
  void Publish();

  const std::string& target() const { return target_; }
  const std::string& temporary() const { return temporary_; }

 private:
  std::string target_;
  std::string temporary_;
  std::shared_ptr<LMDB> db_;
  bool published_ = false;
};

}  // namespace demi

#endif  // DEMI_DATA_STAGED_LMDB_HPP_
