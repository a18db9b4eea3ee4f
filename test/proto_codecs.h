/* Type-erased entry points for every message codec of common/proto.h, shared by the proto
 * unit tests and the request fuzz target: dec_<Message> and enc_<Message> take the message
 * struct as a void pointer, so a table can hold any codec. Include after proto.h. */
#ifndef SF_TEST_PROTO_CODECS_H
#define SF_TEST_PROTO_CODECS_H

#include "arena.h"
#include "buf.h"
#include "proto.h"

/* Decode into @msg (a sf_proto_<Message>_t); arena-owned memory as the codec's decode. */
typedef int (*decode_fn)(sf_rbuf_t *rb, int16_t version, sf_arena_t *arena, void *msg);
/* Encode @msg (a sf_proto_<Message>_t, borrowed) at @version. */
typedef int (*encode_fn)(sf_wbuf_t *wb, int16_t version, const void *msg);

#define SF_TEST_CODEC(M)                                                                      \
    static inline int dec_##M(sf_rbuf_t *rb, int16_t v, sf_arena_t *a, void *m) {             \
        return sf_proto_##M##_decode(rb, v, a, m);                                            \
    }                                                                                         \
    static inline int enc_##M(sf_wbuf_t *wb, int16_t v, const void *m) {                      \
        return sf_proto_##M##_encode(wb, v, m);                                               \
    }
SF_TEST_CODEC(ProduceRequest)
SF_TEST_CODEC(ProduceResponse)
SF_TEST_CODEC(FetchRequest)
SF_TEST_CODEC(FetchResponse)
SF_TEST_CODEC(ListOffsetsRequest)
SF_TEST_CODEC(ListOffsetsResponse)
SF_TEST_CODEC(MetadataRequest)
SF_TEST_CODEC(MetadataResponse)
SF_TEST_CODEC(ApiVersionsRequest)
SF_TEST_CODEC(ApiVersionsResponse)
SF_TEST_CODEC(CreateTopicsRequest)
SF_TEST_CODEC(CreateTopicsResponse)
SF_TEST_CODEC(DeleteTopicsRequest)
SF_TEST_CODEC(DeleteTopicsResponse)
SF_TEST_CODEC(DescribeConfigsRequest)
SF_TEST_CODEC(DescribeConfigsResponse)
SF_TEST_CODEC(CreatePartitionsRequest)
SF_TEST_CODEC(CreatePartitionsResponse)
SF_TEST_CODEC(AlterConfigsRequest)
SF_TEST_CODEC(AlterConfigsResponse)
SF_TEST_CODEC(IncrementalAlterConfigsRequest)
SF_TEST_CODEC(IncrementalAlterConfigsResponse)
#undef SF_TEST_CODEC

#endif
