-- Keys with scopes (src/worker/keys/key-store.ts): made, listed and revoked by the root
-- (RUNVIL_API_TOKEN). A key's text is never stored: `digest` is its SHA-256 (hex), and a
-- request's key is found by the digest of what it sends.

CREATE TABLE keys (
  id TEXT NOT NULL PRIMARY KEY,
  name TEXT NOT NULL,
  scopes TEXT NOT NULL,        -- a JSON array of scopes (keys/scopes.ts)
  digest TEXT NOT NULL UNIQUE, -- SHA-256 of the key's text, hex
  created_at TEXT NOT NULL,
  last_used_at TEXT,           -- written at most once a minute per key
  revoked_at TEXT
) WITHOUT ROWID;

-- GET /keys, oldest first.
CREATE INDEX keys_by_created ON keys (created_at, id);
