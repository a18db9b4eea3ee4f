#ifndef SF_PROTO_H
#define SF_PROTO_H
#endif
