#include <sqlite3.h>

#include "sqlite_settings.h"

int webcache_sqlite_set_triggers(struct sqlite3 *connection, int enabled) {
    int inForce = -1;
    if (sqlite3_db_config(connection, SQLITE_DBCONFIG_ENABLE_TRIGGER, enabled, &inForce) != SQLITE_OK) return -1;
    return inForce;
}
