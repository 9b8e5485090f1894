/*
 * summarize_records -- what a leader's append needs to know about a batch's records, without
 * building them (part of pylogctl.format._speedups; #included by _speedups.c).
 *
 * Why: LogValidator looks at every record of every produced batch (the key of a compacted
 * topic, the CreateTime bounds, the inner offsets of a compressed batch). Building a Record
 * object per record for that cost ~3 us a record, most of a produce request's time in the
 * broker. This walk reads the same fields in place.
 *
 * Contract (pylogctl/format/record_batch.py, decode_records_py, is the reference): for a
 * record area `data` holding `count` records, return
 *     (min_timestamp_delta, max_timestamp_delta, keyless, sequential, inner_attributes)
 * -- the smallest and largest timestamp delta, how many records have a null key, whether
 * every record's offset delta equals its index, and the OR of every record's attributes byte
 * -- only when decode_records(data, count, ...) would decode the area without an error.
 * Whenever it is not sure of that (any framing, size or length problem, a varint Python would
 * read as a big int, a record count that does not fit), it returns None and the caller
 * decodes the records in full, so every error and message still comes from one place.
 * tests/format/test_fmt_record_summary.py holds it to that on generated, mutated and corpus
 * record areas; tests/fuzz covers the decoder it mirrors.
 */

#include <stdint.h>

/* A varint of at most max_bytes bytes; 0 when it is not one Python reads as an int64. */
static inline int
rsum_varint(const unsigned char *d, Py_ssize_t end, Py_ssize_t *pos, int max_bytes,
            int64_t *out)
{
    return kw_read_varint(d, end, pos, max_bytes, out) == KW_VARINT_OK;
}

/* A nullable length-prefixed field (key, value, header value); 0 on anything odd. */
static inline int
rsum_skip_bytes(const unsigned char *d, Py_ssize_t end, Py_ssize_t *pos, int64_t *len)
{
    if (*pos >= end || !rsum_varint(d, end, pos, 5, len) || *len < -1)
        return 0;
    if (*len > 0) {
        if (*len > end - *pos)
            return 0;
        *pos += (Py_ssize_t)*len;
    }
    return 1;
}

PyDoc_STRVAR(summarize_records_doc,
"summarize_records(data, count)\n"
"--\n\n"
"(min_timestamp_delta, max_timestamp_delta, keyless, sequential, inner_attributes) of a v2\n"
"record area that decode_records would decode without an error, else None.");

static PyObject *
summarize_records(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 2) {
        PyErr_Format(PyExc_TypeError, "summarize_records expected 2 arguments, got %zd", nargs);
        return NULL;
    }
    int64_t count;
    if (!PyBytes_CheckExact(args[0]) || !kw_as_int64(args[1], &count))
        Py_RETURN_NONE;
    const unsigned char *d = (const unsigned char *)PyBytes_AS_STRING(args[0]);
    const Py_ssize_t end = PyBytes_GET_SIZE(args[0]);
    if (count < 0 || count > end)  /* a record takes at least one byte */
        Py_RETURN_NONE;
    int64_t min_ts = INT64_MAX, max_ts = INT64_MIN, keyless = 0;
    int sequential = 1;
    unsigned int attributes = 0;
    Py_ssize_t pos = 0;
    for (int64_t i = 0; i < count; i++) {
        int64_t size, ts_delta, off_delta, key_len, len, headers;
        if (pos >= end || !rsum_varint(d, end, &pos, 5, &size) || size < 0
                || size > end - pos)
            Py_RETURN_NONE;
        const Py_ssize_t start = pos, stop = pos + (Py_ssize_t)size;
        if (pos >= stop)
            Py_RETURN_NONE;
        attributes |= d[pos++];
        if (pos >= stop || !rsum_varint(d, stop, &pos, 10, &ts_delta)
                || pos >= stop || !rsum_varint(d, stop, &pos, 5, &off_delta)
                || !rsum_skip_bytes(d, stop, &pos, &key_len)
                || !rsum_skip_bytes(d, stop, &pos, &len)
                || pos >= stop || !rsum_varint(d, stop, &pos, 5, &headers)
                || headers < 0 || headers > stop - pos)
            Py_RETURN_NONE;
        for (int64_t h = 0; h < headers; h++) {
            if (!rsum_skip_bytes(d, stop, &pos, &len) || len < 0
                    || !rsum_skip_bytes(d, stop, &pos, &len))
                Py_RETURN_NONE;
        }
        if (pos != start + (Py_ssize_t)size)
            Py_RETURN_NONE;
        if (ts_delta < min_ts)
            min_ts = ts_delta;
        if (ts_delta > max_ts)
            max_ts = ts_delta;
        keyless += key_len == -1;
        sequential &= off_delta == i;
    }
    if (pos != end)
        Py_RETURN_NONE;
    if (count == 0)
        min_ts = max_ts = 0;
    return Py_BuildValue("(LLLOI)", (long long)min_ts, (long long)max_ts, (long long)keyless,
                         sequential ? Py_True : Py_False, attributes);
}
