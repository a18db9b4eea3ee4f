#ifndef SF_BROKER_H
#define SF_BROKER_H
#endif
