// Cold-path RocksDB calls whose C API differs between the releases plumb builds
// against (scripts/build-rocksdb-release.sh) or is missing from Speedb's: the
// statistics level and tickers, and waiting for flushes and compactions. Through the
// C++ API every release has, so the Rust side calls one set of functions whatever the
// release; build.rs defines PLUMB_HAS_WAIT_FOR_COMPACT when the headers have
// WaitForCompactOptions with `flush`.
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <thread>

#include "rocksdb/db.h"
#include "rocksdb/options.h"
#include "rocksdb/statistics.h"

namespace {
// The C API's handles (db/c.cc) hold the C++ object or pointer as their first member.
struct CApiDb {
  rocksdb::DB* rep;
};
struct CApiOptions {
  rocksdb::Options rep;
};

rocksdb::DB* db_of(void* c_db) { return static_cast<CApiDb*>(c_db)->rep; }

std::shared_ptr<rocksdb::Statistics> statistics_of(void* c_db) {
  return db_of(c_db)->GetDBOptions().statistics;
}

char* copy_message(const std::string& m) {
  char* out = static_cast<char*>(std::malloc(m.size() + 1));
  if (out != nullptr) std::memcpy(out, m.c_str(), m.size() + 1);
  return out;
}

#ifndef PLUMB_HAS_WAIT_FOR_COMPACT
// True while the database has a flush or compaction queued or running.
bool busy(rocksdb::DB* db) {
  for (const char* p : {"rocksdb.mem-table-flush-pending", "rocksdb.compaction-pending",
                        "rocksdb.num-running-flushes", "rocksdb.num-running-compactions"}) {
    uint64_t v = 0;
    if (db->GetIntProperty(p, &v) && v > 0) return true;
  }
  return false;
}
#endif
}  // namespace

extern "C" {

// The tickers plumb reports, in the order of the Rust side's struct.
struct plumb_rocks_tickers {
  uint64_t bytes_written;
  uint64_t flush_write_bytes;
  uint64_t compact_write_bytes;
  uint64_t compact_read_bytes;
  uint64_t stall_micros;
};

// Keeps tickers and drops histograms and timers: the cheapest level that still counts
// compaction and stall bytes. On options whose statistics are enabled, before open (so
// the LOG records it, as db_bench's does); releases before 9.x have no C API for it.
// Returns 0, or -1 when the options have no statistics.
int plumb_rocks_stats_tickers_only(void* c_opts) noexcept {
  try {
    auto& s = static_cast<CApiOptions*>(c_opts)->rep.statistics;
    if (!s) return -1;
    s->set_stats_level(rocksdb::StatsLevel::kExceptHistogramOrTimers);
    return 0;
  } catch (...) {
    return -1;
  }
}

// The statistics level in force (RocksDB's StatsLevel number), or -1 without
// statistics.
int plumb_rocks_stats_level(void* c_db) noexcept {
  try {
    auto s = statistics_of(c_db);
    return s ? static_cast<int>(s->get_stats_level()) : -1;
  } catch (...) {
    return -1;
  }
}

// Fills *out from the database's statistics. Returns 0, or -1 without statistics.
int plumb_rocks_tickers(void* c_db, plumb_rocks_tickers* out) noexcept {
  try {
    auto s = statistics_of(c_db);
    if (!s) return -1;
    out->bytes_written = s->getTickerCount(rocksdb::BYTES_WRITTEN);
    out->flush_write_bytes = s->getTickerCount(rocksdb::FLUSH_WRITE_BYTES);
    out->compact_write_bytes = s->getTickerCount(rocksdb::COMPACT_WRITE_BYTES);
    out->compact_read_bytes = s->getTickerCount(rocksdb::COMPACT_READ_BYTES);
    out->stall_micros = s->getTickerCount(rocksdb::STALL_MICROS);
    return 0;
  } catch (...) {
    return -1;
  }
}

// Flushes the memtables and waits until no flush or compaction is queued or running.
// Returns 0, or -1 with *err set to a malloc'd message.
int plumb_rocks_wait_for_compact(void* c_db, char** err) noexcept {
  try {
    rocksdb::DB* db = db_of(c_db);
#ifdef PLUMB_HAS_WAIT_FOR_COMPACT
    rocksdb::WaitForCompactOptions w;
    w.flush = true;
    rocksdb::Status st = db->WaitForCompact(w);
#else
    // Releases before WaitForCompact: flush, then poll what it would wait for.
    rocksdb::Status st = db->Flush(rocksdb::FlushOptions());
    while (st.ok() && busy(db)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
#endif
    if (st.ok()) return 0;
    *err = copy_message(st.ToString());
    return -1;
  } catch (const std::exception& e) {
    *err = copy_message(e.what());
    return -1;
  } catch (...) {
    *err = copy_message("unknown C++ exception waiting for compactions");
    return -1;
  }
}

}  // extern "C"
