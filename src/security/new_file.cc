#include "security/new_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace shoal {

Status WriteNewFile(const std::string& path, const std::string& text,
                    mode_t mode) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, mode);
  if (fd < 0) {
    if (errno == EEXIST) {
      return FailedPrecondition(path +
                                " exists already: remove it to make a new one");
    }
    return Unavailable("cannot create " + path + ": " + std::strerror(errno));
  }
  // The umask may have dropped bits, never added: set exactly.
  bool ok = fchmod(fd, mode) == 0;
  size_t done = 0;
  while (ok && done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    ok = n > 0;
    if (ok) done += static_cast<size_t>(n);
  }
  const int err = errno;
  ok = close(fd) == 0 && ok;
  if (!ok) {
    unlink(path.c_str());
    return Unavailable("cannot write " + path + ": " + std::strerror(err));
  }
  return Status::Ok();
}

}  // namespace shoal
