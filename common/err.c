#include "err.h"

#include <stdarg.h>
#include <stdio.h>

sf_kerr_t sf_err_to_kerr(int err, sf_err_op_t op) {
    switch (err) {
    case SF_OK: return SF_KERR_NONE;
    case SF_ERR_MALFORMED:
    case SF_ERR_CORRUPT:
        return op == SF_ERR_OP_APPEND || op == SF_ERR_OP_READ ? SF_KERR_CORRUPT_MESSAGE
                                                              : SF_KERR_INVALID_REQUEST;
    case SF_ERR_TOOLARGE:
        return op == SF_ERR_OP_APPEND ? SF_KERR_MESSAGE_TOO_LARGE : SF_KERR_INVALID_REQUEST;
    case SF_ERR_RECORD: return SF_KERR_INVALID_RECORD;
    case SF_ERR_CODEC: return SF_KERR_UNSUPPORTED_COMPRESSION_TYPE;
    case SF_ERR_TIMESTAMP: return SF_KERR_INVALID_TIMESTAMP;
    case SF_ERR_SEQUENCE: return SF_KERR_OUT_OF_ORDER_SEQUENCE_NUMBER;
    case SF_ERR_DUPLICATE: return SF_KERR_DUPLICATE_SEQUENCE_NUMBER;
    case SF_ERR_PRODUCER_EPOCH: return SF_KERR_INVALID_PRODUCER_EPOCH;
    case SF_ERR_COORDINATOR_FENCED: return SF_KERR_TRANSACTION_COORDINATOR_FENCED;
    case SF_ERR_TXN_STATE: return SF_KERR_INVALID_TXN_STATE;
    case SF_ERR_IO:
        switch (op) {
        case SF_ERR_OP_APPEND:
        case SF_ERR_OP_READ: return SF_KERR_KAFKA_STORAGE_ERROR;
        /* Admin writes fail with I/O errors when ZooKeeper is unreachable: the client may
         * retry (Kafka answers REQUEST_TIMED_OUT then). */
        case SF_ERR_OP_TOPIC:
        case SF_ERR_OP_PARTITIONS:
        case SF_ERR_OP_CONFIG: return SF_KERR_REQUEST_TIMED_OUT;
        default: return SF_KERR_UNKNOWN_SERVER_ERROR;
        }
    case SF_ERR_NOTFOUND: return SF_KERR_UNKNOWN_TOPIC_OR_PARTITION;
    case SF_ERR_EXISTS: return SF_KERR_TOPIC_ALREADY_EXISTS;
    case SF_ERR_UNSUPPORTED:
        return op == SF_ERR_OP_APPEND ? SF_KERR_UNSUPPORTED_FOR_MESSAGE_FORMAT
                                      : SF_KERR_UNSUPPORTED_VERSION;
    case SF_ERR_RANGE: return SF_KERR_OFFSET_OUT_OF_RANGE;
    case SF_ERR_INVALID:
        switch (op) {
        case SF_ERR_OP_TOPIC: return SF_KERR_INVALID_REPLICATION_FACTOR;
        case SF_ERR_OP_PARTITIONS: return SF_KERR_INVALID_PARTITIONS;
        case SF_ERR_OP_CONFIG: return SF_KERR_INVALID_CONFIG;
        default: return SF_KERR_INVALID_REQUEST;
        }
    case SF_ERR_STATE: return SF_KERR_NOT_CONTROLLER;
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
    case SF_ERR_RECORD: return "invalid record";
    case SF_ERR_CODEC: return "compression codec not allowed";
    case SF_ERR_TIMESTAMP: return "timestamp out of range";
    case SF_ERR_SEQUENCE: return "out of sequence";
    case SF_ERR_DUPLICATE: return "duplicate batch";
    case SF_ERR_PRODUCER_EPOCH: return "fenced producer epoch";
    case SF_ERR_COORDINATOR_FENCED: return "fenced transaction coordinator epoch";
    case SF_ERR_TXN_STATE: return "not part of the producer's transaction";
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
