// Cold-path RocksDB calls whose C API differs between the releases plumb builds
// against (scripts/build-rocksdb-release.sh) or is missing from Speedb's: the
// statistics level and tickers, and waiting for flushes and compactions. Through the
// C++ API every release has, so the Rust side calls one set of functions whatever the
// release; build.rs defines PLUMB_HAS_WAIT_FOR_COMPACT when the headers have
// WaitForCompactOptions with `flush`.
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "rocksdb/convenience.h"
#include "rocksdb/db.h"
#include "rocksdb/metadata.h"
#include "rocksdb/options.h"
#include "rocksdb/statistics.h"
#include "rocksdb/utilities/options_util.h"

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

// Runs `f`, turning a failed Status or a C++ exception into -1 with *err set.
template <typename F>
int guarded(char** err, F f) noexcept {
  try {
    rocksdb::Status st = f();
    if (st.ok()) return 0;
    *err = copy_message(st.ToString());
  } catch (const std::exception& e) {
    *err = copy_message(e.what());
  } catch (...) {
    *err = copy_message("unknown C++ exception");
  }
  return -1;
}

// RocksDB's own parser, strict: an unknown or misspelt option is an error naming it.
rocksdb::ConfigOptions strict_config() {
  rocksdb::ConfigOptions c;
  c.ignore_unknown_options = false;
  c.input_strings_escaped = true;
  return c;
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

// Applies an OPTIONS file (as RocksDB writes one in every database directory; its
// DBOptions and the "default" column family's options replace the current ones) and
// then an option string ("k=v;k=v", block-based table options as
// "block_based_table_factory={block_size=16384}"), each parsed by this release's own
// parser, onto the C API options. Either may be null. Statistics and create_if_missing
// stay as plumb set them. Returns 0, or -1 with *err set.
int plumb_rocks_apply_options(void* c_opts, const char* file, const char* text,
                              char** err) noexcept {
  return guarded(err, [&]() {
    rocksdb::Options& o = static_cast<CApiOptions*>(c_opts)->rep;
    const auto statistics = o.statistics;
    rocksdb::ConfigOptions config = strict_config();
    if (file != nullptr) {
      rocksdb::DBOptions db;
      std::vector<rocksdb::ColumnFamilyDescriptor> cfs;
      rocksdb::Status st = rocksdb::LoadOptionsFromFile(config, file, &db, &cfs);
      if (!st.ok()) return st;
      const rocksdb::ColumnFamilyDescriptor* def = nullptr;
      for (const auto& cf : cfs) {
        if (cf.name == rocksdb::kDefaultColumnFamilyName) def = &cf;
      }
      if (def == nullptr) {
        return rocksdb::Status::InvalidArgument(std::string(file) +
                                                " has no [CFOptions \"default\"] section");
      }
      o = rocksdb::Options(db, def->options);
    }
    if (text != nullptr) {
      rocksdb::Options out;
      rocksdb::Status st = rocksdb::GetOptionsFromString(config, o, text, &out);
      if (!st.ok()) return st;
      o = out;
    }
    o.statistics = statistics;
    o.create_if_missing = true;
    return rocksdb::Status::OK();
  });
}

// The LSM's own account, as "key=value" lines in a malloc'd string: the default column
// family's "rocksdb.cfstats" map (compaction.L<n>.* and compaction.Sum.* per level,
// and the write-stall counts by cause, whose key names changed in 8.5), each level's
// live files and bytes from its metadata (meta.L<n>.files, meta.L<n>.bytes), and the
// block cache tickers by block type (ticker.<name>). Returns 0, or -1 with *err set.
int plumb_rocks_lsm(void* c_db, char** out, char** err) noexcept {
  return guarded(err, [&]() {
    rocksdb::DB* db = db_of(c_db);
    std::ostringstream s;
    std::map<std::string, std::string> cf;
    if (db->GetMapProperty(rocksdb::DB::Properties::kCFStats, &cf)) {
      for (const auto& [k, v] : cf) s << k << '=' << v << '\n';
    }
    rocksdb::ColumnFamilyMetaData meta;
    db->GetColumnFamilyMetaData(&meta);
    for (const auto& l : meta.levels) {
      s << "meta.L" << l.level << ".files=" << l.files.size() << '\n';
      s << "meta.L" << l.level << ".bytes=" << l.size << '\n';
    }
    if (auto st = statistics_of(c_db)) {
      const std::pair<const char*, uint32_t> tickers[] = {
          {"block.cache.data.hit", rocksdb::BLOCK_CACHE_DATA_HIT},
          {"block.cache.data.miss", rocksdb::BLOCK_CACHE_DATA_MISS},
          {"block.cache.index.hit", rocksdb::BLOCK_CACHE_INDEX_HIT},
          {"block.cache.index.miss", rocksdb::BLOCK_CACHE_INDEX_MISS},
          {"block.cache.filter.hit", rocksdb::BLOCK_CACHE_FILTER_HIT},
          {"block.cache.filter.miss", rocksdb::BLOCK_CACHE_FILTER_MISS},
          {"stall.micros", rocksdb::STALL_MICROS},
      };
      for (const auto& [name, t] : tickers) {
        s << "ticker." << name << '=' << st->getTickerCount(t) << '\n';
      }
    }
    *out = copy_message(s.str());
    return rocksdb::Status::OK();
  });
}

// db_bench's compact0/compact1: compacts every file of the first non-empty level at or
// after `from_level` (L0, or the first level with data beyond L0) into the next level
// that holds data, with the column family's target file size, until it succeeds (a
// background compaction may have taken a file meanwhile). A level with no data below
// it is left alone, as db_bench leaves it.
// Returns 0, or -1 with *err set.
int plumb_rocks_compact_level(void* c_db, int from_level, char** err) noexcept {
  return guarded(err, [&]() {
    rocksdb::DB* db = db_of(c_db);
    for (int attempt = 0;; ++attempt) {
      std::vector<rocksdb::LiveFileMetaData> files;
      db->GetLiveFilesMetaData(&files);
      int from = from_level;
      if (from > 0) {
        from = INT_MAX;
        for (const auto& f : files) {
          if (f.level > 0 && f.level < from) from = f.level;
        }
        if (from == INT_MAX) return rocksdb::Status::OK();
      }
      int next = INT_MAX;
      std::vector<std::string> names;
      for (const auto& f : files) {
        if (f.level == from) {
          names.push_back(f.name);
        } else if (f.level > from && f.level < next) {
          next = f.level;
        }
      }
      // Nothing at that level, or no data below it: nothing to do (as db_bench).
      if (names.empty() || next == INT_MAX) return rocksdb::Status::OK();
      rocksdb::ColumnFamilyDescriptor desc;
      db->DefaultColumnFamily()->GetDescriptor(&desc);
      rocksdb::CompactionOptions co;
      co.compression = rocksdb::kDisableCompressionOption;
      co.output_file_size_limit = desc.options.target_file_size_base;
      rocksdb::Status st = db->CompactFiles(co, names, next);
      if (st.ok() || attempt >= 100) return st;
      // A background compaction took one of the files: wait, and look again.
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
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
