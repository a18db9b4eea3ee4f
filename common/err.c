#include "err.h"

#include <stdarg.h>
#include <stdio.h>

sf_kerr_t sf_err_to_kerr(int err) {
    switch (err) {
    case SF_OK: return SF_KERR_NONE;
    case SF_ERR_MALFORMED: return SF_KERR_INVALID_REQUEST;
    case SF_ERR_CORRUPT: return SF_KERR_CORRUPT_MESSAGE;
    case SF_ERR_TOOLARGE: return SF_KERR_MESSAGE_TOO_LARGE;
    case SF_ERR_IO: return SF_KERR_KAFKA_STORAGE_ERROR;
    case SF_ERR_NOTFOUND: return SF_KERR_UNKNOWN_TOPIC_OR_PARTITION;
    case SF_ERR_EXISTS: return SF_KERR_TOPIC_ALREADY_EXISTS;
    case SF_ERR_UNSUPPORTED: return SF_KERR_UNSUPPORTED_VERSION;
    case SF_ERR_RANGE: return SF_KERR_OFFSET_OUT_OF_RANGE;
    case SF_ERR_INVALID: return SF_KERR_INVALID_REQUEST;
    default: return SF_KERR_UNKNOWN_SERVER_ERROR;
    }
}

const char *sf_err_str(int err) {
    switch (err) {
    case SF_OK: return "success";
    case SF_AGAIN: return "need more data";
    case SF_ERR_NOMEM: return "out of memory";
    case SF_ERR_MALFORMED: return "malformed input";
    case SF_ERR_TOOLARGE: return "too large";
    case SF_ERR_IO: return "I/O error";
    case SF_ERR_CORRUPT: return "corrupt data";
    case SF_ERR_INVALID: return "invalid argument";
    case SF_ERR_NOTFOUND: return "not found";
    case SF_ERR_EXISTS: return "already exists";
    case SF_ERR_UNSUPPORTED: return "unsupported";
    case SF_ERR_RANGE: return "out of range";
    case SF_ERR_STATE: return "invalid state";
    default: return "unknown error";
    }
}

void sf_errf(char *errstr, size_t size, const char *fmt, ...) {
    va_list ap;
    if (!errstr || size == 0)
        return;
    va_start(ap, fmt);
    vsnprintf(errstr, size, fmt, ap);
    va_end(ap);
}
