#include "runtime/blob_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

namespace shoal {

namespace {

namespace fs = std::filesystem;

std::string Errno(const std::string& what) {
  return what + ": " + std::strerror(errno);
}

// Size and modification time (ns) of a file, or {-1, 0}.
std::pair<int64_t, int64_t> Stamp(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return {-1, 0};
  return {st.st_size,
          int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec};
}

// Reads the whole file into `dst` (n bytes) while hashing it (`hash` null:
// without).
Status ReadHashed(const std::string& path, char* dst, int64_t n,
                  std::string* hash) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return NotFound(Errno("cannot open " + path));
  ContentHasher h;
  std::vector<char> buf(dst == nullptr ? (4 << 20) : 0);
  int64_t done = 0;
  while (true) {
    char* at = dst != nullptr ? dst + done : buf.data();
    const int64_t want = dst != nullptr ? std::min<int64_t>(n - done, 64 << 20)
                                        : static_cast<int64_t>(buf.size());
    if (dst != nullptr && want == 0) break;
    const ssize_t got = read(fd, at, want);
    if (got < 0) {
      if (errno == EINTR) continue;
      Status s = Unavailable(Errno("cannot read " + path));
      close(fd);
      return s;
    }
    if (got == 0) break;
    if (hash != nullptr) h.Add(at, got);
    done += got;
  }
  close(fd);
  if (dst != nullptr && done != n) {
    return Internal(path + " has " + std::to_string(done) + " bytes, not " +
                    std::to_string(n));
  }
  if (hash != nullptr) *hash = h.Hex();
  return Status::Ok();
}

}  // namespace

bool BlobCache::ValidHash(const std::string& hash) {
  return hash.size() == 32 && std::all_of(hash.begin(), hash.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

StatusOr<std::unique_ptr<BlobCache>> BlobCache::Open(const std::string& dir) {
  std::unique_ptr<BlobCache> c(new BlobCache());
  if (dir.empty()) {
    char tmpl[] = "/tmp/shoal-blobs-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) {
      return Unavailable(Errno("cannot make a blob cache under /tmp"));
    }
    c->dir_ = tmpl;
    c->owned_ = true;
    return c;
  }
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir)) {
    return Unavailable("cannot use " + dir + " as the weight cache: " +
                       (ec ? ec.message() : "not a directory"));
  }
  // A cache it cannot write (a read-only mount, a full disk) is refused
  // now, not at the first deploy, which would fail uploading its weights.
  const std::string probe = dir + "/.part-probe-" + std::to_string(getpid());
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  const bool wrote = fd >= 0 && ::write(fd, "x", 1) == 1;
  const std::string why = std::strerror(errno);
  if (fd >= 0) ::close(fd);
  fs::remove(probe, ec);
  if (!wrote) {
    return Unavailable("cannot write to the weight cache " + dir + ": " + why);
  }
  c->dir_ = dir;
  // Temporary files of uploads a killed worker left.
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.path().filename().string().rfind(".part-", 0) == 0) {
      fs::remove(e.path(), ec);
    }
  }
  return c;
}

BlobCache::~BlobCache() {
  if (owned_) {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
}

std::string BlobCache::Path(const std::string& hash) const {
  return dir_ + "/" + hash;
}

void BlobCache::Touch(const std::string& hash) {
  const timespec times[2] = {{0, UTIME_NOW}, {0, UTIME_OMIT}};
  utimensat(AT_FDCWD, Path(hash).c_str(), times, 0);
}

void BlobCache::Forget(const std::string& hash) {
  verified_.erase(hash);
  std::remove(Path(hash).c_str());
}

bool BlobCache::Has(const std::string& hash) {
  if (!ValidHash(hash)) return false;
  std::lock_guard<std::mutex> lock(mu_);
  const auto stamp = Stamp(Path(hash));
  if (stamp.first < 0) {
    verified_.erase(hash);
    return false;
  }
  Touch(hash);
  auto it = verified_.find(hash);
  if (it != verified_.end() && it->second == stamp) return true;
  std::string got;
  if (!ReadHashed(Path(hash), nullptr, 0, &got).ok() || got != hash) {
    Forget(hash);
    return false;
  }
  verified_[hash] = stamp;
  return true;
}

int64_t BlobCache::Size(const std::string& hash) {
  if (!ValidHash(hash)) return -1;
  return Stamp(Path(hash)).first;
}

StatusOr<std::unique_ptr<BlobCache::Writer>> BlobCache::Begin(
    const std::string& hash, int64_t total_bytes) {
  if (!ValidHash(hash)) {
    return InvalidArgument("a blob's hash must be 32 hex digits");
  }
  static std::atomic<int64_t> counter{0};
  std::unique_ptr<Writer> w(new Writer());
  w->cache_ = this;
  w->hash_ = hash;
  w->total_ = total_bytes;
  w->tmp_ = dir_ + "/.part-" + std::to_string(getpid()) + "-" +
            std::to_string(counter++);
  w->fd_ =
      open(w->tmp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (w->fd_ < 0) return Unavailable(Errno("cannot write " + w->tmp_));
  return w;
}

BlobCache::Writer::~Writer() {
  if (fd_ >= 0) close(fd_);
  if (!tmp_.empty()) std::remove(tmp_.c_str());
}

Status BlobCache::Writer::Append(const std::string& bytes) {
  if (written_ + static_cast<int64_t>(bytes.size()) > total_) {
    return InvalidArgument("blob " + hash_ + " is longer than announced");
  }
  hasher_.Add(bytes.data(), bytes.size());
  for (size_t off = 0; off < bytes.size();) {
    const ssize_t n = write(fd_, bytes.data() + off, bytes.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Unavailable(Errno("cannot write the weight cache " + tmp_));
    }
    off += n;
  }
  written_ += bytes.size();
  return Status::Ok();
}

Status BlobCache::Writer::Commit() {
  if (written_ != total_) {
    return InvalidArgument("blob " + hash_ + " is incomplete");
  }
  if (hasher_.Hex() != hash_) {
    return InvalidArgument("blob " + hash_ + " arrived corrupted");
  }
  if (close(fd_) != 0) {
    fd_ = -1;
    return Unavailable(Errno("cannot write the weight cache " + tmp_));
  }
  fd_ = -1;
  const std::string dst = cache_->Path(hash_);
  if (rename(tmp_.c_str(), dst.c_str()) != 0) {
    return Unavailable(Errno("cannot move " + tmp_ + " to " + dst));
  }
  tmp_.clear();
  std::lock_guard<std::mutex> lock(cache_->mu_);
  cache_->verified_[hash_] = Stamp(dst);
  return Status::Ok();
}

StatusOr<Tensor> BlobCache::Read(const std::string& hash, const Shape& shape,
                                 bool int8) {
  if (!ValidHash(hash)) return InvalidArgument("bad blob hash " + hash);
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0 || d > (int64_t{1} << 31)) {
      return InvalidArgument("bad dimension in a weight's shape");
    }
    n *= d;
    if (n > (int64_t{1} << 34)) return InvalidArgument("weight too large");
  }
  const int64_t size = Size(hash);
  if (size < 0) return NotFound("weight blob " + hash + " is not cached");
  const int64_t per = int8 ? 1 : 4;
  if (size != n * per) {
    return InvalidArgument("weight blob " + hash + " has " +
                           std::to_string(size) + " bytes but its shape " +
                           "needs " + std::to_string(n * per) +
                           (int8 ? " (int8)" : ""));
  }
  // A file this process wrote or hashed, unchanged since, is not hashed
  // again (a slow device spends a second of CPU per 250 MB on it).
  bool trusted = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = verified_.find(hash);
    trusted = it != verified_.end() && it->second == Stamp(Path(hash));
  }
  Tensor t(shape);
  std::string got = hash;
  // int8 bytes go into the tensor's own storage, then widen in place from
  // the last value down, each float landing where no unread byte remains.
  char* raw = reinterpret_cast<char*>(t.data.data());
  Status s = ReadHashed(Path(hash), raw, size, trusted ? nullptr : &got);
  if (s.ok() && int8) {
    for (int64_t i = n - 1; i >= 0; --i)
      t.data[i] = static_cast<float>(static_cast<int8_t>(raw[i]));
  }
  if (s.ok() && got != hash) {
    s = FailedPrecondition("weight blob " + hash +
                           " in the cache is corrupt; removed it");
  }
  if (!s.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    Forget(hash);
    return s;
  }
  Touch(hash);
  return t;
}

void BlobCache::Trim(const std::set<std::string>& keep, int64_t max_bytes) {
  struct Entry {
    std::string hash;
    int64_t size, used;
  };
  std::vector<Entry> all;
  int64_t total = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir_, ec)) {
    const std::string name = e.path().filename().string();
    if (!ValidHash(name)) continue;
    struct stat st {};
    if (stat(e.path().c_str(), &st) != 0) continue;
    // Last used: Read and Has set the access time themselves (a mount with
    // noatime or relatime would not), and the modification time stays what
    // verified_ remembers.
    const int64_t used =
        int64_t{st.st_atim.tv_sec} * 1000000000 + st.st_atim.tv_nsec;
    all.push_back({name, st.st_size, used});
    total += st.st_size;
  }
  std::sort(all.begin(), all.end(),
            [](const Entry& a, const Entry& b) { return a.used < b.used; });
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& e : all) {
    if (total <= max_bytes) break;
    if (keep.count(e.hash)) continue;
    Forget(e.hash);
    total -= e.size;
  }
}

}  // namespace shoal
