#ifndef WEBCACHE_HTML_SCAN_H
#define WEBCACHE_HTML_SCAN_H

/// Called for every element of a parsed HTML document, in document order.
/// `attributes` holds `attribute_count` name/value pairs, flattened (name, value, name, value…);
/// names are lower case. `text` is the element's text content for `<style>`, otherwise NULL.
/// `parent` is the parent element's name, or "" at the root.
typedef void (*webcache_element_visitor)(
    void *context, const char *name, const char *parent, const char *const *attributes, int attribute_count,
    const char *text);

/// Parses `length` bytes of HTML with libxml2's recovering HTML parser (the encoding comes from
/// `<meta charset>` or defaults to UTF-8/Latin-1 detection) and visits every element. Returns 0,
/// or -1 when nothing could be parsed.
int webcache_scan_html(const char *bytes, int length, const char *url, void *context, webcache_element_visitor visit);

#endif
