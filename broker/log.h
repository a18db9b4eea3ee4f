#ifndef SF_LOG_H
#define SF_LOG_H
#endif
