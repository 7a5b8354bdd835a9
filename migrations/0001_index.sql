-- The index of runs and asks behind GET /runs and GET /asks (src/worker/run-index.ts).
-- The run objects are the source of truth; each writes its rows here through its outbox
-- (src/worker/outbox.ts), with `version` rising on every change, so a write that arrives
-- late (a retried delivery) never replaces a newer row.

CREATE TABLE runs (
  run_id TEXT NOT NULL PRIMARY KEY,
  prompt TEXT NOT NULL,
  status TEXT NOT NULL,
  created_at TEXT NOT NULL,
  ended_at TEXT,
  pending_count INTEGER NOT NULL DEFAULT 0,
  version INTEGER NOT NULL
) WITHOUT ROWID;

-- GET /runs, newest first, with no filter, by prompt, by status, by both.
CREATE INDEX runs_by_created ON runs (created_at, run_id);
CREATE INDEX runs_by_prompt ON runs (prompt, created_at, run_id);
CREATE INDEX runs_by_status ON runs (status, created_at, run_id);
CREATE INDEX runs_by_prompt_status ON runs (prompt, status, created_at, run_id);

CREATE TABLE asks (
  run_id TEXT NOT NULL,
  ask_id TEXT NOT NULL,
  prompt TEXT NOT NULL,
  task TEXT NOT NULL,
  question TEXT,
  choices TEXT,            -- a JSON array of strings, or NULL for any answer
  asked_at TEXT NOT NULL,
  expires_at TEXT,
  status TEXT NOT NULL,    -- pending | answered | expired | cancelled
  answered_by TEXT,
  closed_at TEXT,
  version INTEGER NOT NULL,
  PRIMARY KEY (run_id, ask_id)
) WITHOUT ROWID;

-- GET /asks by status (pending oldest first, the others newest first), and by prompt too.
CREATE INDEX asks_by_status ON asks (status, asked_at, run_id, ask_id);
CREATE INDEX asks_by_prompt_status ON asks (prompt, status, asked_at, run_id, ask_id);
