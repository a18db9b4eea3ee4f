/* Fuzz target for what the client reads from a broker.
 *
 * Input: the request's API key and version (two big-endian int16), then a response frame
 * without its 4-byte size prefix (response header, then body), as client/conn.c receives it.
 * The header is decoded with the client's header-version rule, the body with the generated
 * response decoder of that API and version (arena capped as the client's memory is not, to
 * keep a hostile count from passing unnoticed: 4x the input plus 64 KiB), and the records of
 * every partition of a Fetch response go through the consumer's record decoding, whose
 * messages are then freed.
 *
 * A libFuzzer target or a corpus replay (replay.h; CI replays test/fuzz/corpus-client). */
#include <stdio.h>
#include <stdlib.h>

#include "arena.h"
#include "buf.h"
#include "consume.h"
#include "err.h"
#include "proto.h"
#include "replay.h"

const char sf_fuzz_name[] = "fuzz_client";

static void fetch_records(const sf_proto_FetchResponse_t *fr) {
    int32_t t, p;
    for (t = 0; t < fr->ResponsesCount; t++)
        for (p = 0; p < fr->Responses[t].PartitionsCount; p++) {
            const sf_proto_FetchResponse_PartitionData_t *pd = &fr->Responses[t].Partitions[p];
            if (pd->Records.len > 0)
                fuzz_consume(pd->Records.p, (size_t)pd->Records.len,
                             pd->LogStartOffset > 0 ? pd->LogStartOffset : 0, 1);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const sf_proto_spec_t *spec;
    int16_t key, version;
    int32_t corr;
    sf_arena_t arena;
    sf_rbuf_t rb;
    void *msg;
    if (size < 4)
        return 0;
    key = (int16_t)sf_load_be16(data);
    version = (int16_t)sf_load_be16(data + 2);
    if (!(spec = sf_proto_spec_get(key)) || version < spec->MinVersion ||
        version > spec->MaxVersion)
        return 0;
    sf_rbuf_init(&rb, data + 4, size - 4);
    if (sf_proto_ResponseHeader_decode(&rb, key, version, &corr) != SF_OK)
        return 0;
    if (!(msg = calloc(1, spec->ResponseSize)))
        abort();
    sf_arena_init(&arena, 4 * size + 64 * 1024);
    if (spec->ResponseDecode(&rb, version, &arena, msg) == SF_OK) {
        if (rb.pos > size - 4)
            abort();
        if (key == SF_PROTO_API_Fetch)
            fetch_records(msg);
    }
    sf_arena_reset(&arena);
    free(msg);
    return 0;
}
