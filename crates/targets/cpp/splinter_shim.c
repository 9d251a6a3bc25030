// A thin C layer over SplinterDB's public API (splinterdb.h), so the Rust side never
// mirrors its config structs: their layout follows the SplinterDB build being linked,
// and this file is compiled against that build's own headers.

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "splinterdb/default_data_config.h"
#include "splinterdb/splinterdb.h"

typedef struct plumb_splinter {
  splinterdb* kvs;
  data_config data;
  splinterdb_config cfg;
} plumb_splinter;

// The sizes SplinterDB is opened with; 0 keeps SplinterDB's default. SplinterDB keeps
// no configuration on disk, so a reopen must pass the same values.
typedef struct plumb_splinter_sizes {
  uint64_t cache_size;
  uint64_t disk_size;
  uint64_t memtable_capacity;
  uint64_t memtable_bg_threads;
  uint64_t normal_bg_threads;
  int direct_io;
} plumb_splinter_sizes;

const char* plumb_splinter_version(void) { return splinterdb_get_version(); }

// Creates (create != 0) or opens the database file `path`; NULL with *rc set on failure.
plumb_splinter* plumb_splinter_open(const char* path, const plumb_splinter_sizes* s,
                                    int create, int* rc) {
  plumb_splinter* p = calloc(1, sizeof(*p));
  if (p == NULL) {
    *rc = ENOMEM;
    return NULL;
  }
  default_data_config_init(&p->data);
  p->cfg.filename = path;
  p->cfg.cache_size = s->cache_size;
  p->cfg.disk_size = s->disk_size;
  p->cfg.data_cfg = &p->data;
  p->cfg.memtable_capacity = s->memtable_capacity;
  p->cfg.num_memtable_bg_threads = s->memtable_bg_threads;
  p->cfg.num_normal_bg_threads = s->normal_bg_threads;
  if (s->direct_io) {
    p->cfg.io_flags = O_RDWR | O_CREAT | O_DIRECT;
  }
  *rc = create ? splinterdb_create(&p->cfg, &p->kvs) : splinterdb_open(&p->cfg, &p->kvs);
  if (*rc != 0) {
    free(p);
    return NULL;
  }
  return p;
}

void plumb_splinter_close(plumb_splinter* p) {
  splinterdb_close(&p->kvs);
  free(p);
}

int plumb_splinter_insert(plumb_splinter* p, const char* k, size_t kl, const char* v,
                          size_t vl) {
  return splinterdb_insert(p->kvs, slice_create(kl, k), slice_create(vl, v), NULL);
}

int plumb_splinter_delete(plumb_splinter* p, const char* k, size_t kl) {
  return splinterdb_delete(p->kvs, slice_create(kl, k), NULL);
}

// A lookup result a session reuses for every point read (not shareable across threads).
splinterdb_lookup_result* plumb_splinter_result_new(plumb_splinter* p) {
  splinterdb_lookup_result* r = malloc(sizeof(*r));
  if (r != NULL) {
    splinterdb_lookup_result_init(p->kvs, r, SPLINTERDB_LOOKUP_VALUE, 0, NULL);
  }
  return r;
}

void plumb_splinter_result_free(splinterdb_lookup_result* r) {
  splinterdb_lookup_result_deinit(r);
  free(r);
}

// Looks `k` up into `r`; on success *found says whether it exists and, if so, *v and
// *vl point at the value inside `r` until its next use.
int plumb_splinter_lookup(plumb_splinter* p, splinterdb_lookup_result* r, const char* k,
                          size_t kl, int* found, const char** v, size_t* vl) {
  int rc = splinterdb_lookup(p->kvs, slice_create(kl, k), r);
  if (rc != 0) {
    return rc;
  }
  *found = splinterdb_lookup_found(r);
  if (*found) {
    slice val;
    rc = splinterdb_lookup_result_value(r, &val);
    if (rc != 0) {
      return rc;
    }
    *v = (const char*)slice_data(val);
    *vl = slice_length(val);
  }
  return 0;
}

typedef void (*plumb_visit_fn)(void* ctx, const char* key, size_t klen, const char* val,
                               size_t vlen);

// An iterator starting at the first key >= start (or, when reverse, the last key <=
// start); NULL start means the first key.
int plumb_splinter_iter_open(plumb_splinter* p, const char* start, size_t sl, int reverse,
                             splinterdb_iterator** it) {
  slice s = start == NULL ? NULL_SLICE : slice_create(sl, start);
  return splinterdb_iterator_init(p->kvs, it, reverse ? less_than_or_equal : greater_than_or_equal,
                                  s);
}

int plumb_splinter_iter_valid(splinterdb_iterator* it) { return splinterdb_iterator_valid(it); }

void plumb_splinter_iter_next(splinterdb_iterator* it) { splinterdb_iterator_next(it); }

void plumb_splinter_iter_current(splinterdb_iterator* it, const char** k, size_t* kl,
                                 const char** v, size_t* vl) {
  slice key, val;
  splinterdb_iterator_get_current(it, &key, &val);
  *k = (const char*)slice_data(key);
  *kl = slice_length(key);
  *v = (const char*)slice_data(val);
  *vl = slice_length(val);
}

int plumb_splinter_iter_status(splinterdb_iterator* it) { return splinterdb_iterator_status(it); }

void plumb_splinter_iter_close(splinterdb_iterator* it) { splinterdb_iterator_deinit(it); }

// A seek plus up to `nexts` steps (prev when reverse), visiting each entry, as the
// other engines' range op; *visited gets the entries visited.
int plumb_splinter_scan(plumb_splinter* p, const char* start, size_t sl, size_t nexts,
                        int reverse, plumb_visit_fn visit, void* ctx, size_t* visited) {
  splinterdb_iterator* it = NULL;
  int rc = plumb_splinter_iter_open(p, start, sl, reverse, &it);
  if (rc != 0) {
    return rc;
  }
  size_t n = 0;
  while (splinterdb_iterator_valid(it)) {
    slice key, val;
    splinterdb_iterator_get_current(it, &key, &val);
    visit(ctx, (const char*)slice_data(key), slice_length(key), (const char*)slice_data(val),
          slice_length(val));
    if (++n > nexts) {
      break;
    }
    if (reverse) {
      splinterdb_iterator_prev(it);
    } else {
      splinterdb_iterator_next(it);
    }
  }
  rc = splinterdb_iterator_status(it);
  splinterdb_iterator_deinit(it);
  *visited = n;
  return rc;
}
