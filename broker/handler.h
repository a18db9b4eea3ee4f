#ifndef SF_HANDLER_H
#define SF_HANDLER_H
#endif
