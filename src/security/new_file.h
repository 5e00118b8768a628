// Writing a file that must not replace one: a CA's or a device's key, a
// certificate `revoke` finds by name. A repeated command fails naming the
// file instead of losing what was there.
#ifndef SHOAL_SECURITY_NEW_FILE_H_
#define SHOAL_SECURITY_NEW_FILE_H_

#include <sys/types.h>

#include <string>

#include "util/status.h"

namespace shoal {

// Creates `path` with exactly `mode` (whatever the umask) and writes
// `text`; refuses when it exists (O_EXCL). A failed write leaves no file.
Status WriteNewFile(const std::string& path, const std::string& text,
                    mode_t mode);

}  // namespace shoal

#endif  // SHOAL_SECURITY_NEW_FILE_H_
