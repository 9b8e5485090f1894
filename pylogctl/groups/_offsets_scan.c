/*
 * pylogctl.groups._offsets_scan -- optional C accelerator of the consumer-offsets replay.
 *
 * Why: loading __consumer_offsets replays every record of every batch, yet only the last
 * record of each key survives (hundreds of thousands out of tens of millions). In Python each
 * record costs a Record object, two bytes objects and a dict update (~0.6 us per record with
 * the C record decoder), which put a 1 GiB topic at ~85 MB/s. Here a run of plain v2 batches
 * is framed, CRC-checked and parsed straight from the mapped segment, and each record only
 * updates an entry of a hash table keyed by the raw key bytes; Python objects are made once
 * per surviving key, when the table is turned into a dict at the end.
 *
 * LastRecords is that table: a mapping from a record key (bytes, or None) to what the replay
 * keeps for it, in first-insertion order, as a dict would be. Entries written by scan() hold
 * copies of the key and value bytes and read back as (offset, value) tuples; entries written
 * with table[key] = obj (the Python replay: legacy and compressed batches, transactions
 * committed) hold obj itself. Keys are hashed with Python's own bytes hash (randomized
 * SipHash), so crafted keys cannot make the table quadratic.
 *
 * Contract of scan() (group_loader._scan and replay.RecordReplay are the reference): from
 * `position`, for each whole, uncompressed magic-2 batch, do what the Python loop does with
 * it -- skip it when its last offset is below the log start offset, else check its CRC-32C,
 * decode its records with decode_records' rules and replay them: a plain batch's into the
 * table (a tombstone also dropping its key from every open transaction), a transactional
 * batch's values into its producer's dict of `pending` (as Python objects: they are few, and
 * Python reads them), and for a COMMIT or ABORT marker a call of end_transaction, the Python
 * replay's own rule. It never raises for bad data and never decides an error: it stops
 * *before* any batch it cannot finish exactly as Python would (legacy, compressed, torn or
 * too small, a CRC mismatch, records decode_records would refuse or whose offsets leave
 * int64, a control key Python would refuse) and says why, so that the Python loop takes that
 * one batch -- with its notes and errors -- and calls scan() again. It also stops at `limit`
 * so the caller can release the pages scanned.
 *
 * Maintenance: a change to the Python loop, to the replay rules or to decode_records' rules
 * must be made here too. tests/groups/test_offsets_scan.py compares loads with and without
 * this module (corpus, generated and damaged logs, hand-made record areas);
 * tests/fuzz/fuzz_offsets_scan.py does the same on mutated segments.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "../format/_kafka_wire.h"

uint32_t pylogctl_crc32c(uint32_t crc, const unsigned char *p, size_t n);  /* _crc32c.c */
void pylogctl_crc32c_init(void);

/* Why scan() stopped (the module exports these names). */
enum {
    STOP_END = 0,        /* 17 bytes or fewer left: the Python loop's end */
    STOP_LIMIT = 1,      /* `limit` reached */
    STOP_BATCH = 2,      /* not a batch for this loop (framing, magic, compression) */
    STOP_CRC = 3,        /* the batch fails its CRC */
    STOP_RECORDS = 4,    /* records for Python (undecodable, offsets past int64, a bad
                          * control key) */
};

#define V2_OVERHEAD 61
#define LOG_OVERHEAD 12
#define HEADER_UP_TO_MAGIC 17
#define CODEC_MASK 0x07
#define TRANSACTIONAL_FLAG 0x10
#define CONTROL_FLAG 0x20
#define CONTROL_ABORT 0
#define CONTROL_COMMIT 1
#define NONE_HASH ((Py_hash_t)0x5bd1e995)

static inline Py_hash_t
hash_bytes(const unsigned char *p, Py_ssize_t n)
{
#if PY_VERSION_HEX >= 0x030E0000
    return Py_HashBuffer(p, n);
#else
    return _Py_HashBytes(p, n);
#endif
}

/* ---- the table ------------------------------------------------------------------------ */

typedef struct {
    Py_hash_t hash;
    Py_ssize_t key_len;    /* -1: the None key */
    Py_ssize_t value_len;  /* -1: a None value; meaningless when obj is set */
    Py_ssize_t cap;        /* bytes at data */
    int64_t offset;
    unsigned char *data;   /* the key's bytes, then the value's */
    PyObject *obj;         /* what table[key] = obj stored, or NULL: (offset, value) */
} Entry;

typedef struct {
    PyObject_HEAD
    Entry *entries;        /* in first-insertion order */
    Py_ssize_t n, cap;
    Py_ssize_t *slots;     /* open addressing (linear probing) over entries; -1 empty */
    size_t mask;
    int busy;              /* scan() or to_dict() running: no reentrant use */
} LastRecords;

static PyTypeObject LastRecords_Type;

/* Where `key` is: its entry index (>= 0), or -1 with *slot the free slot for it. */
static Py_ssize_t
find(LastRecords *t, Py_hash_t hash, const unsigned char *key, Py_ssize_t key_len,
     size_t *slot)
{
    size_t i = (size_t)hash & t->mask;
    for (;;) {
        Py_ssize_t e = t->slots[i];
        if (e < 0) {
            *slot = i;
            return -1;
        }
        const Entry *en = &t->entries[e];
        if (en->hash == hash && en->key_len == key_len
                && (key_len <= 0 || memcmp(en->data, key, (size_t)key_len) == 0))
            return e;
        i = (i + 1) & t->mask;
    }
}

/* Room for one more entry (slots at most half full); -1 with MemoryError set. */
static int
reserve(LastRecords *t)
{
    if (t->n == t->cap) {
        Py_ssize_t cap = t->cap ? t->cap * 2 : 1024;
        Entry *entries = PyMem_Realloc(t->entries, (size_t)cap * sizeof(Entry));
        if (entries == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        t->entries = entries;
        t->cap = cap;
    }
    if ((size_t)(t->n + 1) * 2 <= t->mask + 1)
        return 0;
    size_t size = (t->mask + 1) * 2;
    Py_ssize_t *slots = PyMem_Malloc(size * sizeof(Py_ssize_t));
    if (slots == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    memset(slots, 0xff, size * sizeof(Py_ssize_t));
    for (Py_ssize_t e = 0; e < t->n; e++) {
        size_t i = (size_t)t->entries[e].hash & (size - 1);
        while (slots[i] >= 0)
            i = (i + 1) & (size - 1);
        slots[i] = e;
    }
    PyMem_Free(t->slots);
    t->slots = slots;
    t->mask = size - 1;
    return 0;
}

/* The entry of `key`, created (holding only the key) if new; -1 with MemoryError set. */
static Py_ssize_t
entry_for(LastRecords *t, Py_hash_t hash, const unsigned char *key, Py_ssize_t key_len)
{
    size_t slot;
    Py_ssize_t e = find(t, hash, key, key_len, &slot);
    if (e >= 0)
        return e;
    if ((size_t)(t->n + 1) * 2 > t->mask + 1 || t->n == t->cap) {
        if (reserve(t) < 0)
            return -1;
        find(t, hash, key, key_len, &slot);
    }
    Py_ssize_t len = key_len > 0 ? key_len : 0;
    unsigned char *data = PyMem_Malloc(len ? (size_t)len : 1);
    if (data == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    if (len)
        memcpy(data, key, (size_t)len);
    e = t->n++;
    t->entries[e] = (Entry){hash, key_len, -1, len, 0, data, NULL};
    t->slots[slot] = e;
    return e;
}

/* Store (offset, value) as raw bytes in entry e; *old gets the object it held (to release
 * once the table is consistent). -1 with MemoryError set. */
static int
store_raw(LastRecords *t, Py_ssize_t e, int64_t offset, const unsigned char *value,
          Py_ssize_t value_len, PyObject **old)
{
    Entry *en = &t->entries[e];
    Py_ssize_t key = en->key_len > 0 ? en->key_len : 0;
    Py_ssize_t need = key + (value_len > 0 ? value_len : 0);
    if (need > en->cap) {
        Py_ssize_t cap = need > en->cap * 2 ? need : en->cap * 2;
        unsigned char *data = PyMem_Realloc(en->data, (size_t)cap);
        if (data == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        en->data = data;
        en->cap = cap;
    }
    if (value_len > 0)
        memcpy(en->data + key, value, (size_t)value_len);
    en->value_len = value_len;
    en->offset = offset;
    *old = en->obj;
    en->obj = NULL;
    return 0;
}

/* What entry e holds, as a new reference: its object, or (offset, value). */
static PyObject *
entry_value(const Entry *en)
{
    if (en->obj != NULL)
        return Py_NewRef(en->obj);
    PyObject *offset = PyLong_FromLongLong(en->offset);
    if (offset == NULL)
        return NULL;
    PyObject *value = en->value_len < 0 ? Py_NewRef(Py_None)
        : PyBytes_FromStringAndSize((const char *)en->data + (en->key_len > 0 ? en->key_len : 0),
                                    en->value_len);
    if (value == NULL) {
        Py_DECREF(offset);
        return NULL;
    }
    PyObject *pair = PyTuple_Pack(2, offset, value);
    Py_DECREF(offset);
    Py_DECREF(value);
    return pair;
}

/* A key object's bytes (bytes or None); -1 with TypeError set. */
static int
key_bytes(PyObject *key, const unsigned char **p, Py_ssize_t *n, Py_hash_t *hash)
{
    if (key == Py_None) {
        *p = NULL;
        *n = -1;
        *hash = NONE_HASH;
        return 0;
    }
    if (!PyBytes_Check(key)) {
        PyErr_Format(PyExc_TypeError, "LastRecords keys are bytes or None, not %.100s",
                     Py_TYPE(key)->tp_name);
        return -1;
    }
    *p = (const unsigned char *)PyBytes_AS_STRING(key);
    *n = PyBytes_GET_SIZE(key);
    *hash = hash_bytes(*p, *n);
    return 0;
}

static int
check_idle(LastRecords *t)
{
    if (t->busy) {
        PyErr_SetString(PyExc_RuntimeError, "LastRecords used while it scans");
        return -1;
    }
    return 0;
}

/* ---- records of one batch ------------------------------------------------------------- */

/* A zig-zag varint of at most max_bytes bytes at p[*q], as read_varint reads it; 0 if it is
 * truncated or too long (*q then left alone). A varint wider than 64 bits is taken (Python
 * reads a big int): only the 10-byte timestamp delta can be one, and nothing here reads it. */
static inline int
varint(const unsigned char *p, Py_ssize_t n, Py_ssize_t *q, int max_bytes, int64_t *out)
{
    int rc = kw_read_varint(p, n, q, max_bytes, out);
    return rc == KW_VARINT_OK || rc == KW_VARINT_WIDE;
}

/* A key or value length and its bytes; 0 when decode_records would refuse them. */
static inline int
blob(const unsigned char *p, Py_ssize_t n, Py_ssize_t *q, Py_ssize_t *at, Py_ssize_t *len)
{
    int64_t v;
    if (!varint(p, n, q, 5, &v) || v < -1 || (v >= 0 && v > n - *q))
        return 0;
    *at = *q;
    *len = (Py_ssize_t)v;
    if (v > 0)
        *q += (Py_ssize_t)v;
    return 1;
}

typedef struct {
    Py_ssize_t key_at, key_len, value_at, value_len;  /* a length -1: null */
    int64_t offset_delta;
} Rec;

/* The record at p[*q] of the record area p[0:n], by decode_records_py's rules and checks
 * (timestamps, sequences and header contents left out: nothing here keeps them); 0 if
 * Python would refuse it. */
static int
next_record(const unsigned char *p, Py_ssize_t n, Py_ssize_t *q, Rec *r)
{
    int64_t size, ts_delta, headers;
    if (*q >= n || !varint(p, n, q, 5, &size))
        return 0;
    const Py_ssize_t start = *q;
    if (size < 0 || size > n - *q || *q >= n)
        return 0;
    (*q)++;  /* attributes */
    if (!varint(p, n, q, 10, &ts_delta) || !varint(p, n, q, 5, &r->offset_delta))
        return 0;
    if (!blob(p, n, q, &r->key_at, &r->key_len) || !blob(p, n, q, &r->value_at, &r->value_len))
        return 0;
    if (!varint(p, n, q, 5, &headers) || headers < 0 || headers > n - *q)
        return 0;
    for (int64_t h = 0; h < headers; h++) {
        int64_t key_size;
        Py_ssize_t at, len;
        if (!varint(p, n, q, 5, &key_size) || key_size < 0 || key_size > n - *q)
            return 0;
        *q += (Py_ssize_t)key_size;
        if (!blob(p, n, q, &at, &len))
            return 0;
    }
    return *q - start == size;
}

/* Records parsed by the check, kept for the replay (a batch of more is parsed again). */
#define KEPT_RECORDS 64

/* Whether Python decodes the `count` records of p[0:n] without an error, every offset
 * (base + delta) within int64; recs[] gets the first KEPT_RECORDS of them. */
static int
records_ok(const unsigned char *p, Py_ssize_t n, int64_t count, int64_t base, Rec *recs)
{
    Py_ssize_t q = 0;
    int64_t offset;
    if (count < 0)
        return 0;
    for (int64_t i = 0; i < count; i++) {
        Rec r;
        if (!next_record(p, n, &q, &r) || __builtin_add_overflow(base, r.offset_delta, &offset))
            return 0;
        if (i < KEPT_RECORDS)
            recs[i] = r;
    }
    return q == n;
}

/* RecordReplay._drop_pending: `key` out of every open transaction; -1 on error. */
static int
drop_pending(PyObject *pending, const unsigned char *key, Py_ssize_t key_len)
{
    if (PyDict_GET_SIZE(pending) == 0)
        return 0;
    PyObject *k = key_len < 0 ? Py_NewRef(Py_None)
        : PyBytes_FromStringAndSize((const char *)key, key_len);
    if (k == NULL)
        return -1;
    Py_ssize_t i = 0;
    PyObject *pid, *records;
    int rc = 0;
    while (rc == 0 && PyDict_Next(pending, &i, &pid, &records)) {
        if (!PyDict_Check(records)) {
            PyErr_SetString(PyExc_TypeError, "pending transactions must be dicts");
            rc = -1;
        }
        else if (PyDict_DelItem(records, k) < 0) {
            if (PyErr_ExceptionMatches(PyExc_KeyError))
                PyErr_Clear();
            else
                rc = -1;
        }
    }
    Py_DECREF(k);
    return rc;
}

/* (offset, value) of a record, as the Python replay keeps it in a transaction. */
static PyObject *
kept(const unsigned char *p, const Rec *r, int64_t offset)
{
    PyObject *o = PyLong_FromLongLong(offset);
    PyObject *v = o == NULL ? NULL : PyBytes_FromStringAndSize((const char *)p + r->value_at,
                                                                r->value_len);
    PyObject *pair = v == NULL ? NULL : PyTuple_Pack(2, o, v);
    Py_XDECREF(o);
    Py_XDECREF(v);
    return pair;
}

/*
 * Replay the `count` records of p[0:n] (already checked by records_ok) as RecordReplay does:
 * a plain batch's into the table, tombstones also dropping their key from open transactions;
 * a transactional batch's values into its producer's pending dict (`txn`), its tombstones as a
 * plain batch's. -1 on error (MemoryError, or a pending transaction that is not a dict).
 */
static int
replay_records(LastRecords *t, const unsigned char *p, Py_ssize_t n, int64_t count,
               int64_t base, const Rec *recs, PyObject *pending, PyObject *txn)
{
    Py_ssize_t q = 0;
    for (int64_t i = 0; i < count; i++) {
        Rec r;
        if (count <= KEPT_RECORDS)
            r = recs[i];
        else
            next_record(p, n, &q, &r);
        const int64_t offset = base + r.offset_delta;
        const unsigned char *key = p + r.key_at;
        if (txn != NULL && r.value_len >= 0) {
            PyObject *k = r.key_len < 0 ? Py_NewRef(Py_None)
                : PyBytes_FromStringAndSize((const char *)key, r.key_len);
            PyObject *v = k == NULL ? NULL : kept(p, &r, offset);
            int bad = v == NULL || PyDict_SetItem(txn, k, v) < 0;
            Py_XDECREF(k);
            Py_XDECREF(v);
            if (bad)
                return -1;
            continue;
        }
        Py_hash_t hash = r.key_len < 0 ? NONE_HASH : hash_bytes(key, r.key_len);
        Py_ssize_t e = entry_for(t, hash, key, r.key_len);
        PyObject *old = NULL;
        if (e < 0 || store_raw(t, e, offset, p + r.value_at, r.value_len, &old) < 0)
            return -1;
        Py_XDECREF(old);  /* what a replay stored, never code that could reenter (busy) */
        if (r.value_len < 0 && drop_pending(pending, key, r.key_len) < 0)
            return -1;
    }
    return 0;
}

/* ---- methods -------------------------------------------------------------------------- */

PyDoc_STRVAR(scan_doc,
"scan(buf, position, end, limit, log_start_offset, pending, end_transaction)\n"
"--\n\n"
"Replay the uncompressed v2 batches of buf[position:end] as group_loader._scan and\n"
"RecordReplay would, starting no batch at or after limit: plain batches into the table,\n"
"transactional ones into pending (RecordReplay.pending: producer id -> {key: (offset,\n"
"value)}), and for each COMMIT or ABORT marker end_transaction(producer_id, commit).\n"
"Returns (position, batches, records, next_offset, reason): where it stopped, the batches\n"
"passed (replayed or below the log start), the records replayed, the offset after the last\n"
"batch replayed (None if none) and why it stopped (STOP_*).");

static PyObject *
LastRecords_scan(LastRecords *t, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 7) {
        PyErr_Format(PyExc_TypeError, "scan expected 7 arguments, got %zd", nargs);
        return NULL;
    }
    Py_ssize_t position = PyLong_AsSsize_t(args[1]);
    Py_ssize_t end = position == -1 && PyErr_Occurred() ? -1 : PyLong_AsSsize_t(args[2]);
    Py_ssize_t limit = end == -1 && PyErr_Occurred() ? -1 : PyLong_AsSsize_t(args[3]);
    long long log_start = limit == -1 && PyErr_Occurred() ? -1 : PyLong_AsLongLong(args[4]);
    PyObject *pending = args[5], *end_transaction = args[6];
    if (log_start == -1 && PyErr_Occurred())
        return NULL;
    if (!PyDict_Check(pending) || !PyCallable_Check(end_transaction)) {
        PyErr_SetString(PyExc_TypeError, "scan: pending must be a dict and end_transaction "
                                         "callable");
        return NULL;
    }
    if (check_idle(t) < 0)
        return NULL;
    Py_buffer view;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0)
        return NULL;
    if (position < 0 || end < position || end > view.len) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "scan: position and end must lie in the buffer");
        return NULL;
    }
    const unsigned char *d = view.buf;
    Py_ssize_t batches = 0, replayed = 0;
    int64_t next_offset = 0;
    int has_next = 0, reason = STOP_END, failed = 0;
    t->busy = 1;
    while (position < end - HEADER_UP_TO_MAGIC) {
        if (position >= limit) {
            reason = STOP_LIMIT;
            break;
        }
        const unsigned char *p = d + position;
        reason = STOP_BATCH;
        if (end - position < V2_OVERHEAD)
            break;
        const int64_t stop = position + LOG_OVERHEAD + (int64_t)(int32_t)kw_be32(p + 8);
        const unsigned char attributes = p[22];  /* the low byte holds every flag read here */
        if (p[16] != 2 || stop > end || stop < position + V2_OVERHEAD
                || (attributes & CODEC_MASK) != 0)
            break;
        const int64_t base = (int64_t)kw_be64(p);
        int64_t last;
        reason = STOP_RECORDS;
        if (__builtin_add_overflow(base, (int64_t)(int32_t)kw_be32(p + 23), &last)
                || last == INT64_MAX)
            break;
        if (last >= log_start) {
            const unsigned char *area = p + V2_OVERHEAD;
            const Py_ssize_t size = (Py_ssize_t)(stop - position), n = size - V2_OVERHEAD;
            const int64_t count = (int32_t)kw_be32(p + 57);
            Rec recs[KEPT_RECORDS], *first = &recs[0];
            reason = STOP_CRC;
            if (pylogctl_crc32c(0, p + 21, (size_t)(size - 21)) != kw_be32(p + 17))
                break;
            reason = STOP_RECORDS;
            if (!records_ok(area, n, count, base, recs))
                break;
            if (attributes & CONTROL_FLAG) {
                /* RecordReplay._marker: the first record's key says the type */
                if (count > 0) {
                    if (first->key_len < 4 || (area[first->key_at] & 0x80))
                        break;  /* parse_control_key raises: Python's note */
                    const int type = (area[first->key_at + 2] << 8) | area[first->key_at + 3];
                    if (type == CONTROL_ABORT || type == CONTROL_COMMIT) {
                        t->busy = 0;  /* the callback updates the table */
                        PyObject *r = PyObject_CallFunction(
                            end_transaction, "LO", (long long)kw_be64(p + 43),
                            type == CONTROL_COMMIT ? Py_True : Py_False);
                        t->busy = 1;
                        if (r == NULL) {
                            failed = 1;
                            break;
                        }
                        Py_DECREF(r);
                    }
                }
            }
            else {
                PyObject *txn = NULL;
                if (attributes & TRANSACTIONAL_FLAG) {
                    PyObject *pid = PyLong_FromLongLong((long long)kw_be64(p + 43));
                    PyObject *fresh = pid == NULL ? NULL : PyDict_New();
                    txn = fresh == NULL ? NULL : PyDict_SetDefault(pending, pid, fresh);
                    Py_XDECREF(pid);
                    Py_XDECREF(fresh);
                    if (txn != NULL && !PyDict_Check(txn)) {
                        PyErr_SetString(PyExc_TypeError, "pending transactions must be dicts");
                        txn = NULL;
                    }
                    if (txn == NULL) {
                        failed = 1;
                        break;
                    }
                }
                /* borrowed: pending holds it, and nothing here removes it */
                if (replay_records(t, area, n, count, base, recs, pending, txn) < 0) {
                    failed = 1;
                    break;
                }
                replayed += (Py_ssize_t)count;
            }
            next_offset = last + 1;
            has_next = 1;
        }
        position = (Py_ssize_t)stop;
        batches++;
        reason = STOP_END;
    }
    t->busy = 0;
    PyBuffer_Release(&view);
    if (failed)
        return NULL;
    if (!has_next)
        return Py_BuildValue("(nnnOi)", position, batches, replayed, Py_None, reason);
    return Py_BuildValue("(nnnLi)", position, batches, replayed, (long long)next_offset, reason);
}

PyDoc_STRVAR(get_doc, "get(key, default=None): what the table holds for key, else default.");

static PyObject *
LastRecords_get(LastRecords *t, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs < 1 || nargs > 2) {
        PyErr_SetString(PyExc_TypeError, "get(key, default=None)");
        return NULL;
    }
    const unsigned char *key;
    Py_ssize_t key_len;
    Py_hash_t hash;
    size_t slot;
    if (check_idle(t) < 0 || key_bytes(args[0], &key, &key_len, &hash) < 0)
        return NULL;
    Py_ssize_t e = t->n ? find(t, hash, key, key_len, &slot) : -1;
    if (e < 0)
        return Py_NewRef(nargs == 2 ? args[1] : Py_None);
    return entry_value(&t->entries[e]);
}

static int
LastRecords_ass_subscript(LastRecords *t, PyObject *key_obj, PyObject *value)
{
    const unsigned char *key;
    Py_ssize_t key_len;
    Py_hash_t hash;
    if (value == NULL) {
        PyErr_SetString(PyExc_TypeError, "LastRecords entries cannot be deleted");
        return -1;
    }
    if (check_idle(t) < 0 || key_bytes(key_obj, &key, &key_len, &hash) < 0)
        return -1;
    Py_ssize_t e = entry_for(t, hash, key, key_len);
    if (e < 0)
        return -1;
    PyObject *old = t->entries[e].obj;
    t->entries[e].obj = Py_NewRef(value);
    Py_XDECREF(old);
    return 0;
}

PyDoc_STRVAR(update_doc, "update(pairs): table[key] = value for each (key, value), in order.");

static PyObject *
LastRecords_update(LastRecords *t, PyObject *pairs)
{
    PyObject *it = PyObject_GetIter(pairs);
    if (it == NULL)
        return NULL;
    PyObject *pair;
    while ((pair = PyIter_Next(it)) != NULL) {
        int bad = !PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2;
        if (bad)
            PyErr_SetString(PyExc_TypeError, "update() takes (key, value) tuples");
        else
            bad = LastRecords_ass_subscript(t, PyTuple_GET_ITEM(pair, 0),
                                            PyTuple_GET_ITEM(pair, 1)) < 0;
        Py_DECREF(pair);
        if (bad) {
            Py_DECREF(it);
            return NULL;
        }
    }
    Py_DECREF(it);
    if (PyErr_Occurred())
        return NULL;
    Py_RETURN_NONE;
}

PyDoc_STRVAR(to_dict_doc, "to_dict(): the table as a dict, in first-insertion order.");

static PyObject *
LastRecords_to_dict(LastRecords *t, PyObject *Py_UNUSED(ignored))
{
    if (check_idle(t) < 0)
        return NULL;
    PyObject *out = PyDict_New();
    if (out == NULL)
        return NULL;
    t->busy = 1;  /* an allocation may run a finalizer: nothing may touch the table */
    for (Py_ssize_t e = 0; e < t->n; e++) {
        const Entry *en = &t->entries[e];
        PyObject *key = en->key_len < 0 ? Py_NewRef(Py_None)
            : PyBytes_FromStringAndSize((const char *)en->data, en->key_len);
        PyObject *value = key == NULL ? NULL : entry_value(en);
        int bad = value == NULL || PyDict_SetItem(out, key, value) < 0;
        Py_XDECREF(key);
        Py_XDECREF(value);
        if (bad) {
            t->busy = 0;
            Py_DECREF(out);
            return NULL;
        }
    }
    t->busy = 0;
    return out;
}

static Py_ssize_t
LastRecords_length(LastRecords *t)
{
    return t->n;
}

static PyObject *
LastRecords_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    if (PyTuple_GET_SIZE(args) != 0 || (kwds != NULL && PyDict_GET_SIZE(kwds) != 0)) {
        PyErr_SetString(PyExc_TypeError, "LastRecords() takes no arguments");
        return NULL;
    }
    LastRecords *t = PyObject_GC_New(LastRecords, type);
    if (t == NULL)
        return NULL;
    t->entries = NULL;
    t->n = t->cap = 0;
    t->busy = 0;
    t->mask = 15;
    t->slots = PyMem_Malloc(16 * sizeof(Py_ssize_t));
    if (t->slots == NULL) {
        t->mask = 0;
        Py_DECREF(t);
        return PyErr_NoMemory();
    }
    memset(t->slots, 0xff, 16 * sizeof(Py_ssize_t));
    PyObject_GC_Track(t);
    return (PyObject *)t;
}

static int
LastRecords_traverse(LastRecords *t, visitproc visit, void *arg)
{
    for (Py_ssize_t e = 0; e < t->n; e++)
        Py_VISIT(t->entries[e].obj);
    return 0;
}

static int
LastRecords_clear(LastRecords *t)
{
    for (Py_ssize_t e = 0; e < t->n; e++)
        Py_CLEAR(t->entries[e].obj);
    return 0;
}

static void
LastRecords_dealloc(LastRecords *t)
{
    PyObject_GC_UnTrack(t);
    LastRecords_clear(t);
    for (Py_ssize_t e = 0; e < t->n; e++)
        PyMem_Free(t->entries[e].data);
    PyMem_Free(t->entries);
    PyMem_Free(t->slots);
    PyObject_GC_Del(t);
}

static PyMethodDef LastRecords_methods[] = {
    {"scan", (PyCFunction)(void (*)(void))LastRecords_scan, METH_FASTCALL, scan_doc},
    {"get", (PyCFunction)(void (*)(void))LastRecords_get, METH_FASTCALL, get_doc},
    {"update", (PyCFunction)LastRecords_update, METH_O, update_doc},
    {"to_dict", (PyCFunction)LastRecords_to_dict, METH_NOARGS, to_dict_doc},
    {NULL, NULL, 0, NULL},
};

static PyMappingMethods LastRecords_mapping = {
    .mp_length = (lenfunc)LastRecords_length,
    .mp_ass_subscript = (objobjargproc)LastRecords_ass_subscript,
};

PyDoc_STRVAR(LastRecords_doc,
"LastRecords()\n--\n\n"
"The last record of each key: a write-only mapping (bytes or None keys, first-insertion\n"
"order) that scan() fills from plain v2 batches with (offset, value) pairs.");

static PyTypeObject LastRecords_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "pylogctl.groups._offsets_scan.LastRecords",
    .tp_basicsize = sizeof(LastRecords),
    .tp_dealloc = (destructor)LastRecords_dealloc,
    .tp_as_mapping = &LastRecords_mapping,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = LastRecords_doc,
    .tp_traverse = (traverseproc)LastRecords_traverse,
    .tp_clear = (inquiry)LastRecords_clear,
    .tp_methods = LastRecords_methods,
    .tp_new = LastRecords_new,
};

static struct PyModuleDef offsets_scan_module = {
    PyModuleDef_HEAD_INIT,
    "pylogctl.groups._offsets_scan",
    "Optional C accelerator of the __consumer_offsets replay (see _offsets_scan.c).",
    -1,
    NULL,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__offsets_scan(void)
{
    pylogctl_crc32c_init();
    if (PyType_Ready(&LastRecords_Type) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&offsets_scan_module);
    if (m == NULL)
        return NULL;
    if (PyModule_AddObjectRef(m, "LastRecords", (PyObject *)&LastRecords_Type) < 0
            || PyModule_AddIntConstant(m, "STOP_END", STOP_END) < 0
            || PyModule_AddIntConstant(m, "STOP_LIMIT", STOP_LIMIT) < 0
            || PyModule_AddIntConstant(m, "STOP_BATCH", STOP_BATCH) < 0
            || PyModule_AddIntConstant(m, "STOP_CRC", STOP_CRC) < 0
            || PyModule_AddIntConstant(m, "STOP_RECORDS", STOP_RECORDS) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
