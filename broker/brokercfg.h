#ifndef SF_BROKERCFG_H
#define SF_BROKERCFG_H
#endif
