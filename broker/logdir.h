#ifndef SF_LOGDIR_H
#define SF_LOGDIR_H
#endif
