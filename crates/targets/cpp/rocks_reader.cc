// Reads for plumb's RocksDB session (gets, multi-gets, seeks), through the C++ API
// db_bench uses.
//
// The C API's rocksdb_get_pinned_cf_v2 allocates a fresh PinnableSlice handle per
// read (a malloc and a free per op, ~1.5% of a cached readrandom). db_bench keeps one
// PinnableSlice on its stack and Reset()s it; this reader does the same, with two
// slots so the caller can keep one value pinned while the next lookup runs.
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>

#include "rocksdb/db.h"
#include "rocksdb/iterator.h"
#include "rocksdb/options.h"
#include "rocksdb/slice.h"

namespace {
// The C API's handles (db/c.cc) each hold the C++ pointer as their first member;
// only that member is read here.
struct CApiDb {
  rocksdb::DB* rep;
};
struct CApiColumnFamily {
  rocksdb::ColumnFamilyHandle* rep;
};

char* copy_message(const char* m) {
  size_t n = std::strlen(m);
  char* out = static_cast<char*>(std::malloc(n + 1));
  if (out != nullptr) std::memcpy(out, m, n + 1);
  return out;
}

// Sets *err to RocksDB's message for `st` (malloc'd, freed by the Rust side) and
// returns -1.
int fail(char** err, const rocksdb::Status& st) {
  *err = copy_message(st.ToString().c_str());
  return -1;
}

// Runs `body` and turns any C++ exception into -1 and a message: nothing may unwind
// into the Rust caller.
template <class F>
int guarded(char** err, const char* what, F body) noexcept {
  try {
    return body();
  } catch (const std::exception& e) {
    *err = copy_message(e.what());
  } catch (...) {
    *err = copy_message(what);
  }
  return -1;
}
}  // namespace

struct plumb_rocks_reader {
  rocksdb::DB* db;
  rocksdb::ColumnFamilyHandle* cf;
  rocksdb::ReadOptions options;
  rocksdb::PinnableSlice slot[2];
  // multireadrandom's batch, grown to the largest batch seen and reused.
  size_t batch_cap = 0;
  std::unique_ptr<rocksdb::Slice[]> keys;
  std::unique_ptr<rocksdb::PinnableSlice[]> values;
  std::unique_ptr<rocksdb::Status[]> statuses;
};

extern "C" {

plumb_rocks_reader* plumb_rocks_reader_new(void* c_db, void* c_cf) noexcept {
  try {
    auto* r = new plumb_rocks_reader();
    r->db = static_cast<CApiDb*>(c_db)->rep;
    r->cf = static_cast<CApiColumnFamily*>(c_cf)->rep;
    return r;
  } catch (...) {
    return nullptr;
  }
}

void plumb_rocks_reader_free(plumb_rocks_reader* r) noexcept { delete r; }

// Looks `key` up into slot `s` (0 or 1), releasing what that slot pinned before.
// Returns 1 when found (see plumb_rocks_reader_value), 0 when absent, -1 on error
// with *err set to a malloc'd message.
int plumb_rocks_reader_get(plumb_rocks_reader* r, int s, const char* key, size_t klen,
                           char** err) noexcept {
  return guarded(err, "unknown C++ exception in DB::Get", [&] {
    rocksdb::PinnableSlice& v = r->slot[s & 1];
    v.Reset();
    rocksdb::Status st = r->db->Get(r->options, r->cf, rocksdb::Slice(key, klen), &v);
    if (st.ok()) return 1;
    if (st.IsNotFound()) return 0;
    return fail(err, st);
  });
}

// The value slot `s` holds (empty once released); valid until the slot is
// released or reused.
const char* plumb_rocks_reader_value(const plumb_rocks_reader* r, int s, size_t* len) noexcept {
  const rocksdb::PinnableSlice& v = r->slot[s & 1];
  *len = v.size();
  return v.data();
}

// Unpins what slot `s` holds (a block cache handle), so it can be evicted.
void plumb_rocks_reader_release(plumb_rocks_reader* r, int s) noexcept { r->slot[s & 1].Reset(); }

// Looks up `n` keys with the batched DB::MultiGet (db_bench's --multiread_batched),
// unpinning the previous batch first. Sets vals[i]/vlens[i] for each key found
// (valid until the next batch or plumb_rocks_reader_free) and vals[i] = nullptr for
// each absent one. Returns 0, or -1 with *err set to a malloc'd message for the
// first key that failed.
int plumb_rocks_reader_multi_get(plumb_rocks_reader* r, size_t n, const char* const* keys,
                                 const size_t* klens, const char** vals, size_t* vlens,
                                 char** err) noexcept {
  return guarded(err, "unknown C++ exception in DB::MultiGet", [&] {
    if (n > r->batch_cap) {
      r->keys.reset(new rocksdb::Slice[n]);
      r->values.reset(new rocksdb::PinnableSlice[n]);
      r->statuses.reset(new rocksdb::Status[n]);
      r->batch_cap = n;
    }
    for (size_t i = 0; i < n; i++) {
      r->values[i].Reset();
      r->keys[i] = rocksdb::Slice(keys[i], klens[i]);
    }
    r->db->MultiGet(r->options, r->cf, n, r->keys.get(), r->values.get(), r->statuses.get());
    for (size_t i = 0; i < n; i++) {
      const rocksdb::Status& st = r->statuses[i];
      if (st.ok()) {
        vals[i] = r->values[i].data();
        vlens[i] = r->values[i].size();
      } else if (st.IsNotFound()) {
        vals[i] = nullptr;
        vlens[i] = 0;
      } else {
        return fail(err, st);
      }
    }
    return 0;
  });
}

// Called for each entry a scan visits, with the caller's context.
typedef void (*plumb_visit_fn)(void* ctx, const char* key, size_t klen, const char* val,
                               size_t vlen);

// db_bench's seekrandom op: a new iterator (so it sees the newest data), a Seek (or
// SeekForPrev when `reverse`), then up to `nexts` Next (or Prev) calls, visiting each
// valid entry. Sets *visited to the entries visited. Returns 0, or -1 with *err set.
int plumb_rocks_reader_scan(plumb_rocks_reader* r, const char* start, size_t slen, size_t nexts,
                            int reverse, plumb_visit_fn visit, void* ctx, size_t* visited,
                            char** err) noexcept {
  return guarded(err, "unknown C++ exception in a scan", [&] {
    std::unique_ptr<rocksdb::Iterator> it(r->db->NewIterator(r->options, r->cf));
    rocksdb::Slice target(start, slen);
    if (reverse) {
      it->SeekForPrev(target);
    } else {
      it->Seek(target);
    }
    size_t n = 0;
    while (it->Valid()) {
      rocksdb::Slice k = it->key();
      rocksdb::Slice v = it->value();
      visit(ctx, k.data(), k.size(), v.data(), v.size());
      if (++n > nexts) break;
      if (reverse) {
        it->Prev();
      } else {
        it->Next();
      }
    }
    *visited = n;
    rocksdb::Status st = it->status();
    return st.ok() ? 0 : fail(err, st);
  });
}

}  // extern "C"
