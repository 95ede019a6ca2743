#include "html_scan.h"

#include <ctype.h>
#include <libxml/HTMLparser.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>
#include <stdlib.h>
#include <string.h>

static void ignore_error(void *context, const char *message, ...) {
    (void)context;
    (void)message;
}

static void lower(char *text) {
    for (; *text; text++) *text = (char)tolower((unsigned char)*text);
}

static void visit_element(xmlNodePtr node, void *context, webcache_element_visitor visit) {
    int count = 0;
    for (xmlAttrPtr attribute = node->properties; attribute; attribute = attribute->next) count++;
    char **pairs = calloc((size_t)(count * 2 + 1), sizeof(char *));
    if (!pairs) return;
    int index = 0;
    for (xmlAttrPtr attribute = node->properties; attribute; attribute = attribute->next) {
        xmlChar *value = xmlNodeListGetString(node->doc, attribute->children, 1);
        pairs[index] = strdup(attribute->name ? (const char *)attribute->name : "");
        pairs[index + 1] = strdup(value ? (const char *)value : "");
        if (value) xmlFree(value);
        if (pairs[index]) lower(pairs[index]);
        index += 2;
    }
    char *name = strdup(node->name ? (const char *)node->name : "");
    char *parent = strdup(node->parent && node->parent->type == XML_ELEMENT_NODE && node->parent->name
        ? (const char *)node->parent->name : "");
    if (name && parent && index == count * 2) {
        lower(name);
        lower(parent);
        xmlChar *text = strcmp(name, "style") == 0 ? xmlNodeGetContent(node) : NULL;
        int complete = 1;
        for (int i = 0; i < count * 2; i++) complete = complete && pairs[i];
        if (complete) visit(context, name, parent, (const char *const *)pairs, count, (const char *)text);
        if (text) xmlFree(text);
    }
    free(name);
    free(parent);
    for (int i = 0; i < count * 2; i++) free(pairs[i]);
    free(pairs);
}

static void walk(xmlNodePtr node, void *context, webcache_element_visitor visit) {
    for (; node; node = node->next) {
        if (node->type == XML_ELEMENT_NODE) {
            visit_element(node, context, visit);
            walk(node->children, context, visit);
        }
    }
}

int webcache_scan_html(const char *bytes, int length, const char *url, void *context, webcache_element_visitor visit) {
    xmlSetGenericErrorFunc(NULL, ignore_error);
    xmlSetStructuredErrorFunc(NULL, NULL);
    int options = HTML_PARSE_RECOVER | HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING | HTML_PARSE_NONET;
    htmlDocPtr document = htmlReadMemory(bytes, length, url, NULL, options);
    if (!document) return -1;
    walk(xmlDocGetRootElement(document), context, visit);
    xmlFreeDoc(document);
    return 0;
}
