/*
 * pylogctl.format._speedups -- optional C version of record_batch.decode_records_py, and of
 * the per-batch work around it.
 *
 * Why: decoding v2 records is the hot loop of every deep read, and in pure Python it is
 * bounded by interpreter overhead (varint branches, slices, calls): about 1.8 us per
 * ~1 KiB record, under 2x kafka-python. This file does the same work in C and builds the
 * very same objects, so callers cannot tell the two apart. Calling the classes from C still
 * ran their Python constructors, which cost more than the decoding (0.6x aiokafka's compiled
 * reader): the project's Record, Header and RecordBatch are now built directly (see "The
 * project's objects" below), records are decoded where the batch lies (batch_records: no copy
 * of the record area out of the mmap), and FileRecords.batches() frames runs of batches here
 * (scan_batches), checking their CRCs in the same loop once the caller asks is_valid.
 *
 * Contract: for the same arguments, decode_records() returns records equal field by field
 * to decode_records_py(), or raises the same exception type (pylogctl.errors.
 * CorruptRecordError) with the same message and the same position, in the same order of
 * checks. The code below follows the Python function step by step; comments name the
 * Python line each step mirrors. batch_records(batch) is RecordBatch.records()'s Python
 * path (a copy of the area, then decode_records); scan_batches is iter_batches' (it stops
 * before any batch iter_batches would not simply yield).
 *
 * Outside the fast path: the C code works on exact ``bytes`` (decode_records) or a buffer
 * (batch_records) and int64 values. When an argument is anything else (a bytearray or
 * memoryview for decode_records, a bool or an int beyond int64), or when a value would leave
 * int64 (a 10-byte varlong whose raw value needs more than 64 bits, an offset/timestamp/
 * sequence sum that overflows), it returns ``NotImplemented`` before raising or returning
 * anything, and the Python caller decodes the batch instead. Decoding has no side effects,
 * so that rerun is exact; such input only comes from corrupt or hand-made data, never from
 * a readable segment.
 *
 * Built by setup.py as an optional extension: when no compiler is available the install
 * still succeeds and everything runs in Python. PYLOGCTL_NO_SPEEDUPS=1 turns it off.
 *
 * Maintenance: any change to decode_records_py or _read_headers (a check, a message, a
 * position), to RecordBatch.records(), iter_batches, or to the constructors of Record, Header
 * and RecordBatch must be made here too. tests/format/test_fmt_speedups.py compares the
 * decoders on the corpus, on generated and mutated record areas and on every error path;
 * tests/format/test_fmt_batch_scan.py compares FileRecords.batches() with iter_batches and
 * records() with the Python path on the corpus and on generated, damaged segments.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "_kafka_wire.h"

#ifndef Py_T_OBJECT_EX  /* Python 3.11: the names of structmember.h */
#include <structmember.h>
#define Py_T_OBJECT_EX T_OBJECT_EX
#define Py_READONLY READONLY
#endif

uint32_t pylogctl_crc32c(uint32_t crc, const unsigned char *p, size_t n);  /* _crc32c.c */

static PyObject *CorruptRecordError;  /* pylogctl.errors.CorruptRecordError */
static PyObject *java_utf8;           /* pylogctl.format.java_string.java_utf8 */
static PyObject *position_kwnames;    /* ("position",) for CorruptRecordError(msg, position=) */
static PyObject *str_position;        /* "position" */

/* The last few ASCII header keys decoded: a topic's records carry the same few keys over and
 * over, and handing out the same (immutable) str saves decoding and allocating it. */
#define KEY_CACHE_SIZE 8
#define KEY_CACHE_MAX_LEN 64
static PyObject *key_cache[KEY_CACHE_SIZE];
static unsigned key_cache_next;

/* A header key as Java decodes it (Utils.utf8): strict UTF-8, else Java's replacement
 * rules in pylogctl.format.java_string (rare: keys are nearly always valid text). */
static PyObject *
header_key(const char *s, Py_ssize_t n)
{
    if (n <= KEY_CACHE_MAX_LEN) {
        for (int i = 0; i < KEY_CACHE_SIZE; i++) {
            PyObject *k = key_cache[i];  /* compact ASCII: its data is its UTF-8 */
            if (k != NULL && PyUnicode_GET_LENGTH(k) == n && memcmp(PyUnicode_DATA(k), s, n) == 0)
                return Py_NewRef(k);
        }
    }
    PyObject *key = PyUnicode_DecodeUTF8(s, n, NULL);
    if (key != NULL && n <= KEY_CACHE_MAX_LEN && PyUnicode_IS_COMPACT_ASCII(key)) {
        Py_XSETREF(key_cache[key_cache_next], Py_NewRef(key));
        key_cache_next = (key_cache_next + 1) % KEY_CACHE_SIZE;
    }
    if (key != NULL || !PyErr_ExceptionMatches(PyExc_UnicodeDecodeError))
        return key;
    PyErr_Clear();
    PyObject *raw = PyBytes_FromStringAndSize(s, n);
    if (raw == NULL)
        return NULL;
    key = PyObject_CallOneArg(java_utf8, raw);
    Py_DECREF(raw);
    return key;
}

/* Raise CorruptRecordError(message, position=position); always returns -1. */
static int
raise_corrupt(Py_ssize_t position, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    PyObject *msg = PyUnicode_FromFormatV(fmt, ap);
    va_end(ap);
    if (msg == NULL)
        return -1;
    PyObject *pos = PyLong_FromSsize_t(position);
    if (pos == NULL) {
        Py_DECREF(msg);
        return -1;
    }
    PyObject *args[2] = {msg, pos};
    PyObject *exc = PyObject_Vectorcall(CorruptRecordError, args, 1, position_kwnames);
    Py_DECREF(msg);
    Py_DECREF(pos);
    if (exc == NULL)
        return -1;
    PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
    Py_DECREF(exc);
    return -1;
}

/* What the Python loop's "except IndexError" turns a read past the buffer into. */
static int
raise_structure(Py_ssize_t start)
{
    return raise_corrupt(start, "Found invalid record structure");
}

/* The pending exception as one (normalized) object, or NULL; and back. */
static PyObject *
take_exception(void)
{
#if PY_VERSION_HEX >= 0x030C0000
    return PyErr_GetRaisedException();
#else
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    if (type == NULL)
        return NULL;
    PyErr_NormalizeException(&type, &value, &tb);
    if (tb != NULL) {
        PyException_SetTraceback(value, tb);
        Py_DECREF(tb);
    }
    Py_DECREF(type);
    return value;
#endif
}

static void
restore_exception(PyObject *exc)
{
#if PY_VERSION_HEX >= 0x030C0000
    PyErr_SetRaisedException(exc);
#else
    PyErr_Restore(Py_NewRef((PyObject *)Py_TYPE(exc)), exc, PyException_GetTraceback(exc));
#endif
}

/*
 * Mirror of the loop's handler in decode_records_py:
 *
 *     except (IndexError, CorruptRecordError) as exc:
 *         if isinstance(exc, CorruptRecordError) and exc.position is not None and exc.position <= end:
 *             raise
 *         raise CorruptRecordError("Found invalid record structure", position=start) from None
 *
 * Every error raised inside the record loop goes through here, including errors from calling
 * the record or header class, so the rule applies exactly as in Python.
 */
static void
translate_loop_error(Py_ssize_t start, Py_ssize_t end)
{
    PyObject *exc = take_exception();
    if (exc == NULL)
        return;
    if (PyErr_GivenExceptionMatches(exc, CorruptRecordError)) {
        PyObject *pos = PyObject_GetAttr(exc, str_position);
        if (pos == NULL) {  /* exc.position raising: so it would in Python */
            Py_DECREF(exc);
            return;
        }
        int keep = 0;
        if (pos != Py_None) {
            PyObject *end_obj = PyLong_FromSsize_t(end);
            keep = end_obj == NULL ? -1 : PyObject_RichCompareBool(pos, end_obj, Py_LE);
            Py_XDECREF(end_obj);
        }
        Py_DECREF(pos);
        if (keep > 0) {
            restore_exception(exc);  /* raise */
            return;
        }
        if (keep < 0) {
            Py_DECREF(exc);
            return;
        }
    }
    else if (!PyErr_GivenExceptionMatches(exc, PyExc_IndexError)) {
        restore_exception(exc);  /* not caught by the handler */
        return;
    }
    Py_DECREF(exc);
    raise_structure(start);
}

/*
 * Mirror of varint.read_varint(buf, pos, max_bytes). Returns 0 with *out and *ppos set,
 * -1 with CorruptRecordError raised ("Truncated varint" / "Varint is too long", at the
 * varint's start), or 1 when the raw value needs more than 64 bits (only possible with
 * max_bytes == 10): the caller then hands the batch over to Python.
 */
static inline int
read_varint(const unsigned char *d, Py_ssize_t end, Py_ssize_t *ppos, int max_bytes,
            int64_t *out)
{
    Py_ssize_t pos = *ppos;
    int64_t v;
    switch (kw_read_varint(d, end, &pos, max_bytes, &v)) {
    case KW_VARINT_OK:
        *out = v;
        *ppos = pos;
        return 0;
    case KW_VARINT_TRUNCATED:
        return raise_corrupt(*ppos, "Truncated varint");
    case KW_VARINT_TOO_LONG:
        return raise_corrupt(*ppos, "Varint is too long, the most significant bit in "
                                    "the %dth byte is set", max_bytes);
    default:  /* KW_VARINT_WIDE: Python keeps going with a big int */
        return 1;
    }
}

/*
 * -- The project's objects, built without running Python code ---------------------------------
 *
 * Calling Record(...) from C runs Record.__init__ in the interpreter: seven attribute stores,
 * and more time than decoding the record itself. For the three classes the hot loops build
 * (Record, Header, RecordBatch), record_batch.py registers the classes once
 * (register_classes); for a registered class whose layout is exactly the one expected, the
 * loops allocate the instance and store its slots directly -- what the class's own
 * constructor does, nothing more:
 *
 *   Record, RecordBatch: a plain __slots__ class (base object, no __dict__, no __weakref__,
 *     no __new__), whose __slots__ are the names below in that order, each an object member
 *     of this class; __init__ assigns each slot one argument (or a fixed value), which the
 *     loops do.
 *   Header: a NamedTuple of two fields (a tuple subclass adding no storage); its __new__ is
 *     tuple.__new__(cls, (key, value)), which the loops do as tuple_subtype_new does.
 *
 * The check runs at registration and again whenever the class changes (its version tag, which
 * CPython resets on any assignment to a class attribute); the constructor found then must be
 * the very function object seen at registration, so a patched __init__ or __new__ turns the
 * fast path off. Any other class, or a registered one that fails the check, is called as
 * before. tests/format/test_fmt_speedups.py and test_fmt_batch_scan.py compare the objects
 * built both ways.
 */

#define FC_MAX_FIELDS 16

typedef struct {
    const char *const *fields;  /* the class's __slots__ in order; NULL for the NamedTuple */
    int nfields;                /* slots, or the NamedTuple's number of fields */
    const char *ctor_name;      /* "__init__" or "__new__" */
    PyTypeObject *cls;          /* the registered class (strong reference), or NULL */
    PyObject *ctor;             /* its constructor at registration (strong reference) */
    unsigned int version;       /* cls->tp_version_tag when last found right; 0: check again */
    int usable;                 /* the last check's verdict */
    Py_ssize_t offsets[FC_MAX_FIELDS];
} FastClass;

static const char *const record_fields[] = {
    "offset", "timestamp", "key", "value", "headers", "sequence", "attributes"};
enum { R_OFFSET, R_TIMESTAMP, R_KEY, R_VALUE, R_HEADERS, R_SEQUENCE, R_ATTRIBUTES, R_N };

static const char *const batch_fields[] = {
    "base_offset", "length", "partition_leader_epoch", "magic", "crc", "attributes",
    "last_offset_delta", "base_timestamp", "max_timestamp", "producer_id", "producer_epoch",
    "base_sequence", "records_count", "position", "_buf", "_valid"};
enum { B_POSITION = 13, B_BUF = 14, B_VALID = 15, B_N = 16 };

static FastClass record_fc = {record_fields, R_N, "__init__", NULL, NULL, 0, 0, {0}};
static FastClass batch_fc = {batch_fields, B_N, "__init__", NULL, NULL, 0, 0, {0}};
static FastClass header_fc = {NULL, 2, "__new__", NULL, NULL, 0, 0, {0}};

/* The class's constructor as found in its own dict (borrowed), or NULL (no exception). */
static PyObject *
fc_own_ctor(FastClass *fc, PyTypeObject *t)
{
    PyObject *dict = t->tp_dict;
    if (dict == NULL || !PyDict_Check(dict))
        return NULL;
    PyObject *ctor = PyDict_GetItemString(dict, fc->ctor_name);  /* no exception */
    return ctor;
}

/* 1 when t has the layout described above (offsets filled in), else 0; never raises. */
static int
fc_layout(FastClass *fc, PyTypeObject *t, Py_ssize_t *offsets)
{
    if (Py_TYPE(t) != &PyType_Type || !(t->tp_flags & Py_TPFLAGS_HEAPTYPE)
            || t->tp_alloc != PyType_GenericAlloc || t->tp_dictoffset != 0
            || t->tp_weaklistoffset != 0 || t->tp_dict == NULL || !PyDict_Check(t->tp_dict))
        return 0;
    PyObject *dict = t->tp_dict;
    if (fc->fields == NULL) {  /* NamedTuple */
        if (t->tp_base != &PyTuple_Type || t->tp_basicsize != PyTuple_Type.tp_basicsize
                || t->tp_itemsize != PyTuple_Type.tp_itemsize)
            return 0;
        PyObject *names = PyDict_GetItemString(dict, "_fields");
        return names != NULL && PyTuple_CheckExact(names)
            && PyTuple_GET_SIZE(names) == fc->nfields;
    }
    if (t->tp_base != &PyBaseObject_Type || t->tp_itemsize != 0
            || t->tp_new != PyBaseObject_Type.tp_new
            || t->tp_basicsize != (Py_ssize_t)(sizeof(PyObject) + fc->nfields * sizeof(PyObject *)))
        return 0;
    PyObject *slots = PyDict_GetItemString(dict, "__slots__");
    if (slots == NULL || !PyTuple_CheckExact(slots) || PyTuple_GET_SIZE(slots) != fc->nfields)
        return 0;
    for (int i = 0; i < fc->nfields; i++) {
        PyObject *name = PyTuple_GET_ITEM(slots, i);
        if (!PyUnicode_Check(name) || PyUnicode_CompareWithASCIIString(name, fc->fields[i]) != 0)
            return 0;
        PyObject *descr = PyDict_GetItemWithError(dict, name);
        if (descr == NULL || !Py_IS_TYPE(descr, &PyMemberDescr_Type)) {
            PyErr_Clear();
            return 0;
        }
        PyMemberDescrObject *md = (PyMemberDescrObject *)descr;
        if (md->d_common.d_type != t || md->d_member->type != Py_T_OBJECT_EX
                || (md->d_member->flags & Py_READONLY)
                || md->d_member->offset < (Py_ssize_t)sizeof(PyObject)
                || md->d_member->offset > t->tp_basicsize - (Py_ssize_t)sizeof(PyObject *))
            return 0;
        offsets[i] = md->d_member->offset;
    }
    return 1;
}

/* Whether fc->cls may be built directly now (see above); never raises. */
static int
fc_check(FastClass *fc)
{
    PyTypeObject *t = fc->cls;
    if (t == NULL)
        return 0;
#ifdef Py_TPFLAGS_VALID_VERSION_TAG
    if (fc->version != 0 && (t->tp_flags & Py_TPFLAGS_VALID_VERSION_TAG)
            && t->tp_version_tag == fc->version)
        return fc->usable;
#endif
    Py_ssize_t offsets[FC_MAX_FIELDS];
    fc->usable = fc_layout(fc, t, offsets) && fc_own_ctor(fc, t) == fc->ctor;
    if (fc->usable)
        memcpy(fc->offsets, offsets, sizeof(offsets));
    fc->version = 0;
#ifdef Py_TPFLAGS_VALID_VERSION_TAG
    /* a lookup through the type gives it a version tag if it has none */
    PyObject *probe = PyObject_GetAttrString((PyObject *)t, fc->ctor_name);
    if (probe == NULL)
        PyErr_Clear();
    Py_XDECREF(probe);
    if (t->tp_flags & Py_TPFLAGS_VALID_VERSION_TAG)
        fc->version = t->tp_version_tag;
#endif
    return fc->usable;
}

/* Whether `cls` is fc's registered class and may be built directly. */
static inline int
fc_ready(FastClass *fc, PyObject *cls)
{
    return cls == (PyObject *)fc->cls && fc_check(fc);
}

/* A new instance of a registered slots class, every slot still NULL, GC-tracked. */
static inline PyObject *
fc_alloc(FastClass *fc)
{
    return fc->cls->tp_alloc(fc->cls, 0);
}

/* Store a new reference in slot i of a fresh instance (which then owns it). */
#define FC_SET(fc, obj, i, value) (*(PyObject **)((char *)(obj) + (fc)->offsets[i]) = (value))

static int
fc_register(FastClass *fc, PyObject *cls)
{
    if (!PyType_Check(cls)) {
        PyErr_SetString(PyExc_TypeError, "register_classes expects classes");
        return -1;
    }
    PyObject *ctor = fc_own_ctor(fc, (PyTypeObject *)cls);
    Py_XSETREF(fc->cls, (PyTypeObject *)Py_NewRef(cls));
    Py_XSETREF(fc->ctor, Py_XNewRef(ctor));
    fc->version = 0;
    fc->usable = 0;
    if (ctor != NULL)
        fc_check(fc);
    return 0;
}

PyDoc_STRVAR(register_classes_doc,
"register_classes(record_class, header_class, batch_class) -> (bool, bool, bool)\n"
"--\n\n"
"Let decode_records, batch_records and scan_batches build these classes' instances\n"
"without calling them (see _speedups.c); returns for each whether its layout allows it.");

static PyObject *
register_classes(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 3) {
        PyErr_Format(PyExc_TypeError, "register_classes expected 3 arguments, got %zd", nargs);
        return NULL;
    }
    if (fc_register(&record_fc, args[0]) < 0 || fc_register(&header_fc, args[1]) < 0
            || fc_register(&batch_fc, args[2]) < 0)
        return NULL;
    return Py_BuildValue("(OOO)", record_fc.usable ? Py_True : Py_False,
                         header_fc.usable ? Py_True : Py_False,
                         batch_fc.usable ? Py_True : Py_False);
}

/*
 * Mirror of _read_headers(data, pos). Returns 0 with *headers (a new tuple) and *ppos set,
 * -1 with an exception set, 1 for "hand over to Python" (never happens for 5-byte varints,
 * kept for symmetry with read_varint). fast_header: build Header directly (see above).
 */
static int
read_headers(const unsigned char *d, Py_ssize_t end, Py_ssize_t *ppos, Py_ssize_t start,
             PyObject *header_class, int fast_header, PyObject **headers)
{
    Py_ssize_t pos = *ppos;
    int64_t count = 0, klen = 0, vlen = 0;
    int rc = read_varint(d, end, &pos, 5, &count);
    if (rc)
        return rc;
    if (count < 0)
        return raise_corrupt(pos, "Found invalid number of record headers %lld", (long long)count);
    if (count > end - pos)
        return raise_corrupt(pos, "Found invalid number of record headers. %lld is larger than "
                                  "the remaining size of the buffer", (long long)count);
    PyObject *tuple = PyTuple_New((Py_ssize_t)count);
    if (tuple == NULL)
        return -1;
    for (Py_ssize_t i = 0; i < (Py_ssize_t)count; i++) {
        if ((rc = read_varint(d, end, &pos, 5, &klen)) != 0)
            goto fail;
        if (klen < 0) {
            rc = raise_corrupt(pos, "Invalid negative header key size %lld", (long long)klen);
            goto fail;
        }
        if (klen > end - pos) {  /* Python: raise IndexError */
            rc = raise_structure(start);
            goto fail;
        }
        PyObject *key = header_key((const char *)d + pos, (Py_ssize_t)klen);
        if (key == NULL) {
            rc = -1;
            goto fail;
        }
        pos += (Py_ssize_t)klen;
        if ((rc = read_varint(d, end, &pos, 5, &vlen)) != 0) {
            Py_DECREF(key);
            goto fail;
        }
        PyObject *value;
        if (vlen >= 0) {
            if (vlen > end - pos) {  /* Python: raise IndexError */
                Py_DECREF(key);
                rc = raise_structure(start);
                goto fail;
            }
            value = PyBytes_FromStringAndSize((const char *)d + pos, (Py_ssize_t)vlen);
            if (value == NULL) {
                Py_DECREF(key);
                rc = -1;
                goto fail;
            }
            pos += (Py_ssize_t)vlen;
        }
        else if (vlen == -1) {
            value = Py_NewRef(Py_None);
        }
        else {
            Py_DECREF(key);
            rc = raise_corrupt(pos, "Found invalid record structure: header value size %lld",
                               (long long)vlen);
            goto fail;
        }
        PyObject *header;
        if (fast_header) {  /* tuple_subtype_new: the class's tuple of (key, value) */
            header = header_fc.cls->tp_alloc(header_fc.cls, 2);
            if (header != NULL) {
                PyTuple_SET_ITEM(header, 0, key);
                PyTuple_SET_ITEM(header, 1, value);
            }
            else {
                Py_DECREF(key);
                Py_DECREF(value);
            }
        }
        else {
            PyObject *args[2] = {key, value};
            header = PyObject_Vectorcall(header_class, args, 2, NULL);
            Py_DECREF(key);
            Py_DECREF(value);
        }
        if (header == NULL) {
            rc = -1;
            goto fail;
        }
        PyTuple_SET_ITEM(tuple, i, header);
    }
    *headers = tuple;
    *ppos = pos;
    return 0;
fail:
    Py_DECREF(tuple);  /* unfilled slots are NULL, which tuple dealloc skips */
    return rc;
}

/* data[pos:pos + n] for n >= 0 and pos <= end (Python clamps the slice). */
static inline PyObject *
slice(const unsigned char *d, Py_ssize_t end, Py_ssize_t pos, int64_t n)
{
    Py_ssize_t stop = (n > end - pos) ? end : pos + (Py_ssize_t)n;
    return PyBytes_FromStringAndSize((const char *)d + pos, stop - pos);
}

/*
 * pos += n after a key or value. Past the end of data, Python's pos only feeds the next
 * data[pos], which raises IndexError for any pos >= end; clamping to end + 1 keeps that
 * behaviour without overflowing a 32-bit Py_ssize_t.
 */
static inline Py_ssize_t
advance(Py_ssize_t end, Py_ssize_t pos, int64_t n)
{
    return (n > end - pos) ? end + 1 : pos + (Py_ssize_t)n;
}

/*
 * A record's key or value: data[pos] must exist (IndexError), then a varint size and that many
 * bytes, -1 giving None. Returns 0 with *out (a new reference) and *ppos set, -1 with an
 * exception set, 1 for "hand over to Python" (as read_varint).
 */
static int
read_nullable_bytes(const unsigned char *d, Py_ssize_t end, Py_ssize_t *ppos, Py_ssize_t start,
                    const char *what, PyObject **out)
{
    Py_ssize_t pos = *ppos;
    int64_t n = 0;
    int rc;
    if (pos >= end)
        return raise_structure(start);
    if ((rc = read_varint(d, end, &pos, 5, &n)) != 0)
        return rc;
    if (n >= 0) {
        if ((*out = slice(d, end, pos, n)) == NULL)
            return -1;
        pos = advance(end, pos, n);
    }
    else if (n == -1) {
        *out = Py_NewRef(Py_None);
    }
    else {
        return raise_corrupt(pos, "Found invalid record structure: %s size %lld", what,
                             (long long)n);
    }
    *ppos = pos;
    return 0;
}

/* decode_area's `known` ints: objects equal to these values, to hand out instead of new ones
   (the batch's fields; base_offset, base_timestamp and base_sequence must be these values) */
enum { KNOWN_BASE_OFFSET, KNOWN_BASE_TIMESTAMP, KNOWN_BASE_SEQUENCE, KNOWN_MAX_TIMESTAMP };

#define PREFETCH_DIST 4096
#if defined(__GNUC__) || defined(__clang__)
#define PREFETCH(p) __builtin_prefetch(p)
#else
#define PREFETCH(p) ((void)(p))
#endif

/*
 * decode_records_py over d[0:end], the record area (positions in errors are relative to it).
 * Returns the list, NULL with an exception set, or NotImplemented (new reference) when a
 * value leaves int64. The caller holds the buffer for the whole call: the record and header
 * classes may run Python code, which then cannot resize or close it under us.
 */
static PyObject *
decode_area(const unsigned char *d, const Py_ssize_t end, int64_t count, int64_t base_offset,
            int64_t base_timestamp, int64_t base_sequence, PyObject *lat_obj,
            PyObject *record_class, PyObject *header_class, Py_ssize_t pf_end,
            Py_ssize_t pf_dist, PyObject *const *known)
{
    if (count < 0) {
        raise_corrupt(0, "Found invalid record count %lld in magic v2 batch", (long long)count);
        return NULL;
    }
    const int fast_record = fc_ready(&record_fc, record_class);
    const int fast_header = fc_ready(&header_fc, header_class);
    /* The list is made at its final size and filled in place (its unfilled slots are NULL
       until then, which list dealloc skips on an error) when no Python code can run in the
       loop to see it, and the count is plausible: a record takes at least 7 bytes, so a
       larger count must fail before the list is full. */
    const int sized = fast_record && fast_header && count <= end / 7 + 1;
    PyObject *out = PyList_New(sized ? (Py_ssize_t)count : 0);
    if (out == NULL)
        return NULL;
    Py_ssize_t pos = 0, start = 0;
    const int has_seq = base_sequence >= 0;
    int rc;
    PyObject *key = NULL, *value = NULL, *headers = NULL;
    PyObject *last_ts = NULL;  /* the last timestamp object made (a reference of our own) */
    int64_t last_ts_value = 0;
    Py_ssize_t pf_next = 0;  /* d[:pf_next] was prefetched */
    int64_t known_max_ts = 0;
    if (known != NULL && !kw_as_int64(known[KNOWN_MAX_TIMESTAMP], &known_max_ts))
        known = NULL;
    for (int64_t i = 0; i < count; i++) {
        int64_t size = 0, ts_delta = 0, off_delta = 0;
        /* if pos >= end: raise ...premature EOF reached (at pos) */
        if (pos >= end) {
            raise_corrupt(pos, "Incorrect declared batch size, premature EOF reached");
            goto loop_error;
        }
        /* size = varint */
        if ((rc = read_varint(d, end, &pos, 5, &size)) != 0)
            goto loop_stop;
        start = pos;
        if (size > end - pos || size < 0) {
            raise_corrupt(start, "Invalid record size: expected %lld bytes in record payload, "
                                 "but instead the buffer has only %zd remaining bytes.",
                          (long long)size, end - pos);
            goto loop_error;
        }
        if (pf_dist > 0) {
            Py_ssize_t want = start + (Py_ssize_t)size;
            want = pf_end - want > pf_dist ? want + pf_dist : pf_end;
            for (; pf_next < want; pf_next += 64)
                PREFETCH(d + pf_next);
        }
        /* attributes = data[pos] (IndexError if past the end) */
        if (pos >= end) {
            raise_structure(start);
            goto loop_error;
        }
        const unsigned char attributes = d[pos++];
        /* timestamp delta: data[pos] must exist (IndexError), then varlong */
        if (pos >= end) {
            raise_structure(start);
            goto loop_error;
        }
        if ((rc = read_varint(d, end, &pos, 10, &ts_delta)) != 0)
            goto loop_stop;
        /* offset delta */
        if (pos >= end) {
            raise_structure(start);
            goto loop_error;
        }
        if ((rc = read_varint(d, end, &pos, 5, &off_delta)) != 0)
            goto loop_stop;
        /* key, then value (pos may now be past the end: data[pos] raises IndexError) */
        if ((rc = read_nullable_bytes(d, end, &pos, start, "key", &key)) != 0)
            goto loop_stop;
        if ((rc = read_nullable_bytes(d, end, &pos, start, "value", &value)) != 0)
            goto loop_stop;
        /* headers: b = data[pos]; 0 -> (), else _read_headers(data, pos) */
        if (pos >= end) {
            raise_structure(start);
            goto loop_error;
        }
        if (d[pos] == 0) {
            headers = PyTuple_New(0);  /* the empty-tuple singleton, as () in Python */
            if (headers == NULL)
                goto loop_error;
            pos += 1;
        }
        else if ((rc = read_headers(d, end, &pos, start, header_class, fast_header,
                                    &headers)) != 0) {
            goto loop_stop;
        }
        if (pos - start != size) {
            raise_corrupt(start, "Invalid record size: expected to read %lld bytes in record "
                                 "payload, but instead read %zd", (long long)size, pos - start);
            goto loop_error;
        }
        /* seq = base_sequence + off_delta, wrapped once past int32 max; offset; timestamp */
        int64_t seq = -1, offset, timestamp = 0;
        if (has_seq) {
            if (kw_add_overflows(base_sequence, off_delta, &seq)) {
                rc = 1;
                goto loop_stop;
            }
            if (seq > KW_INT32_MAX)
                seq -= 0x80000000LL;
        }
        if (kw_add_overflows(base_offset, off_delta, &offset)) {
            rc = 1;
            goto loop_stop;
        }
        if (lat_obj == Py_None && kw_add_overflows(base_timestamp, ts_delta, &timestamp)) {
            rc = 1;
            goto loop_stop;
        }
        /* An int equal to one at hand is that object (ints are immutable, and making one costs
           as much as a slot store): the batch's own base offset, base sequence, base and max
           timestamps (a first record's, a last record's), and the timestamp of the record
           before (records of a batch often share one). */
        PyObject *rargs[R_N];
        rargs[R_OFFSET] = known && offset == base_offset ? Py_NewRef(known[KNOWN_BASE_OFFSET])
                                                         : PyLong_FromLongLong(offset);
        if (lat_obj != Py_None)
            rargs[R_TIMESTAMP] = Py_NewRef(lat_obj);
        else if (last_ts != NULL && timestamp == last_ts_value)
            rargs[R_TIMESTAMP] = Py_NewRef(last_ts);
        else {
            if (known && timestamp == base_timestamp)
                rargs[R_TIMESTAMP] = Py_NewRef(known[KNOWN_BASE_TIMESTAMP]);
            else if (known && timestamp == known_max_ts)
                rargs[R_TIMESTAMP] = Py_NewRef(known[KNOWN_MAX_TIMESTAMP]);
            else
                rargs[R_TIMESTAMP] = PyLong_FromLongLong(timestamp);
            if (rargs[R_TIMESTAMP] != NULL) {
                Py_XSETREF(last_ts, Py_NewRef(rargs[R_TIMESTAMP]));
                last_ts_value = timestamp;
            }
        }
        rargs[R_KEY] = key;
        rargs[R_VALUE] = value;
        rargs[R_HEADERS] = headers;
        rargs[R_SEQUENCE] = known && has_seq && seq == base_sequence
            ? Py_NewRef(known[KNOWN_BASE_SEQUENCE]) : PyLong_FromLongLong(seq);
        rargs[R_ATTRIBUTES] = PyLong_FromLong(attributes);
        key = value = headers = NULL;  /* owned by rargs now */
        PyObject *record = NULL;
        if (rargs[R_OFFSET] && rargs[R_TIMESTAMP] && rargs[R_SEQUENCE] && rargs[R_ATTRIBUTES]) {
            if (fast_record) {
                /* Record.__init__: each argument to its slot */
                record = fc_alloc(&record_fc);
                if (record != NULL)
                    for (int f = 0; f < R_N; f++) {
                        FC_SET(&record_fc, record, f, rargs[f]);  /* the record owns it */
                        rargs[f] = NULL;
                    }
            }
            else {
                record = PyObject_Vectorcall(record_class, rargs, R_N, NULL);
            }
        }
        for (int f = 0; f < R_N; f++)
            Py_XDECREF(rargs[f]);
        if (record == NULL)
            goto loop_error;
        if (sized) {
            PyList_SET_ITEM(out, (Py_ssize_t)i, record);
        }
        else {
            int err = PyList_Append(out, record);
            Py_DECREF(record);
            if (err < 0)
                goto loop_error;
        }
    }
    Py_XDECREF(last_ts);
    if (pos != end) {
        raise_corrupt(pos, "Incorrect declared batch size, records still remaining in file");
        Py_DECREF(out);
        return NULL;
    }
    return out;

loop_stop:  /* rc < 0: an error is set; rc > 0: outside int64, let Python decode it */
    if (rc > 0) {
        Py_XDECREF(key);
        Py_XDECREF(value);
        Py_XDECREF(headers);
        Py_XDECREF(last_ts);
        Py_DECREF(out);
        Py_RETURN_NOTIMPLEMENTED;
    }
loop_error:
    Py_XDECREF(key);
    Py_XDECREF(value);
    Py_XDECREF(headers);
    Py_XDECREF(last_ts);
    Py_DECREF(out);
    translate_loop_error(start, end);
    return NULL;
}

/* The six int arguments of decode_records (count .. log_append_time) as int64; 0 when one is
 * not an exact int within int64 (or None for log_append_time). */
static int
decode_args(PyObject *const *args, int64_t *count, int64_t *base_offset,
            int64_t *base_timestamp, int64_t *base_sequence)
{
    int64_t lat = 0;
    return kw_as_int64(args[0], count) && kw_as_int64(args[1], base_offset)
        && kw_as_int64(args[2], base_timestamp) && kw_as_int64(args[3], base_sequence)
        && (args[4] == Py_None || kw_as_int64(args[4], &lat));
}

PyDoc_STRVAR(decode_records_doc,
"decode_records(data, count, base_offset, base_timestamp, base_sequence, log_append_time,\n"
"               record_class, header_class)\n"
"--\n\n"
"C version of pylogctl.format.record_batch.decode_records_py: the same records (the\n"
"registered classes built directly, any other called) or the same CorruptRecordError.\n"
"Returns NotImplemented for input outside bytes/int64, which the caller then decodes in\n"
"Python.");

static PyObject *
decode_records(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 8) {
        PyErr_Format(PyExc_TypeError, "decode_records expected 8 arguments, got %zd", nargs);
        return NULL;
    }
    PyObject *data = args[0];
    int64_t count, base_offset, base_timestamp, base_sequence;
    if (!PyBytes_CheckExact(data)
            || !decode_args(args + 1, &count, &base_offset, &base_timestamp, &base_sequence))
        Py_RETURN_NOTIMPLEMENTED;
    /* bytes are immutable: no buffer to hold */
    return decode_area((const unsigned char *)PyBytes_AS_STRING(data), PyBytes_GET_SIZE(data),
                       count, base_offset, base_timestamp, base_sequence, args[5], args[6],
                       args[7], 0, 0, NULL);
}

PyDoc_STRVAR(batch_records_doc,
"batch_records(batch, record_class, header_class)\n"
"--\n\n"
"RecordBatch.records() of an uncompressed batch, without copying its record area: the\n"
"records decode_records(bytes(batch._buf[start:stop]), ...) gives, read in place. Error\n"
"positions are relative to the record area, as decode_records'. NotImplemented for a\n"
"compressed batch, one that is not a registered RecordBatch with int64 fields, or whatever\n"
"decode_records would hand back; the caller then takes the Python path.");


/* A registered class's slot (borrowed; NULL when unset). */
#define FC_GET(fc, obj, i) (*(PyObject **)((char *)(obj) + (fc)->offsets[i]))

enum { B_BASE_OFFSET = 0, B_LENGTH = 1, B_ATTRIBUTES = 5, B_BASE_TIMESTAMP = 7,
       B_MAX_TIMESTAMP = 8, B_BASE_SEQUENCE = 11, B_RECORDS_COUNT = 12 };

static PyObject *
batch_records(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 3) {
        PyErr_Format(PyExc_TypeError, "batch_records expected 3 arguments, got %zd", nargs);
        return NULL;
    }
    PyObject *batch = args[0];
    if (batch_fc.cls == NULL || Py_TYPE(batch) != batch_fc.cls || !fc_check(&batch_fc))
        Py_RETURN_NOTIMPLEMENTED;
    /* what records() reads of self; an unset slot is Python's AttributeError to raise */
    PyObject *attrs_obj = FC_GET(&batch_fc, batch, B_ATTRIBUTES);
    PyObject *pos_obj = FC_GET(&batch_fc, batch, B_POSITION);
    PyObject *len_obj = FC_GET(&batch_fc, batch, B_LENGTH);
    PyObject *buf = FC_GET(&batch_fc, batch, B_BUF);
    PyObject *count_obj = FC_GET(&batch_fc, batch, B_RECORDS_COUNT);
    PyObject *base_obj = FC_GET(&batch_fc, batch, B_BASE_OFFSET);
    PyObject *ts_obj = FC_GET(&batch_fc, batch, B_BASE_TIMESTAMP);
    PyObject *seq_obj = FC_GET(&batch_fc, batch, B_BASE_SEQUENCE);
    PyObject *max_ts_obj = FC_GET(&batch_fc, batch, B_MAX_TIMESTAMP);
    int64_t attributes, position, length, count, base_offset, base_timestamp, base_sequence;
    int64_t max_ts;
    if (!attrs_obj || !pos_obj || !len_obj || !buf || !count_obj || !base_obj || !ts_obj
            || !seq_obj || !max_ts_obj
            || !kw_as_int64(attrs_obj, &attributes) || !kw_as_int64(pos_obj, &position)
            || !kw_as_int64(len_obj, &length) || !kw_as_int64(count_obj, &count)
            || !kw_as_int64(base_obj, &base_offset) || !kw_as_int64(ts_obj, &base_timestamp)
            || !kw_as_int64(seq_obj, &base_sequence) || !kw_as_int64(max_ts_obj, &max_ts))
        Py_RETURN_NOTIMPLEMENTED;
    /* compressed: decompression is Python's; a size below the header: _record_area raises;
       bounds far outside any buffer: Python's slicing rules */
    if ((attributes & 0x07) || position < 0 || position > PY_SSIZE_T_MAX / 4
            || length < 49 || length > PY_SSIZE_T_MAX / 4)
        Py_RETURN_NOTIMPLEMENTED;
    PyObject *lat_obj = (attributes & 0x08) ? max_ts_obj : Py_None;
    Py_buffer view;
    if (PyObject_GetBuffer(buf, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    /* buf[start:stop], clamped as a slice is */
    Py_ssize_t start = (Py_ssize_t)position + 61, stop = (Py_ssize_t)(position + 12 + length);
    if (start > view.len)
        start = view.len;
    if (stop > view.len)
        stop = view.len;
    if (stop < start)
        stop = start;
    /* Prefetching a few KiB ahead of the record being decoded, on into the next batch, lets
       the copies of keys and values find their bytes on the way from memory instead of
       stalling line by line (a deep read of 1 KiB records: ~25% faster). */
    /* references of our own: a record class that runs Python code could reassign the slots */
    PyObject *const known[] = {Py_NewRef(base_obj), Py_NewRef(ts_obj), Py_NewRef(seq_obj),
                               Py_NewRef(max_ts_obj)};
    PyObject *out = decode_area((const unsigned char *)view.buf + start, stop - start, count,
                                base_offset, base_timestamp, base_sequence, lat_obj, args[1],
                                args[2], view.len - start, PREFETCH_DIST, known);
    for (int i = 0; i < 4; i++)
        Py_DECREF(known[i]);
    PyBuffer_Release(&view);
    return out;
}

/*
 * -- scan_batches: FileRecords.batches()' walk over runs of v2 batches --------------------------
 *
 * iter_batches (log_stream.py) is the reference: from `position`, while more than 17 bytes are
 * left before `end`, read the size; below 14 it raises, past `end` it stops, magic 0/1 and
 * unknown magics take other paths, a v2 size below the header raises; else it makes
 * RecordBatch(buf, position) and moves on. This loop makes the same RecordBatch objects for
 * the batches that are plain cases and returns before any batch iter_batches would do anything
 * else with, so the caller hands that one to iter_batches itself: every error, legacy batch
 * and end of iteration still comes from one place.
 */

PyDoc_STRVAR(scan_batches_doc,
"scan_batches(buf, position, end, max_batches, max_bytes, batch_class, check_crc) -> list\n"
"--\n\n"
"The RecordBatch(buf, p) objects iter_batches(buf, position, end) would yield first, for as\n"
"long as they are complete magic-2 batches of a valid size inside the buffer, up to\n"
"max_batches of them, stopping once max_bytes were passed. An empty list means the batch at\n"
"position (or the end) is for iter_batches. batch_class must be the registered RecordBatch.\n"
"With check_crc true each batch's is_valid is computed here (its CRC-32C), as it would be\n"
"on first use.");

static PyObject *
scan_batches(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 7) {
        PyErr_Format(PyExc_TypeError, "scan_batches expected 7 arguments, got %zd", nargs);
        return NULL;
    }
    PyObject *buf = args[0];
    int64_t position, end, max_batches, max_bytes;
    if (!kw_as_int64(args[1], &position) || !kw_as_int64(args[2], &end)
            || !kw_as_int64(args[3], &max_batches) || !kw_as_int64(args[4], &max_bytes))
        return PyList_New(0);  /* iter_batches decides */
    if (!fc_ready(&batch_fc, args[5]))
        return PyList_New(0);
    const int check_crc = PyObject_IsTrue(args[6]);
    if (check_crc < 0)
        return NULL;
    Py_buffer view;
    if (PyObject_GetBuffer(buf, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    const unsigned char *d = (const unsigned char *)view.buf;
    /* only bytes both inside [position, end) and inside the buffer */
    const int64_t limit = end < (int64_t)view.len ? end : (int64_t)view.len;
    const int64_t first = position;
    /* each batch's position and size as read here, for the CRC pass (the buffer may be a
       shared map that changes: nothing is read twice to decide a bound) */
    struct { int64_t position, size; int valid; } *spans = NULL;
    Py_ssize_t spans_cap = 0;
    PyObject *out = PyList_New(0);
    if (out == NULL)
        goto done;
    for (int64_t n = 0; n < max_batches && position - first < max_bytes; n++) {
        const int64_t pos = position;
        /* while pos < end - 17 (in Python's ints: no overflow) */
        if (pos < 0 || limit - pos <= 17)
            break;
        const unsigned char *p = d + pos;
        const int64_t size = (int32_t)kw_be32(p + 8);
        /* size < 14 raises; past the end returns; magic != 2; v2 size below the header raises;
           a batch past the buffer (end beyond it) is for Python too */
        if (size < 14 || size > limit - pos - 12 || p[16] != 2 || size + 12 < 61)
            break;
        if (check_crc && n >= spans_cap) {
            Py_ssize_t cap = spans_cap ? spans_cap * 2 : 64;
            void *more = PyMem_Realloc(spans, (size_t)cap * sizeof(*spans));
            if (more == NULL) {
                PyErr_NoMemory();
                goto fail;
            }
            spans = more;
            spans_cap = cap;
        }
        if (check_crc) {
            spans[n].position = pos;
            spans[n].size = size;
        }
        /* RecordBatch.__init__: HEADER.unpack_from(buf, position) = ">qiibIhiqqqhii" */
        PyObject *batch = fc_alloc(&batch_fc);
        if (batch == NULL)
            goto fail;
        PyObject *v[B_N];
        v[0] = PyLong_FromLongLong((int64_t)kw_be64(p));
        v[1] = PyLong_FromLong((int32_t)kw_be32(p + 8));
        v[2] = PyLong_FromLong((int32_t)kw_be32(p + 12));
        v[3] = PyLong_FromLong((signed char)p[16]);
        v[4] = PyLong_FromUnsignedLong(kw_be32(p + 17));
        v[5] = PyLong_FromLong((int16_t)kw_be16(p + 21));
        v[6] = PyLong_FromLong((int32_t)kw_be32(p + 23));
        v[7] = PyLong_FromLongLong((int64_t)kw_be64(p + 27));
        v[8] = PyLong_FromLongLong((int64_t)kw_be64(p + 35));
        v[9] = PyLong_FromLongLong((int64_t)kw_be64(p + 43));
        v[10] = PyLong_FromLong((int16_t)kw_be16(p + 51));
        v[11] = PyLong_FromLong((int32_t)kw_be32(p + 53));
        v[12] = PyLong_FromLong((int32_t)kw_be32(p + 57));
        v[B_POSITION] = PyLong_FromLongLong(pos);
        v[B_BUF] = Py_NewRef(buf);
        v[B_VALID] = Py_NewRef(Py_None);  /* is_valid: below, when check_crc */
        int ok = 1;
        for (int f = 0; f < B_N; f++) {
            ok &= v[f] != NULL;
            FC_SET(&batch_fc, batch, f, v[f]);  /* NULL slots are fine for dealloc */
        }
        if (!ok || PyList_Append(out, batch) < 0) {
            Py_DECREF(batch);
            goto fail;
        }
        Py_DECREF(batch);
        position = pos + size + 12;
    }
    /* is_valid of each (the size is >= the v2 header, so the CRC alone decides), in a second
       pass: one C loop streaming over a run of batches already mapped reads memory far faster
       than CRCs interleaved with page faults, or one call per batch from Python, where the
       interpreter's work between calls stalls the loads. Without the GIL: the buffer is held,
       and other threads (recovery's) may run. */
    if (check_crc) {
        const Py_ssize_t n = PyList_GET_SIZE(out);
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t i = 0; i < n; i++) {
            const unsigned char *p = d + spans[i].position;
            spans[i].valid = pylogctl_crc32c(0, p + 21, (size_t)(spans[i].size - 9))
                == kw_be32(p + 17);
        }
        Py_END_ALLOW_THREADS
        for (Py_ssize_t i = 0; i < n; i++)
            Py_SETREF(FC_GET(&batch_fc, PyList_GET_ITEM(out, i), B_VALID),
                      Py_NewRef(spans[i].valid ? Py_True : Py_False));
    }
    goto done;
fail:
    Py_CLEAR(out);
done:
    PyMem_Free(spans);
    PyBuffer_Release(&view);
    return out;
}

PyDoc_STRVAR(crc32c_range_doc,
"crc32c_range(buf, start, stop) -> int\n"
"--\n\n"
"crc32c(buf[start:stop]) for non-negative start and stop (clamped as a slice is), without\n"
"the slice: RecordBatch.is_valid's check. ValueError for negative bounds.");

static PyObject *
crc32c_range(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 3) {
        PyErr_Format(PyExc_TypeError, "crc32c_range expected 3 arguments, got %zd", nargs);
        return NULL;
    }
    Py_ssize_t start = PyLong_AsSsize_t(args[1]), stop;
    if (start == -1 && PyErr_Occurred())
        return NULL;
    stop = PyLong_AsSsize_t(args[2]);
    if (stop == -1 && PyErr_Occurred())
        return NULL;
    if (start < 0 || stop < 0) {
        PyErr_SetString(PyExc_ValueError, "crc32c_range: negative bounds");
        return NULL;
    }
    Py_buffer view;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0)
        return NULL;
    if (start > view.len)
        start = view.len;
    if (stop > view.len)
        stop = view.len;
    if (stop < start)
        stop = start;
    const unsigned char *p = (const unsigned char *)view.buf + start;
    size_t n = (size_t)(stop - start);
    uint32_t crc;
    if (n > 65536) {
        Py_BEGIN_ALLOW_THREADS
        crc = pylogctl_crc32c(0, p, n);
        Py_END_ALLOW_THREADS
    }
    else {
        crc = pylogctl_crc32c(0, p, n);
    }
    PyBuffer_Release(&view);
    return PyLong_FromUnsignedLong(crc);
}

/* _crc32c.c */
void pylogctl_crc32c_init(void);
PyObject *pylogctl_crc32c_py(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
PyObject *pylogctl_crc32c_portable_py(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
extern const char pylogctl_crc32c_doc[];

/* summarize_records: included, not a source of its own (setup.py lists the translation units) */
#include "_record_summary.c"

static PyMethodDef speedups_methods[] = {
    {"decode_records", (PyCFunction)(void (*)(void))decode_records, METH_FASTCALL,
     decode_records_doc},
    {"batch_records", (PyCFunction)(void (*)(void))batch_records, METH_FASTCALL,
     batch_records_doc},
    {"scan_batches", (PyCFunction)(void (*)(void))scan_batches, METH_FASTCALL,
     scan_batches_doc},
    {"register_classes", (PyCFunction)(void (*)(void))register_classes, METH_FASTCALL,
     register_classes_doc},
    {"crc32c_range", (PyCFunction)(void (*)(void))crc32c_range, METH_FASTCALL,
     crc32c_range_doc},
    {"crc32c", (PyCFunction)(void (*)(void))pylogctl_crc32c_py, METH_FASTCALL,
     pylogctl_crc32c_doc},
    {"_crc32c_portable", (PyCFunction)(void (*)(void))pylogctl_crc32c_portable_py, METH_FASTCALL,
     "crc32c() forced onto the table-driven path (for tests)."},
    {"summarize_records", (PyCFunction)(void (*)(void))summarize_records, METH_FASTCALL,
     summarize_records_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef speedups_module = {
    PyModuleDef_HEAD_INIT,
    "pylogctl.format._speedups",
    "Optional C accelerators: record decoding, batch framing, CRC-32C and the leader's "
    "record summary.",
    -1,
    speedups_methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__speedups(void)
{
    PyObject *errors = PyImport_ImportModule("pylogctl.errors");
    if (errors == NULL)
        return NULL;
    CorruptRecordError = PyObject_GetAttrString(errors, "CorruptRecordError");
    Py_DECREF(errors);
    if (CorruptRecordError == NULL)
        return NULL;
    str_position = PyUnicode_InternFromString("position");
    if (str_position == NULL)
        return NULL;
    position_kwnames = PyTuple_Pack(1, str_position);
    if (position_kwnames == NULL)
        return NULL;
    PyObject *java_string = PyImport_ImportModule("pylogctl.format.java_string");
    if (java_string == NULL)
        return NULL;
    java_utf8 = PyObject_GetAttrString(java_string, "java_utf8");
    Py_DECREF(java_string);
    if (java_utf8 == NULL)
        return NULL;
    pylogctl_crc32c_init();
    return PyModule_Create(&speedups_module);
}
