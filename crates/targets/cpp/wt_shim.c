// A thin C layer over WiredTiger's C API (wiredtiger.h): its handles are structs of
// method pointers, and cursors take variadic keys, so the calls are made here, against
// the installed header, and Rust sees plain functions.

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <wiredtiger.h>

#define PLUMB_TABLE "table:plumb"

typedef struct plumb_wt_session {
  WT_SESSION* s;
  WT_CURSOR* point;  // puts, gets, deletes; reset after each op
  WT_CURSOR* seq;    // a readseq pass, kept positioned between calls (NULL when none)
} plumb_wt_session;

const char* plumb_wt_version(void) { return wiredtiger_version(NULL, NULL, NULL); }

const char* plumb_wt_strerror(int rc) { return wiredtiger_strerror(rc); }

// Opens (creating if needed) the database in `home` and plumb's table.
int plumb_wt_open(const char* home, const char* config, WT_CONNECTION** conn) {
  int rc = wiredtiger_open(home, NULL, config, conn);
  if (rc != 0) {
    return rc;
  }
  WT_SESSION* s = NULL;
  rc = (*conn)->open_session(*conn, NULL, NULL, &s);
  if (rc == 0) {
    rc = s->create(s, PLUMB_TABLE, "key_format=u,value_format=u");
    s->close(s, NULL);
  }
  if (rc != 0) {
    (*conn)->close(*conn, NULL);
    *conn = NULL;
  }
  return rc;
}

int plumb_wt_close(WT_CONNECTION* conn) { return conn->close(conn, NULL); }

// A checkpoint (flush) or a compaction of plumb's table, from a session of its own.
int plumb_wt_maintain(WT_CONNECTION* conn, int compact) {
  WT_SESSION* s = NULL;
  int rc = conn->open_session(conn, NULL, NULL, &s);
  if (rc != 0) {
    return rc;
  }
  rc = compact ? s->compact(s, PLUMB_TABLE, NULL) : s->checkpoint(s, NULL);
  int rc2 = s->close(s, NULL);
  return rc != 0 ? rc : rc2;
}

int plumb_wt_session_open(WT_CONNECTION* conn, plumb_wt_session** out) {
  plumb_wt_session* p = calloc(1, sizeof(*p));
  if (p == NULL) {
    return ENOMEM;
  }
  int rc = conn->open_session(conn, NULL, NULL, &p->s);
  if (rc == 0) {
    rc = p->s->open_cursor(p->s, PLUMB_TABLE, NULL, NULL, &p->point);
  }
  if (rc != 0) {
    if (p->s != NULL) {
      p->s->close(p->s, NULL);
    }
    free(p);
    return rc;
  }
  *out = p;
  return 0;
}

void plumb_wt_session_close(plumb_wt_session* p) {
  p->s->close(p->s, NULL);  // closes its cursors too
  free(p);
}

static void set_key(WT_CURSOR* c, const void* k, size_t kl) {
  WT_ITEM key = {.data = k, .size = kl};
  c->set_key(c, &key);
}

int plumb_wt_put(plumb_wt_session* p, const void* k, size_t kl, const void* v, size_t vl) {
  WT_CURSOR* c = p->point;
  WT_ITEM val = {.data = v, .size = vl};
  set_key(c, k, kl);
  c->set_value(c, &val);
  int rc = c->insert(c);
  c->reset(c);
  return rc;
}

int plumb_wt_delete(plumb_wt_session* p, const void* k, size_t kl) {
  WT_CURSOR* c = p->point;
  set_key(c, k, kl);
  int rc = c->remove(c);
  c->reset(c);
  return rc == WT_NOTFOUND ? 0 : rc;
}

// Looks `k` up; on success *found says whether it exists and *v/*vl point at the value,
// valid until plumb_wt_release.
int plumb_wt_get(plumb_wt_session* p, const void* k, size_t kl, int* found, const void** v,
                 size_t* vl) {
  WT_CURSOR* c = p->point;
  set_key(c, k, kl);
  int rc = c->search(c);
  if (rc == WT_NOTFOUND) {
    *found = 0;
    c->reset(c);
    return 0;
  }
  if (rc != 0) {
    c->reset(c);
    return rc;
  }
  WT_ITEM val;
  rc = c->get_value(c, &val);
  if (rc != 0) {
    c->reset(c);
    return rc;
  }
  *found = 1;
  *v = val.data;
  *vl = val.size;
  return 0;
}

// Lets go of the page a get left pinned.
void plumb_wt_release(plumb_wt_session* p) { p->point->reset(p->point); }

typedef void (*plumb_visit_fn)(void* ctx, const char* key, size_t klen, const char* val,
                               size_t vlen);

static int visit_current(WT_CURSOR* c, plumb_visit_fn visit, void* ctx) {
  WT_ITEM key, val;
  int rc = c->get_key(c, &key);
  if (rc == 0) {
    rc = c->get_value(c, &val);
  }
  if (rc == 0) {
    visit(ctx, key.data, key.size, val.data, val.size);
  }
  return rc;
}

// Positions `c` on the first key >= start (or, reverse, the last key <= start);
// WT_NOTFOUND when there is none.
static int position(WT_CURSOR* c, const void* start, size_t sl, int reverse) {
  int exact = 0;
  set_key(c, start, sl);
  int rc = c->search_near(c, &exact);
  if (rc != 0) {
    return rc;
  }
  if (!reverse && exact < 0) {
    return c->next(c);
  }
  if (reverse && exact > 0) {
    return c->prev(c);
  }
  return 0;
}

// A seek plus up to `nexts` steps (prev when reverse), visiting each entry, as the
// other engines' range op; *visited gets the entries visited.
int plumb_wt_scan(plumb_wt_session* p, const void* start, size_t sl, size_t nexts, int reverse,
                  plumb_visit_fn visit, void* ctx, size_t* visited) {
  WT_CURSOR* c = p->point;
  size_t n = 0;
  int rc = position(c, start, sl, reverse);
  while (rc == 0) {
    rc = visit_current(c, visit, ctx);
    if (rc != 0 || ++n > nexts) {
      break;
    }
    rc = reverse ? c->prev(c) : c->next(c);
  }
  c->reset(c);
  *visited = n;
  return rc == WT_NOTFOUND ? 0 : rc;
}

// One entry of a readseq pass: the first call positions at the first key >= start,
// later calls step on. *more is 0 at the end (the pass's cursor is closed then).
int plumb_wt_seq_next(plumb_wt_session* p, const void* start, size_t sl, plumb_visit_fn visit,
                      void* ctx, int* more) {
  int rc;
  if (p->seq == NULL) {
    rc = p->s->open_cursor(p->s, PLUMB_TABLE, NULL, NULL, &p->seq);
    if (rc != 0) {
      return rc;
    }
    rc = position(p->seq, start, sl, 0);
  } else {
    rc = p->seq->next(p->seq);
  }
  if (rc == 0) {
    rc = visit_current(p->seq, visit, ctx);
    *more = rc == 0;
    return rc;
  }
  *more = 0;
  p->seq->close(p->seq);
  p->seq = NULL;
  return rc == WT_NOTFOUND ? 0 : rc;
}

// The connection statistics plumb reads (the connection runs with statistics=(fast)):
// key and value bytes inserted, and bytes the block manager wrote (checkpoints and
// eviction, the log excluded). -1 where a value is missing.
int plumb_wt_stats(WT_CONNECTION* conn, int64_t* insert_bytes, int64_t* block_written) {
  WT_SESSION* s = NULL;
  WT_CURSOR* c = NULL;
  int rc = conn->open_session(conn, NULL, NULL, &s);
  if (rc != 0) {
    return rc;
  }
  rc = s->open_cursor(s, "statistics:", NULL, NULL, &c);
  if (rc == 0) {
    const int keys[2] = {WT_STAT_CONN_CURSOR_INSERT_BYTES, WT_STAT_CONN_BLOCK_BYTE_WRITE};
    int64_t* out[2] = {insert_bytes, block_written};
    for (int i = 0; i < 2; i++) {
      const char* desc;
      const char* pvalue;
      int64_t v = -1;
      c->set_key(c, keys[i]);
      if (c->search(c) == 0) {
        c->get_value(c, &desc, &pvalue, &v);
      }
      *out[i] = v;
    }
    c->close(c);
  }
  s->close(s, NULL);
  return rc;
}
