// A worker's weight blobs, by content hash, in files of a cache directory:
// what makes a redeploy free (and, across restarts of the worker, a reboot
// of the board) without holding a second copy of every weight in memory.
// The engine keeps the only copy in memory, in its own layout; a blob is
// read back one weight at a time while a deployment is built.
//
// A file is trusted only after its content hashed to its name: a file that
// does not (a corrupt disk, a killed write) is removed and reported missing,
// so the coordinator uploads it again. Uploads go to a temporary file that
// is renamed into place once its hash checks, so a reader never sees half a
// blob, and several workers may share one directory.
#ifndef SHOAL_RUNTIME_BLOB_CACHE_H_
#define SHOAL_RUNTIME_BLOB_CACHE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "graph/weights.h"
#include "util/content_hash.h"
#include "util/status.h"

namespace shoal {

class BlobCache {
 public:
  // `dir` is created if missing. Empty: a fresh directory under /tmp,
  // removed with the cache (in-process workers of tests and tools).
  static StatusOr<std::unique_ptr<BlobCache>> Open(const std::string& dir);
  ~BlobCache();

  const std::string& dir() const { return dir_; }

  // Whether the blob is here and its content checks (hashed once per
  // process while the file's size and time stay the same).
  bool Has(const std::string& hash);
  // Its size in bytes, or -1 where it is not here.
  int64_t Size(const std::string& hash);

  // One upload, streamed to disk: Append its bytes in order, then Commit.
  // Destroyed uncommitted, it leaves nothing behind.
  class Writer {
   public:
    ~Writer();
    Status Append(const std::string& bytes);
    // Checks length and hash, then makes the blob visible.
    Status Commit();

   private:
    friend class BlobCache;
    Writer() = default;
    BlobCache* cache_ = nullptr;
    std::string hash_, tmp_;
    int64_t total_ = 0, written_ = 0;
    int fd_ = -1;
    ContentHasher hasher_;
  };
  StatusOr<std::unique_ptr<Writer>> Begin(const std::string& hash,
                                          int64_t total_bytes);

  // The blob as a float32 tensor of `shape`, checking size and hash while
  // reading; a blob that fails is removed. `int8`: the blob holds a signed
  // byte a value (an int8 weight), widened to float32.
  StatusOr<Tensor> Read(const std::string& hash, const Shape& shape,
                        bool int8 = false);

  // Removes blobs not in `keep`, least recently used first, until the
  // directory holds at most `max_bytes` (what `keep` alone takes may be
  // more).
  void Trim(const std::set<std::string>& keep, int64_t max_bytes);

  // A blob name is 32 hex digits: anything else from a peer is refused
  // before it can name a path.
  static bool ValidHash(const std::string& hash);

 private:
  BlobCache() = default;
  std::string Path(const std::string& hash) const;
  void Forget(const std::string& hash);
  void Touch(const std::string& hash);  // marks it used now

  std::string dir_;
  bool owned_ = false;  // a temporary directory of ours
  std::mutex mu_;
  // Files that hashed right: size and modification time when they did.
  std::map<std::string, std::pair<int64_t, int64_t>> verified_;
};

}  // namespace shoal

#endif  // SHOAL_RUNTIME_BLOB_CACHE_H_
