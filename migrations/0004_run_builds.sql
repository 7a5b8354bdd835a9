-- The build each run started on (issue 31, src/host/run-build.ts): its JSON text (id, engine,
-- lua, config, prompt, packs), or null for a run started before builds were kept. GET /runs
-- lists it on each row. Rows written before it read as null.
ALTER TABLE runs ADD COLUMN build TEXT;
