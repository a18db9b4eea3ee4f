#ifndef SF_TLS_H
#define SF_TLS_H
#endif
