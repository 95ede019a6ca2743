#ifndef WEBCACHE_CLIBXML2_SHIM_H
#define WEBCACHE_CLIBXML2_SHIM_H

// libxml2 for the C scanner in CHTMLScan. Swift code does not import this module directly:
// libxml2's headers pull in ICU's, which clash with Foundation's copy of ICU.
#include <libxml/HTMLparser.h>

#endif
