#ifndef COURIER_ZLIB_SHIM_H
#define COURIER_ZLIB_SHIM_H
#include <zlib.h>
#endif
