/* ApiVersions: the version ranges of the dispatch table. */
#include "dispatch.h"

void sf_kapi_ApiVersions(sf_kreq_t *kr, void *msg) {
    sf_proto_ApiVersionsResponse_t resp;
    size_t n, i;
    const sf_kapi_t *apis = sf_kapi_all(&n);
    sf_proto_ApiVersionsResponse_init(&resp);
    if (!msg) {
        const sf_kapi_t *own = NULL;
        for (i = 0; i < n; i++)
            if (apis[i].key == SF_PROTO_API_ApiVersions)
                own = &apis[i];
        if (kr->version >= own->min && kr->version <= own->max) {
            /* The client software fields did not decode. */
            resp.ErrorCode = SF_KERR_INVALID_REQUEST;
        } else {
            /* A version this broker does not know: a v0 body with UNSUPPORTED_VERSION and
             * ApiVersions' own range, so the client retries with one both speak. */
            resp.ErrorCode = SF_KERR_UNSUPPORTED_VERSION;
            resp.ApiKeys = sf_kreq_alloc(kr, 1, sizeof(*resp.ApiKeys));
            if (!resp.ApiKeys) {
                sf_kreq_close(kr, "no memory");
                return;
            }
            resp.ApiKeysCount = 1;
            resp.ApiKeys[0].ApiKey = own->key;
            resp.ApiKeys[0].MinVersion = own->min;
            resp.ApiKeys[0].MaxVersion = own->max;
            kr->version = 0;
        }
        sf_kreq_respond(kr, &resp);
        return;
    }
    resp.ApiKeys = sf_kreq_alloc(kr, n, sizeof(*resp.ApiKeys));
    if (!resp.ApiKeys) {
        sf_kreq_close(kr, "no memory");
        return;
    }
    for (i = 0; i < n; i++) {
        sf_proto_ApiVersionsResponse_ApiVersion_init(&resp.ApiKeys[i]);
        resp.ApiKeys[i].ApiKey = apis[i].key;
        resp.ApiKeys[i].MinVersion = apis[i].min;
        resp.ApiKeys[i].MaxVersion = apis[i].max;
    }
    resp.ApiKeysCount = (int32_t)n;
    sf_kreq_respond(kr, &resp);
}
