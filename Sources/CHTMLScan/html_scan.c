#include "html_scan.h"

#include <ctype.h>
#include <libxml/HTMLparser.h>
#include <libxml/parserInternals.h>
#include <libxml/xmlerror.h>
#include <stdlib.h>
#include <string.h>

/* The document is read as a stream of SAX events (no tree is built): what it costs is its
   references and the depth of its nesting, not its size, and nothing recurses, so a document
   nested hundreds of thousands of elements deep neither exhausts the stack nor stops the scan. */

typedef struct {
    void *context;
    webcache_element_visitor visit;
    /* The names of the open elements in lower case, outermost first. */
    char **open;
    size_t depth;
    size_t capacity;
    /* A `<style>` element seen, visited at its end with its text. */
    int in_style;
    char **style_attributes;
    int style_attribute_count;
    char *style_parent;
    char *style_text;
    size_t style_length;
    /* Memory ran out: the rest of the document is not visited. */
    int failed;
} scan_state;

static void ignore_error(void *context, const char *message, ...) {
    (void)context;
    (void)message;
}

static void lower(char *text) {
    for (; *text; text++) *text = (char)tolower((unsigned char)*text);
}

static void free_pairs(char **pairs, int count) {
    if (!pairs) return;
    for (int i = 0; i < count * 2; i++) free(pairs[i]);
    free(pairs);
}

/* The attributes as name/value pairs of copies, names in lower case; NULL when memory ran out. */
static char **copy_pairs(const xmlChar **atts, int *count) {
    int pairs_count = 0;
    if (atts)
        for (; atts[2 * pairs_count]; pairs_count++) {}
    char **pairs = calloc((size_t)pairs_count * 2 + 1, sizeof(char *));
    if (!pairs) return NULL;
    for (int i = 0; i < pairs_count; i++) {
        const xmlChar *value = atts[2 * i + 1];
        pairs[2 * i] = strdup((const char *)atts[2 * i]);
        pairs[2 * i + 1] = strdup(value ? (const char *)value : "");
        if (!pairs[2 * i] || !pairs[2 * i + 1]) {
            free_pairs(pairs, pairs_count);
            return NULL;
        }
        lower(pairs[2 * i]);
    }
    *count = pairs_count;
    return pairs;
}

static const char *parent_name(const scan_state *state) {
    return state->depth > 0 ? state->open[state->depth - 1] : "";
}

static void end_style(scan_state *state) {
    if (!state->in_style) return;
    state->visit(state->context, "style", state->style_parent, (const char *const *)state->style_attributes,
        state->style_attribute_count, state->style_text ? state->style_text : "");
    free_pairs(state->style_attributes, state->style_attribute_count);
    free(state->style_parent);
    free(state->style_text);
    state->in_style = 0;
    state->style_attributes = NULL;
    state->style_attribute_count = 0;
    state->style_parent = NULL;
    state->style_text = NULL;
    state->style_length = 0;
}

static void start_element(void *context, const xmlChar *name, const xmlChar **atts) {
    scan_state *state = context;
    if (state->failed || !name) return;
    end_style(state);
    char *lowered = strdup((const char *)name);
    int count = 0;
    char **pairs = copy_pairs(atts, &count);
    if (!lowered || !pairs) {
        free(lowered);
        state->failed = 1;
        return;
    }
    lower(lowered);
    if (strcmp(lowered, "style") == 0) {
        state->style_parent = strdup(parent_name(state));
        if (!state->style_parent) {
            free(lowered);
            free_pairs(pairs, count);
            state->failed = 1;
            return;
        }
        state->in_style = 1;
        state->style_attributes = pairs;
        state->style_attribute_count = count;
    } else {
        state->visit(state->context, lowered, parent_name(state), (const char *const *)pairs, count, NULL);
        free_pairs(pairs, count);
    }
    if (state->depth == state->capacity) {
        size_t capacity = state->capacity ? state->capacity * 2 : 64;
        char **grown = realloc(state->open, capacity * sizeof(*grown));
        if (!grown) {
            free(lowered);
            state->failed = 1;
            return;
        }
        state->open = grown;
        state->capacity = capacity;
    }
    state->open[state->depth++] = lowered;
}

static void end_element(void *context, const xmlChar *name) {
    (void)name;
    scan_state *state = context;
    if (state->failed) return;
    end_style(state);
    if (state->depth > 0) free(state->open[--state->depth]);
}

static void text(void *context, const xmlChar *bytes, int length) {
    scan_state *state = context;
    if (state->failed || !state->in_style || length <= 0) return;
    char *grown = realloc(state->style_text, state->style_length + (size_t)length + 1);
    if (!grown) {
        state->failed = 1;
        return;
    }
    memcpy(grown + state->style_length, bytes, (size_t)length);
    state->style_length += (size_t)length;
    grown[state->style_length] = 0;
    state->style_text = grown;
}

int webcache_scan_html(const char *bytes, int length, const char *url, void *context, webcache_element_visitor visit) {
    xmlSetGenericErrorFunc(NULL, ignore_error);
    xmlSetStructuredErrorFunc(NULL, NULL);
    xmlSAXHandler handler;
    memset(&handler, 0, sizeof(handler));
    handler.startElement = start_element;
    handler.endElement = end_element;
    handler.characters = text;
    handler.cdataBlock = text;
    handler.warning = ignore_error;
    handler.error = ignore_error;
    handler.fatalError = ignore_error;
    scan_state state;
    memset(&state, 0, sizeof(state));
    state.context = context;
    state.visit = visit;
    /* As htmlReadMemory makes its parser (so that bytes are taken as UTF-8 until `<meta charset>`
       or a byte that is not UTF-8 says otherwise), with libxml2's way to read a document with a
       handler of one's own (htmlSAXParseFile): the parser's handler is swapped for ours while it
       parses, and put back before it is freed. */
    htmlParserCtxtPtr parser = xmlCreateMemoryParserCtxt(bytes, length);
    if (!parser) return -1;
    xmlSAXHandlerPtr own_handler = parser->sax;
    parser->sax = &handler;
    parser->userData = &state;
    /* HUGE lifts the parser's limit of 256 open elements, past which it stopped reading. */
    htmlCtxtUseOptions(parser,
        HTML_PARSE_RECOVER | HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING | HTML_PARSE_NONET | XML_PARSE_HUGE);
    parser->html = 1;
    if (url && parser->input && !parser->input->filename) parser->input->filename = (char *)xmlStrdup((const xmlChar *)url);
    htmlParseDocument(parser);
    parser->sax = own_handler;
    parser->userData = NULL;
    if (!state.failed) end_style(&state);
    xmlFreeParserCtxt(parser);
    free_pairs(state.style_attributes, state.style_attribute_count);
    free(state.style_parent);
    free(state.style_text);
    while (state.depth > 0) free(state.open[--state.depth]);
    free(state.open);
    return state.failed ? -1 : 0;
}
