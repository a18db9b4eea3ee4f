/* The fuzz targets' use of the consumer's record decoding (client/consumer.h). */
#ifndef SF_FUZZ_CONSUME_H
#define SF_FUZZ_CONSUME_H

#include <stdlib.h>

#include "consumer.h"

/* Decode @len bytes of fetched records from @fetch_offset as the consumer does (CRCs checked
 * with @check_crcs; read_uncommitted, then read_committed with a few aborted transactions),
 * then take every message and free them all: the chunk goes with the last one, so every
 * message is taken before the first is destroyed. */
static inline void fuzz_consume(const uint8_t *records, size_t len, int64_t fetch_offset,
                                int check_crcs) {
    static const sf_consumer_aborted_t aborted[] = {{0, 0}, {1, 2}, {-1, 0}, {1000, 5}};
    int committed;
    for (committed = 0; committed < 2; committed++) {
        sf_consumer_parse_t res;
        sf_message_t **msgs;
        size_t n, i;
        if (sf_consumer_parse_records(NULL, "fuzz", 0, records, len, fetch_offset,
                                      committed ? aborted : NULL, committed ? 4 : 0, check_crcs,
                                      4 * 1024 * 1024, &res) != SF_OK ||
            !res.chunk)
            continue;
        n = sf_consumer_chunk_remaining(res.chunk);
        if (!(msgs = malloc((n ? n : 1) * sizeof(*msgs))))
            abort();
        for (i = 0; i < n; i++)
            if (!(msgs[i] = sf_consumer_chunk_take(res.chunk)))
                abort();
        for (i = 0; i < n; i++)
            sf_message_destroy(msgs[i]);
        free(msgs);
    }
}

#endif
