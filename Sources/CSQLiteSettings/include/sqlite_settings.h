#ifndef WEBCACHE_SQLITE_SETTINGS_H
#define WEBCACHE_SQLITE_SETTINGS_H

struct sqlite3;

/// Turns triggers on (`enabled` 1) or off (0) for statements this connection prepares from now on
/// (`sqlite3_db_config` with `SQLITE_DBCONFIG_ENABLE_TRIGGER`, a variadic call Swift cannot make);
/// other connections to the same database keep their own setting. Returns the setting in force
/// afterwards (1 or 0), or -1 when SQLite refused it.
int webcache_sqlite_set_triggers(struct sqlite3 *connection, int enabled);

#endif
