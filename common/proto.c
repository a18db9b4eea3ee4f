/* Request and response headers over the generated codec. */
#include "proto.h"

const char *sf_proto_api_name(int16_t api_key) {
    const sf_proto_spec_t *spec = sf_proto_spec_get(api_key);
    return spec ? spec->Name : "Unknown";
}

int sf_proto_version_flexible(int16_t api_key, int16_t version) {
    const sf_proto_spec_t *spec = sf_proto_spec_get(api_key);
    return spec && spec->FlexibleMin >= 0 && version >= spec->FlexibleMin;
}

/* Response header v1 follows the flexible versions of every API except ApiVersions, whose
 * response header stays v0 so a client can always read the reply to its first request
 * (KIP-511). */
static int response_header_flexible(int16_t api_key, int16_t api_version) {
    return api_key != SF_PROTO_API_ApiVersions && sf_proto_version_flexible(api_key, api_version);
}

/* Request header v0 (no client id) is used only by ControlledShutdown v0. */
static int request_header_v0(int16_t api_key, int16_t api_version) {
    return api_key == SF_PROTO_API_ControlledShutdown && api_version == 0;
}

int sf_proto_RequestHeader_decode(sf_rbuf_t *rb, sf_proto_RequestHeader_t *hdr) {
    hdr->RequestApiKey = sf_rbuf_i16(rb);
    hdr->RequestApiVersion = sf_rbuf_i16(rb);
    hdr->CorrelationId = sf_rbuf_i32(rb);
    if (request_header_v0(hdr->RequestApiKey, hdr->RequestApiVersion)) {
        hdr->ClientId.p = NULL;
        hdr->ClientId.len = -1;
    } else {
        hdr->ClientId = sf_rbuf_string(rb, 1); /* a classic STRING in header v2 too */
    }
    if (sf_proto_version_flexible(hdr->RequestApiKey, hdr->RequestApiVersion)) {
        size_t body = rb->pos;
        sf_rbuf_skip_tags(rb);
        /* An ApiVersions request of a version newer than the codec may come with header v1
         * (a client probing): its body is not read, so take what follows as the body
         * rather than refuse it (KIP-511 keeps ApiVersions answerable at any version). */
        if (rb->err && hdr->RequestApiKey == SF_PROTO_API_ApiVersions &&
            hdr->RequestApiVersion > sf_proto_spec_get(SF_PROTO_API_ApiVersions)->MaxVersion) {
            rb->err = SF_OK;
            rb->pos = body;
        }
    }
    return rb->err ? SF_ERR_MALFORMED : SF_OK;
}

int sf_proto_RequestHeader_encode(sf_wbuf_t *wb, const sf_proto_RequestHeader_t *hdr) {
    sf_wbuf_i16(wb, hdr->RequestApiKey);
    sf_wbuf_i16(wb, hdr->RequestApiVersion);
    sf_wbuf_i32(wb, hdr->CorrelationId);
    if (!request_header_v0(hdr->RequestApiKey, hdr->RequestApiVersion))
        sf_wbuf_string(wb, hdr->ClientId);
    if (sf_proto_version_flexible(hdr->RequestApiKey, hdr->RequestApiVersion))
        sf_wbuf_tags_empty(wb);
    return wb->err;
}

void sf_proto_ResponseHeader_encode(sf_wbuf_t *wb, int16_t api_key, int16_t api_version,
                                    int32_t correlation_id) {
    sf_wbuf_i32(wb, correlation_id);
    if (response_header_flexible(api_key, api_version))
        sf_wbuf_tags_empty(wb);
}

int sf_proto_ResponseHeader_decode(sf_rbuf_t *rb, int16_t api_key, int16_t api_version,
                                   int32_t *corr) {
    *corr = sf_rbuf_i32(rb);
    if (response_header_flexible(api_key, api_version))
        sf_rbuf_skip_tags(rb);
    return rb->err ? SF_ERR_MALFORMED : SF_OK;
}
