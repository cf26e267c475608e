#include "demi/parallel/rendezvous.hpp"

#include <cstdlib>

#include "demi/common.hpp"

namespace demi {

Rendezvous ParseRendezvous(const std::string& url) {
  const std::string file_scheme = "file://";
  const std::string redis_scheme = "redis://";
  Rendezvous r;
  if (url.compare(0, file_scheme.size(), file_scheme) == 0) {
    r.kind = Rendezvous::kFile;
    r.path = url.substr(file_scheme.size());
    DEMI_CHECK(!r.path.empty(), "gloo rendezvous '", url, "' names no directory; use file:///dir");
    // Ranks started from different working directories would meet nowhere.
    DEMI_CHECK(r.path.front() == '/', "gloo rendezvous '", url, "' names a relative directory '",
               r.path, "'; give an absolute one: file:///absolute/dir (three slashes)");
    return r;
  }
  if (url.compare(0, redis_scheme.size(), redis_scheme) == 0) {
    r.kind = Rendezvous::kRedis;
    std::string rest = url.substr(redis_scheme.size());
    if (!rest.empty() && rest.back() == '/') rest.pop_back();
    const size_t colon = rest.rfind(':');
    r.host = rest.substr(0, colon);
    if (colon != std::string::npos) {
      const std::string port = rest.substr(colon + 1);
      char* end = nullptr;
      const long value = std::strtol(port.c_str(), &end, 10);
      DEMI_CHECK(!port.empty() && *end == '\0' && value > 0 && value < 65536, "gloo rendezvous '",
                 url, "' has a bad port '", port, "'; use redis://host:port");
      r.port = static_cast<int>(value);
    }
    DEMI_CHECK(!r.host.empty(), "gloo rendezvous '", url, "' names no host; use redis://host:port");
    return r;
  }
  ThrowError(
      StrCat("gloo rendezvous '", url, "' is neither file:///shared/dir nor redis://host:port"));
}

}  // namespace demi
