#ifndef DEMI_PARALLEL_RENDEZVOUS_HPP_
#define DEMI_PARALLEL_RENDEZVOUS_HPP_

#include <string>

namespace demi {

/// Where Gloo ranks meet, as parsed from --rendezvous.
struct Rendezvous {
  enum Kind { kFile, kRedis } kind = kFile;
  std::string path;  ///< kFile: the shared directory
  std::string host;  ///< kRedis
  int port = 6379;   ///< kRedis
};

/// Parses "file:///absolute/dir" or "redis://host[:port][/]". A pure function
/// of the text (the fuzz target calls it): anything else throws Error naming
/// the value and the accepted forms.
Rendezvous ParseRendezvous(const std::string& url);

}  // namespace demi

#endif  // DEMI_PARALLEL_RENDEZVOUS_HPP_
