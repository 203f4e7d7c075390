#ifndef COURIER_NIO_ZLIB_SHIM_H
#define COURIER_NIO_ZLIB_SHIM_H
#include <zlib.h>
#endif
