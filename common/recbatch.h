#ifndef SF_RECBATCH_H
#define SF_RECBATCH_H
#endif
