"""The SQLite results store and its append-only migrations."""
