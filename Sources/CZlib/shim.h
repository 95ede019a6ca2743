// zlib, for its CRC-32 (the store's body checksums): several times faster than table lookups in Swift.
#include <zlib.h>
