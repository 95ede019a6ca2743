import GRDB

/// The index schema, as migrations. Invariants live in the schema: a body is either inline or
/// in a file (never both, never neither), sizes are non-negative, a key and variant appear once
/// per namespace, and per-namespace totals are kept so that capacity checks cost one row read:
/// by triggers, for connections that have them (other processes, older versions among them),
/// and by this process's own statements, whose connections run without triggers
/// (``UsageAccounting``). A migration must not rely on a trigger firing.
enum StoreSchema {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: entries and usage") { db in
            try db.execute(
                sql: """
                    CREATE TABLE entry (
                        id INTEGER PRIMARY KEY,
                        namespace TEXT NOT NULL,
                        method TEXT NOT NULL,
                        url TEXT NOT NULL,
                        host TEXT NOT NULL,
                        varyKey TEXT NOT NULL DEFAULT '',
                        status INTEGER NOT NULL CHECK (status BETWEEN 100 AND 999),
                        requestHeaders TEXT NOT NULL,
                        responseHeaders TEXT NOT NULL,
                        requestTime DOUBLE NOT NULL,
                        responseTime DOUBLE NOT NULL,
                        lastAccess DOUBLE NOT NULL,
                        bodySize INTEGER NOT NULL CHECK (bodySize >= 0),
                        bodyChecksum INTEGER NOT NULL,
                        bodyFile TEXT,
                        bodyInline BLOB,
                        appExpiry DOUBLE,
                        discardAfter DOUBLE,
                        groupName TEXT,
                        pinned BOOLEAN NOT NULL DEFAULT 0,
                        CHECK ((bodyFile IS NULL) <> (bodyInline IS NULL)),
                        CHECK (bodyInline IS NULL OR length(bodyInline) = bodySize),
                        UNIQUE (namespace, method, url, varyKey)
                    );
                    CREATE INDEX entry_lru ON entry(namespace, lastAccess) WHERE pinned = 0;
                    CREATE INDEX entry_host ON entry(namespace, host);
                    CREATE INDEX entry_group ON entry(namespace, groupName) WHERE groupName IS NOT NULL;
                    CREATE INDEX entry_discard ON entry(namespace, discardAfter) WHERE discardAfter IS NOT NULL;
                    CREATE INDEX entry_file ON entry(bodyFile) WHERE bodyFile IS NOT NULL;

                    CREATE TABLE usage (
                        namespace TEXT PRIMARY KEY,
                        entries INTEGER NOT NULL DEFAULT 0 CHECK (entries >= 0),
                        bytes INTEGER NOT NULL DEFAULT 0 CHECK (bytes >= 0)
                    );
                    CREATE TRIGGER entry_added AFTER INSERT ON entry BEGIN
                        INSERT INTO usage(namespace, entries, bytes) VALUES (NEW.namespace, 1, NEW.bodySize)
                        ON CONFLICT(namespace) DO UPDATE SET entries = entries + 1, bytes = bytes + NEW.bodySize;
                    END;
                    CREATE TRIGGER entry_removed AFTER DELETE ON entry BEGIN
                        UPDATE usage SET entries = entries - 1, bytes = bytes - OLD.bodySize
                        WHERE namespace = OLD.namespace;
                    END;
                    CREATE TRIGGER entry_resized AFTER UPDATE OF bodySize, namespace ON entry BEGIN
                        UPDATE usage SET entries = entries - 1, bytes = bytes - OLD.bodySize WHERE namespace = OLD.namespace;
                        INSERT INTO usage(namespace, entries, bytes) VALUES (NEW.namespace, 1, NEW.bodySize)
                        ON CONFLICT(namespace) DO UPDATE SET entries = entries + 1, bytes = bytes + NEW.bodySize;
                    END;
                    """)
        }
        migrator.registerMigration("v2: counters") { db in
            try db.execute(
                sql: """
                    CREATE TABLE counter (
                        namespace TEXT NOT NULL,
                        name TEXT NOT NULL,
                        value INTEGER NOT NULL DEFAULT 0,
                        PRIMARY KEY (namespace, name)
                    ) WITHOUT ROWID;
                    """)
        }
        migrator.registerMigration("v3: page manifests") { db in
            try db.execute(
                sql: """
                    CREATE TABLE manifest (
                        namespace TEXT NOT NULL,
                        name TEXT NOT NULL,
                        createdAt DOUBLE NOT NULL,
                        complete BOOLEAN NOT NULL,
                        PRIMARY KEY (namespace, name)
                    ) WITHOUT ROWID;
                    CREATE TABLE manifestMember (
                        namespace TEXT NOT NULL,
                        manifest TEXT NOT NULL,
                        position INTEGER NOT NULL,
                        url TEXT NOT NULL,
                        PRIMARY KEY (namespace, manifest, url),
                        FOREIGN KEY (namespace, manifest) REFERENCES manifest(namespace, name) ON DELETE CASCADE
                    ) WITHOUT ROWID;
                    CREATE INDEX manifestMember_url ON manifestMember(namespace, url);
                    """)
        }
        migrator.registerMigration("v4: origin reachability") { db in
            try db.execute(
                sql: """
                    CREATE TABLE originStatus (
                        namespace TEXT NOT NULL,
                        origin TEXT NOT NULL,
                        failures INTEGER NOT NULL CHECK (failures > 0),
                        unreachableSince DOUBLE NOT NULL,
                        retryAfter DOUBLE NOT NULL,
                        lastError TEXT NOT NULL,
                        PRIMARY KEY (namespace, origin)
                    ) WITHOUT ROWID;
                    """)
        }
        migrator.registerMigration("v5: no index on body file names") { db in
            // Only recovery reads body file names, and it reads every row; the index cost a
            // random leaf page on every insert and removal.
            try db.execute(sql: "DROP INDEX IF EXISTS entry_file")
        }
        migrator.registerMigration("v6: new rows counted per transaction") { db in
            // The trigger's upsert of `usage` ran for every new row, about 1.8 µs of a row's 23
            // in SQLite (docs/Benchmarks.md, "The index writer's rows counted per transaction").
            // Rows this writer inserts say they are counted already (`countedByWriter`), and the
            // writer adds each transaction's rows to `usage` at once; a writer from before this
            // migration (an older version on the same directory) inserts without the column,
            // and the trigger counts its rows as before.
            try db.execute(
                sql: """
                    ALTER TABLE entry ADD COLUMN countedByWriter BOOLEAN NOT NULL DEFAULT 0;
                    DROP TRIGGER IF EXISTS entry_added;
                    CREATE TRIGGER entry_added AFTER INSERT ON entry WHEN NOT NEW.countedByWriter BEGIN
                        INSERT INTO usage(namespace, entries, bytes) VALUES (NEW.namespace, 1, NEW.bodySize)
                        ON CONFLICT(namespace) DO UPDATE SET entries = entries + 1, bytes = bytes + NEW.bodySize;
                    END;
                    """)
        }
        return migrator
    }
}
